"""The language switch (Chinese by default, English by the switch, remembered, `<html lang>` following) and a
session that ends mid-way (a 401 sends to sign-in with a notice, and back to the section after signing in)."""

from __future__ import annotations

import re
import time
from typing import Any

from playwright.sync_api import Page, expect

from tests.local_stack import StackClient

NAV = {
    "zh": ["技能", "执行权限", "目标复盘提醒", "自动化任务", "我的能力", "托管工作流", "记忆", "Agent 与聊天", "活动"],
    "en": [
        "Skills",
        "Permissions",
        "Goal check-in reminders",
        "Automation jobs",
        "My capabilities",
        "Hosted workflows",
        "Memories",
        "Agents and chat",
        "Activity",
    ],
}


def nav_labels(page: Page) -> Any:
    return page.get_by_role("navigation", name=re.compile("页面导航|Sections")).get_by_role("link")


def test_the_language_switch_changes_every_label_and_is_remembered(page: Page, signed_in: Any) -> None:
    signed_in(section="memories")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(nav_labels(page)).to_have_text(NAV["zh"])
    expect(page.get_by_role("heading", level=1)).to_have_text("记忆")
    expect(page.get_by_role("button", name="中文")).to_have_attribute("aria-pressed", "true")

    page.get_by_role("button", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(nav_labels(page)).to_have_text(NAV["en"])
    expect(page.get_by_role("heading", level=1)).to_have_text("Memories")
    expect(page.get_by_text("There is no agent yet")).to_be_visible()
    expect(page.get_by_role("button", name="English")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()

    # Remembered: a reload (and another section) stays in English.
    page.reload()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(nav_labels(page)).to_have_text(NAV["en"])
    expect(page.get_by_role("heading", level=1)).to_have_text("Memories")
    page.get_by_role("link", name="Activity").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Activity")
    expect(page.get_by_role("heading", name="Evaluation summary")).to_be_visible()
    expect(page.get_by_role("table", name="Selector evals")).to_be_visible()

    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(nav_labels(page)).to_have_text(NAV["zh"])
    expect(page.get_by_role("heading", level=1)).to_have_text("活动")
    expect(page.get_by_role("heading", name="评测摘要")).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_have_text("活动")
    assert page.evaluate("localStorage.getItem('skillcore.lang')") == "zh"


def test_a_401_mid_session_sends_to_sign_in_with_a_notice_and_back(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    user = signed_in(section="skills")
    expect(page.get_by_role("heading", level=1)).to_have_text("技能")
    # The session ends while the page is open: the next API call is refused.
    expired = stack.token(user, ttl_seconds=-10)
    status, _ = stack.call("GET", "/rpc/me", token=expired)
    assert status == 401
    page.evaluate("token => sessionStorage.setItem('skillcore.token', token)", expired)

    page.get_by_role("link", name="活动").click()
    page.wait_for_url(re.compile(r"/_local/login\?next="))
    expect(page.get_by_role("status")).to_contain_text("登录已过期")
    # The expired token is gone; the notice shows once.
    assert page.evaluate("sessionStorage.getItem('skillcore.token')") is None
    assert page.evaluate("sessionStorage.getItem('skillcore.notice')") is None

    page.get_by_label(re.compile("用户名")).fill(user)
    page.get_by_role("button", name=re.compile("登录")).click()
    page.wait_for_url(re.compile(r"/skills/#/activity$"))
    expect(page.get_by_test_id("user")).to_have_text(user)
    expect(page.get_by_role("heading", level=1)).to_have_text("活动")
    expect(page.get_by_text("还没有运行记录")).to_be_visible()
    # A plain reload of the login page shows no stale notice.
    page.goto("/_local/login")
    expect(page.locator("#login-notice")).to_be_hidden()


def test_an_error_envelope_shows_its_message_and_code_never_a_stack(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    signed_in(section="memories")
    token = page.evaluate("sessionStorage.getItem('skillcore.token')")
    status, agent = stack.call("POST", "/rpc/agents", {"name": "Mika"}, token=token)
    assert status == 201
    page.reload()
    expect(page.get_by_label("Agent")).to_have_value(agent["agentId"])
    # Past the browser's own limit (maxlength removed), the server's 422 envelope is what the person sees.
    page.locator("#memory-content").evaluate("area => area.removeAttribute('maxlength')")
    page.get_by_label("标题").fill("标题")
    page.get_by_label("内容").fill("字" * 1001)
    page.get_by_role("button", name="添加", exact=True).click()
    alert = page.locator("form").get_by_role("alert")
    expect(alert).to_contain_text("有内容不符合要求，请检查标出的字段。")
    expect(alert).to_contain_text("错误代码: validation_error")
    expect(page.locator("#memory-content-error")).to_contain_text("1000")
    expect(page.get_by_label("内容")).to_have_attribute("aria-invalid", "true")
    text = page.locator("main").inner_text()
    assert "Traceback" not in text and "Error:" not in text and ".js:" not in text
    # The page says it in its own words, in the language shown: the switch changes the shown refusal too.
    page.get_by_role("button", name="English").click()
    expect(alert).to_contain_text("Something does not fit: check the marked fields.")
    expect(alert).to_contain_text("Error code: validation_error")
    expect(page.locator("#memory-content-error")).to_have_text("At most 1000 characters.")


def test_a_stale_sign_in_on_an_l3_grant_asks_to_sign_in_again_and_back(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    """Granting hosted_workflow:invoke (L3) needs a sign-in within 15 minutes: a 403 `person_required` with
    `stale_sign_in` sends the person to sign in again, with a notice, and back to the section."""
    user = signed_in(section="permissions", prefix="stale")
    expect(page.get_by_role("heading", level=1)).to_have_text("执行权限")
    stale = stack.token(user, extra_claims={"auth_time": int(time.time()) - 20 * 60})
    page.evaluate("token => sessionStorage.setItem('skillcore.token', token)", stale)
    grant = page.locator('[data-skill="hosted-workflows"] [role="switch"][data-permission="hosted_workflow:invoke"]')
    expect(grant).to_have_attribute("aria-checked", "false")
    with page.expect_response(lambda r: r.url.endswith("/rpc/skills/permissions")
                              and r.request.method == "PATCH") as answer:
        grant.click()
    assert answer.value.status == 403
    page.wait_for_url(re.compile(r"/_local/login\?next="))
    expect(page.get_by_role("status")).to_contain_text("最近 15 分钟")
    assert page.evaluate("sessionStorage.getItem('skillcore.token')") is None
    status, grants = stack.call("GET", "/rpc/skills/permissions", token=stack.token(user))
    assert status == 200 and grants["items"] == []

    page.get_by_label(re.compile("用户名")).fill(user)
    page.get_by_role("button", name=re.compile("登录")).click()
    page.wait_for_url(re.compile(r"/skills/#/permissions$"))
    with page.expect_response(lambda r: r.url.endswith("/rpc/skills/permissions")
                              and r.request.method == "PATCH") as answer:
        grant.click()
    assert answer.value.status == 200
    expect(grant).to_have_attribute("aria-checked", "true")
