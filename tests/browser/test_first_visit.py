"""A person's first visit, from the stack's root to the signed-in page: `/` leads to the page, the page has an icon,
and nothing answers 4xx or logs an error on the way. The first load of a session asks for the profile with
`PUT /rpc/me {"initialTimezone"}` (which creates a new user's profile in the browser's zone, with the default daily
memory job): no `GET /rpc/me` 404 before the profile exists. A reload only reads it; a later session of the same user
changes nothing of it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.conftest import TIMEOUT_MS, PageApi
from tests.local_stack import StackClient

ZONE = "Europe/Paris"


@pytest.fixture
def context(browser: Browser, stack: StackClient) -> Iterator[BrowserContext]:
    """A browser in another zone than the server's default (Asia/Shanghai)."""
    context = browser.new_context(base_url=stack.url, timezone_id=ZONE, locale="zh-CN",
                                  viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


class Recorder:
    def __init__(self, page: Page) -> None:
        self.responses: list[tuple[str, str, int]] = []
        self.errors: list[str] = []
        page.on("response", lambda r: self.responses.append((r.request.method, r.url, r.status)))
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def api(self, method: str, path: str) -> list[int]:
        return [status for m, url, status in self.responses if m == method and url.split("?")[0].endswith(path)]

    def failed(self) -> list[tuple[str, str, int]]:
        return [r for r in self.responses if r[2] >= 400]


def sign_in_from_root(page: Page, user: str) -> None:
    page.goto("/")
    page.wait_for_url("**/_local/login**")
    page.get_by_label("用户名").fill(user)
    page.get_by_role("button", name="登录").click()
    expect(page.get_by_test_id("user")).to_have_text(user)
    page.wait_for_load_state("networkidle")


def test_the_first_sign_in_from_the_root_makes_no_404_and_no_error(page: Page, stack: StackClient,
                                                                     context: BrowserContext) -> None:
    recorder = Recorder(page)
    user = f"first-{uuid.uuid4().hex[:8]}"
    sign_in_from_root(page, user)
    assert recorder.failed() == [], recorder.failed()
    assert recorder.errors == [], recorder.errors
    assert recorder.api("PUT", "/rpc/me") == [200]
    assert recorder.api("GET", "/rpc/me") == []
    # The page's icon, on the sign-in form and on the page.
    icons = [status for _m, url, status in recorder.responses if url.endswith("/skills/favicon.svg")]
    assert icons and set(icons) == {200}, recorder.responses
    # The profile was made in the browser's zone, with the default job in it.
    expect(page.get_by_test_id("zone")).to_have_text(ZONE)
    api = PageApi(page, stack)
    assert api.ok("GET", "/rpc/me")["timezone"] == ZONE
    (job,) = api.ok("GET", "/rpc/automation-jobs")["items"]
    assert job["timezone"] == ZONE

    # A reload reads the profile (GET), still nothing failed.
    page.reload()
    expect(page.get_by_test_id("user")).to_have_text(user)
    page.wait_for_load_state("networkidle")
    assert recorder.api("GET", "/rpc/me") == [200]
    assert recorder.api("PUT", "/rpc/me") == [200]
    assert recorder.failed() == [] and recorder.errors == [], (recorder.failed(), recorder.errors)


def test_a_later_session_keeps_the_profile_as_it_is(stack: StackClient, page: Page) -> None:
    """The profile exists, in another zone: a new session's PUT {"initialTimezone"} answers it unchanged."""
    user = f"first-{uuid.uuid4().hex[:8]}"
    token = stack.token(user)
    status, made = stack.call("PUT", "/rpc/me", {"timezone": "America/New_York", "displayName": "Ann"}, token=token)
    assert status == 200, made
    recorder = Recorder(page)
    sign_in_from_root(page, user)
    expect(page.get_by_test_id("zone")).to_have_text("America/New_York")
    assert recorder.api("PUT", "/rpc/me") == [200] and recorder.failed() == []
    status, kept = stack.call("GET", "/rpc/me", token=token)
    assert status == 200
    assert (kept["timezone"], kept["displayName"], kept["updatedAt"]) == ("America/New_York", "Ann", made["updatedAt"])


def test_root_and_favicon_paths(page: Page, stack: StackClient) -> None:
    response: Any = page.request.get(f"{stack.url}/", max_redirects=0)
    assert (response.status, response.headers["location"]) == (302, "/skills/")
    icon = page.request.get(f"{stack.url}/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"] == "image/svg+xml"
