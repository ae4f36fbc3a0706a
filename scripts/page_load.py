"""The Skills page's first load, measured in a real browser from Playwright's request log.

Used by `make bench` (scripts/bench_page.py) for the figures and by tests/browser/test_page_budget.py for
the budget (issue: at most 150 KB transferred, everything uncompressed, and at most 6 API requests before the
page is usable). "Usable" means the shell shows the signed-in user and the first section has its content: the
Skills section's cards (or its empty state).

The token is put in the tab's session storage before the page runs, as the sign-in leaves it, so the load
measured is the page's own and not the sign-in form's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Request

TOKEN_STORAGE_KEY = "skillcore.token"
USABLE = "[data-testid=user], main [data-skill], main .empty"


@dataclass
class Fetched:
    url: str
    method: str
    status: int
    resource_type: str
    body_bytes: int
    header_bytes: int


@dataclass
class FirstLoad:
    origin: str
    fetched: list[Fetched] = field(default_factory=list)
    usable_ms: float = 0.0
    failed: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(f.body_bytes + f.header_bytes for f in self.fetched)

    @property
    def body_bytes(self) -> int:
        return sum(f.body_bytes for f in self.fetched)

    @property
    def api_requests(self) -> list[Fetched]:
        return [f for f in self.fetched if urlsplit(f.url).path.startswith("/rpc/")]

    @property
    def other_origins(self) -> list[str]:
        origins = {f"{urlsplit(f.url).scheme}://{urlsplit(f.url).netloc}" for f in self.fetched}
        return sorted(o for o in origins if o != self.origin and not o.startswith("data:"))


def measure_first_load(browser: Browser, base_url: str, token: str, *, timeout_ms: float = 15_000,
                       path: str = "/skills/", usable: str = "main [data-skill], main .empty") -> FirstLoad:
    """One cold load of `path` (by default the Skills section) in a fresh context (empty cache), signed in with
    `token`; usable once the shell shows the user and `usable` (a selector) is on the page."""
    origin = f"{urlsplit(base_url).scheme}://{urlsplit(base_url).netloc}"
    context = browser.new_context(base_url=base_url, timezone_id="Asia/Shanghai", locale="zh-CN")
    load = FirstLoad(origin=origin)
    try:
        context.add_init_script(f"sessionStorage.setItem({TOKEN_STORAGE_KEY!r}, {token!r});")
        page = context.new_page()
        finished: list[Request] = []
        page.on("requestfinished", lambda request: finished.append(request))
        page.on("requestfailed", lambda request: load.failed.append(request.url))
        started = time.perf_counter()
        page.goto(path)
        page.locator("[data-testid=user]").wait_for(timeout=timeout_ms)
        page.locator(usable).first.wait_for(timeout=timeout_ms)
        load.usable_ms = (time.perf_counter() - started) * 1000
        for request in finished:
            response = request.response()
            sizes = request.sizes()
            load.fetched.append(
                Fetched(
                    url=request.url,
                    method=request.method,
                    status=response.status if response else 0,
                    resource_type=request.resource_type,
                    body_bytes=int(sizes["responseBodySize"]),
                    header_bytes=int(sizes["responseHeadersSize"]),
                )
            )
    finally:
        context.close()
    return load
