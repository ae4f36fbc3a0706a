"""Sign-in on the local stack: the login form, the token in session storage only, the shell, sign-out."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import new_user, screenshot, sign_in
from tests.local_stack import StackClient


def test_sign_in_shows_the_shell_and_keeps_the_token_out_of_cookies(page: Page, stack: StackClient) -> None:
    page.goto("/skills/")
    expect(page).to_have_url(re.compile(r"/_local/login\?next="))
    screenshot(page, "sign-in")
    user = new_user()
    sign_in(page, user)
    expect(page.get_by_role("heading", level=1)).to_have_text("技能")
    assert page.context.cookies() == []
    stored = page.evaluate("sessionStorage.getItem('skillcore.token')")
    status, profile = stack.call("GET", "/rpc/me", token=stored)
    assert status == 200 and profile["userId"] == user
    # The first visit created the profile in the browser's zone, and with it the default memory job.
    assert profile["timezone"] == "Asia/Shanghai"
    expect(page.get_by_test_id("zone")).to_have_text("Asia/Shanghai")


def test_the_admin_box_adds_the_admin_group(page: Page) -> None:
    sign_in(page, new_user(), admin=True)
    expect(page.locator(".badge")).to_have_text("管理员")


def test_sign_out_forgets_the_token(page: Page) -> None:
    sign_in(page, new_user())
    page.get_by_role("button", name="退出登录").click()
    page.wait_for_url(re.compile(r"/_local/login"))
    assert page.evaluate("sessionStorage.getItem('skillcore.token')") is None
    page.goto("/skills/")
    page.wait_for_url(re.compile(r"/_local/login"))
