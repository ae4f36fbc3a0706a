"""Browser tests: the Skills page in Debian's Chromium, driven by Playwright, against the local stack.

Playwright cannot download its own browser here, so it launches the system's (`SKILLS_CHROMIUM`, else
`chromium` on PATH; `.ci/run` installs it). A missing browser is an error, never a skip: these tests are the
page's proof. Each test gets a fresh browser context (its own session storage and local storage), signs a
fresh user in through the real `/_local/login` form, and may save screenshots under `test-artifacts/page/`
(kept out of git).
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from tests.local_stack import StackClient

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "page"
TIMEOUT_MS = 10_000

# Every timer in the page fires no sooner than 300 ms, as on a loaded machine (and Preact's effects, which wait
# for a timer after the frame). A focus move, a listener or a reset that waits for a timer or an effect loses the
# race with the next input there: the typing lands in the field focused late, a click on the navigation goes
# unheard. The page must not depend on winning it, so every browser test runs with late timers.
LATE_TIMERS = """
const onTime = window.setTimeout;
window.setTimeout = (callback, delay, ...args) => onTime(callback, Math.max(Number(delay) || 0, 300), ...args);
"""


def chromium_path() -> str:
    path = os.environ.get("SKILLS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise RuntimeError(
            "no Chromium for the browser tests: `apt-get install -y chromium fonts-noto-cjk` "
            "(or set SKILLS_CHROMIUM to a Chromium binary)"
        )
    return path


# Package scope, not session: Playwright's sync API keeps an event loop running in the main thread while it is
# open, and every later test that calls asyncio.run (the MCP client, the egress client) would find it there.
@pytest.fixture(scope="package")
def _playwright() -> Iterator[Playwright]:
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="package")
def browser(_playwright: Playwright) -> Iterator[Browser]:
    browser = _playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def context(browser: Browser, stack: StackClient) -> Iterator[BrowserContext]:
    # A fixed zone and locale keep times and screenshots the same on every machine.
    context = browser.new_context(
        base_url=stack.url, timezone_id="Asia/Shanghai", locale="zh-CN", viewport={"width": 1280, "height": 900}
    )
    context.add_init_script(LATE_TIMERS)
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    # An uncaught exception in the page is a bug even when the assertions passed.
    assert not errors, errors


def new_user(prefix: str = "page") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def sign_in(page: Page, user: str, *, admin: bool = False, section: str = "skills") -> None:
    """Through the real local sign-in form, then wait for the shell (the signed-in user shown)."""
    page.goto(f"/skills/#/{section}")
    page.wait_for_url(re.compile(r"/_local/login"))
    page.get_by_label(re.compile("用户名")).fill(user)
    if admin:
        page.get_by_label(re.compile("管理员")).check()
    page.get_by_role("button", name=re.compile("登录")).click()
    expect(page.get_by_test_id("user")).to_have_text(user)


@pytest.fixture
def signed_in(page: Page) -> Callable[..., str]:
    """signed_in(section="skills") -> the new user's id, signed in on `page`."""

    def go(section: str = "skills", prefix: str = "page", **kwargs: Any) -> str:
        user = new_user(prefix)
        sign_in(page, user, section=section, **kwargs)
        return user

    return go


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


class PageApi:
    """The signed-in page's user, calling the API with the page's own token (what tests check or set up
    besides the page). Test modules subclass it with the calls they make."""

    def __init__(self, page: Page, stack: StackClient) -> None:
        self.stack = stack
        token = page.evaluate("sessionStorage.getItem('skillcore.token')")
        assert token, "the page holds no token: sign in first"
        self.token = str(token)

    def ok(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        got, payload = self.stack.call(method, path, body, token=self.token)
        assert got == status, (method, path, got, payload)
        return payload
