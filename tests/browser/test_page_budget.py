"""The page's first-load budget (the issue's performance point), checked in the real browser on every run:
at most 150 KB transferred (bodies and headers, nothing compressed on the local stack), at most 6 API
requests before the page is usable, nothing from another origin (no CDN), and no failed request.
`make bench` prints the same figures with the time to usable (scripts/bench_page.py)."""

from __future__ import annotations

from playwright.sync_api import Browser

from scripts.page_load import measure_first_load
from tests.browser.conftest import new_user
from tests.local_stack import StackClient

BUDGET_BYTES = 150 * 1024
BUDGET_API_REQUESTS = 6


def _summary(load) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(f"{f.method} {f.url} {f.status} {f.body_bytes}+{f.header_bytes}" for f in load.fetched)


def test_first_load_of_a_new_user_is_within_budget(browser: Browser, stack: StackClient) -> None:
    load = measure_first_load(browser, stack.url, stack.token(new_user("budget")))
    assert load.failed == []
    assert load.other_origins == [], load.other_origins
    assert load.total_bytes <= BUDGET_BYTES, _summary(load)
    assert 1 <= len(load.api_requests) <= BUDGET_API_REQUESTS, _summary(load)
    # The page's own files came from this origin and were actually used (the measure is not vacuous).
    paths = {f.url.removeprefix(stack.url) for f in load.fetched}
    assert {"/skills/", "/skills/app.js", "/skills/vendor/preact.module.js"} <= paths, sorted(paths)
    # No 404 either: the first load asks for the profile with PUT /rpc/me {"initialTimezone"}, never GET first.
    assert all(f.status < 400 for f in load.fetched), _summary(load)


def test_first_load_of_a_returning_user_is_within_budget(browser: Browser, stack: StackClient) -> None:
    user = new_user("budget")
    token = stack.token(user)
    assert stack.call("PUT", "/rpc/me", {"timezone": "Asia/Shanghai"}, token=token)[0] in (200, 201)
    assert stack.call("POST", "/rpc/agents", {"name": "Mika"}, token=token)[0] == 201
    load = measure_first_load(browser, stack.url, token)
    assert load.failed == []
    assert load.other_origins == []
    assert load.total_bytes <= BUDGET_BYTES, _summary(load)
    assert 1 <= len(load.api_requests) <= BUDGET_API_REQUESTS, _summary(load)
    assert all(f.status < 400 for f in load.fetched), _summary(load)
