"""The Permissions section (执行权限) and the Skills section's names, through the page, checked against the API.

Each permission switch is a `role="switch"` button named with its permission code, carrying
`data-permission="<code>"` inside the `data-skill="<skillId>"` card (other tests rely on that). The scope select
above the list chooses the whole user or one agent; every switch grants or revokes in that scope.
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Locator, Page, expect

from tests.browser import confirming
from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient

RECALL = "memory-recall"
READ = "memory:read"
REMINDER = "goal-check-in-reminder"
PROACTIVE = "proactive_message:write"

# The built-in skills' names: Chinese on the page in zh, the server's English in en.
NAMES = {
    "memory-recall": ("记忆检索", "Memory recall"),
    "memory-context": ("记忆上下文", "Memory context"),
    "memory-extraction": ("记忆提炼", "Memory extraction"),
    "goal-check-in-reminder": ("目标复盘提醒", "Goal check-in reminder"),
    "goal-setting": ("目标设定", "Goal setting"),
    "hosted-workflows": ("托管工作流", "Hosted workflows"),
}


class Api(PageApi):
    """The signed-in page's user, calling the API with the page's own token."""

    def grants(self, skill_id: str, code: str) -> list[dict[str, Any]]:
        items = self.ok("GET", "/rpc/skills/permissions?limit=100")["items"]
        return [g for g in items if g["skillId"] == skill_id and g["permissionCode"] == code]

    def active_scopes(self, skill_id: str, code: str) -> list[dict[str, Any]]:
        return [g["scope"] for g in self.grants(skill_id, code) if g["status"] == "active"]

    def skill(self, skill_id: str) -> dict[str, Any]:
        (item,) = [s for s in self.ok("GET", "/rpc/skills?limit=100")["items"] if s["skillId"] == skill_id]
        return item


def switch(page: Page, skill_id: str, code: str) -> Locator:
    return page.locator(f'[data-skill="{skill_id}"] [role="switch"][data-permission="{code}"]')


def toggle(page: Page, target: Locator, how: Any = None) -> Any:
    """Clicks (or runs `how`) and waits for the PATCH answer; returns the response. Turning a switch off asks
    first (a revoke): the dialog is confirmed."""
    revoking = target.get_attribute("aria-checked") == "true"
    with page.expect_response(
        lambda r: r.url.endswith("/rpc/skills/permissions") and r.request.method == "PATCH"
    ) as answer:
        (how or target.click)()
        if revoking:
            confirming.answer(page)
    return answer.value


def test_grant_and_revoke_for_the_user(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="permissions", prefix="perms")
    api = Api(page, stack)
    expect(page.get_by_role("heading", level=1)).to_have_text("执行权限")
    read = switch(page, RECALL, READ)
    expect(read).to_have_attribute("aria-checked", "false")
    expect(read).to_have_accessible_name(re.compile(re.escape(READ)))
    card = page.locator(f'[data-skill="{RECALL}"]')
    expect(card.get_by_role("heading", level=2)).to_contain_text("记忆检索")
    row = card.locator(f'[data-permission-row="{READ}"]')
    expect(row.get_by_test_id("risk")).to_have_text("L1 只读")
    expect(row.get_by_test_id("approval")).to_have_text("持久授权")
    expect(row.get_by_test_id("scope")).to_have_text("整个用户")
    expect(row.get_by_test_id("grant-state")).to_have_text("未授予")
    reminder_row = page.locator(f'[data-skill="{REMINDER}"] [data-permission-row="{PROACTIVE}"]')
    expect(reminder_row.get_by_test_id("risk")).to_have_text("L2 站内写入")
    # memory-context declares memory:read too: its own switch, untouched by memory-recall's.
    other = switch(page, "memory-context", READ)
    expect(other).to_have_attribute("aria-checked", "false")
    assert api.active_scopes(RECALL, READ) == []

    answer = toggle(page, read)
    assert answer.status == 200, answer.text()
    expect(read).to_have_attribute("aria-checked", "true")
    expect(row.get_by_role("status")).to_have_text("已授予 读取 Agent 记忆（整个用户）。")
    expect(row.get_by_test_id("grant-state")).to_contain_text("已授予")
    expect(row.get_by_test_id("grant-state")).to_contain_text("版本 1.0.0")
    assert api.active_scopes(RECALL, READ) == [{"type": "user"}]
    assert api.skill(RECALL)["permissions"][0]["granted"] is True
    assert api.active_scopes("memory-context", READ) == []
    expect(other).to_have_attribute("aria-checked", "false")

    # The state is the server's: a reload shows it granted.
    page.reload()
    expect(read).to_have_attribute("aria-checked", "true")
    screenshot(page, "permissions")

    answer = toggle(page, read)
    assert answer.status == 200
    expect(read).to_have_attribute("aria-checked", "false")
    expect(row.get_by_test_id("grant-state")).to_contain_text("已撤销")
    (grant,) = api.grants(RECALL, READ)
    assert grant["status"] == "revoked" and grant["revokedAt"]
    assert api.skill(RECALL)["permissions"][0]["granted"] is False


def test_an_agent_scope_grant_holds_for_that_agent_only(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    signed_in(section="permissions", prefix="perms")
    api = Api(page, stack)
    mika = api.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    nora = api.ok("POST", "/rpc/agents", {"name": "Nora"}, status=201)
    page.reload()
    scope = page.get_by_label("授权范围")
    expect(scope).to_have_value("")
    scope.select_option(label="Agent：Mika")
    read = switch(page, RECALL, READ)
    expect(read).to_have_accessible_name(re.compile("Agent Mika"))
    row = page.locator(f'[data-skill="{RECALL}"] [data-permission-row="{READ}"]')
    expect(row.get_by_test_id("scope")).to_have_text("Agent Mika")
    expect(read).to_have_attribute("aria-checked", "false")

    answer = toggle(page, read)
    assert answer.status == 200, answer.text()
    assert answer.request.post_data_json["scope"] == {"type": "agent", "agentId": mika["agentId"]}
    expect(read).to_have_attribute("aria-checked", "true")
    assert api.active_scopes(RECALL, READ) == [{"type": "agent", "agentId": mika["agentId"]}]
    # Not a user grant: the catalog (user scope) still says not granted.
    assert api.skill(RECALL)["permissions"][0]["granted"] is False

    # The other agent and the user scope show it off; the user scope names the agent granted one by one.
    scope.select_option(label="Agent：Nora")
    expect(read).to_have_attribute("aria-checked", "false")
    expect(read).to_have_accessible_name(re.compile("Agent Nora"))
    scope.select_option(label="整个用户（所有 Agent）")
    expect(read).to_have_attribute("aria-checked", "false")
    expect(row.get_by_test_id("agent-grants")).to_have_text("单独授权的 Agent：Mika")

    # A link may name the agent: it opens in that agent's scope, on the switch.
    page.goto(f"/skills/#/permissions?skill={RECALL}&permission=memory%3Aread&agent={mika['agentId']}")
    page.reload()
    expect(scope).to_have_value(mika["agentId"])
    expect(read).to_be_focused()
    expect(read).to_have_attribute("aria-checked", "true")

    # Revoked in Mika's scope.
    toggle(page, read)
    expect(read).to_have_attribute("aria-checked", "false")
    assert api.active_scopes(RECALL, READ) == []
    assert nora["agentId"] not in str(api.grants(RECALL, READ))

    # A link followed while the section is open moves to its scope and focuses the switch there.
    page.get_by_label("授权范围").focus()
    page.evaluate(
        "id => { location.hash = `#/permissions?skill=memory-context&permission=memory%3Aread&agent=${id}`; }",
        nora["agentId"],
    )
    expect(scope).to_have_value(nora["agentId"])
    context_read = switch(page, "memory-context", READ)
    expect(context_read).to_be_focused()
    expect(context_read).to_have_accessible_name(re.compile("Agent Nora"))


def test_space_on_the_focused_switch_toggles_it(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="permissions", prefix="perms")
    api = Api(page, stack)
    first = page.locator('[role="switch"][data-permission]').first
    expect(first).to_be_visible()
    # From the scope select, Tab walks to the permission switches (the legend's summary first).
    page.get_by_label("授权范围").focus()
    target = None
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('data-permission')"):
            target = page.evaluate(
                "[document.activeElement.closest('[data-skill]').dataset.skill,"
                " document.activeElement.dataset.permission]"
            )
            break
    assert target, "Tab never reached a permission switch"
    skill_id, code = target
    focused = switch(page, skill_id, code)
    expect(focused).to_be_focused()
    # The focus is visible (the page's :focus-visible outline).
    assert page.evaluate("document.activeElement.matches(':focus-visible')")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"

    toggle(page, focused, lambda: page.keyboard.press("Space"))
    expect(focused).to_have_attribute("aria-checked", "true")
    assert api.active_scopes(skill_id, code) == [{"type": "user"}]
    expect(focused).to_be_focused()
    toggle(page, focused, lambda: page.keyboard.press("Enter"))
    expect(focused).to_have_attribute("aria-checked", "false")
    assert api.active_scopes(skill_id, code) == []


def test_a_refused_toggle_shows_the_error_and_the_switch_reverts(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    signed_in(section="permissions", prefix="perms")
    api = Api(page, stack)
    agent = api.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    page.reload()
    page.get_by_label("授权范围").select_option(value=agent["agentId"])
    read = switch(page, RECALL, READ)
    # The request reaches the server naming an agent that is not the user's: 404 agent_not_found.
    page.route(
        re.compile(r"/rpc/skills/permissions$"),
        lambda route: (
            route.continue_(
                post_data=route.request.post_data.replace(agent["agentId"], "01NOTMINE0000000000000000")
            )
            if route.request.method == "PATCH"
            else route.continue_()
        ),
    )
    answer = toggle(page, read)
    assert answer.status == 404
    expect(read).to_have_attribute("aria-checked", "false")
    alert = page.locator(f'[data-skill="{RECALL}"]').get_by_role("alert")
    expect(alert).to_contain_text("agent_not_found")
    assert api.active_scopes(RECALL, READ) == []


def test_the_reminders_grant_link_focuses_the_proactive_switch(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    signed_in(section="reminders", prefix="perms")
    api = Api(page, stack)
    api.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    page.reload()
    page.get_by_role("link", name="前往执行权限开启").click()
    expect(page).to_have_url(
        re.compile(r"#/permissions\?skill=goal-check-in-reminder&permission=proactive_message%3Awrite$")
    )
    target = switch(page, REMINDER, PROACTIVE)
    expect(target).to_be_focused()
    expect(target).to_be_in_viewport()
    row = page.locator(f'[data-skill="{REMINDER}"] [data-permission-row="{PROACTIVE}"]')
    expect(row).to_have_class(re.compile(r"\bhighlight\b"))
    expect(page.locator(".perm-row.highlight")).to_have_count(1)

    # Granting there lets the reminder form submit.
    toggle(page, target, lambda: page.keyboard.press("Space"))
    expect(target).to_have_attribute("aria-checked", "true")
    assert api.active_scopes(REMINDER, PROACTIVE) == [{"type": "user"}]
    page.go_back()
    expect(page.get_by_role("heading", level=1)).to_have_text("目标复盘提醒")
    expect(page.get_by_role("button", name="安排提醒")).to_be_enabled()


def test_disabling_a_skill_on_the_skills_section(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="skills", prefix="perms")
    api = Api(page, stack)
    enable = page.locator(f'[data-skill="{RECALL}"] [role="switch"]')
    expect(enable).to_have_accessible_name("启用 记忆检索")
    expect(enable).to_have_attribute("aria-checked", "true")
    with page.expect_response(
        lambda r: r.url.endswith(f"/rpc/skills/{RECALL}") and r.request.method == "PATCH"
    ):
        enable.click()
        confirming.answer(page)
    expect(enable).to_have_attribute("aria-checked", "false")
    assert api.skill(RECALL)["enabled"] is False
    # Disabling grants and revokes nothing; the permissions section says the skill is off.
    assert api.grants(RECALL, READ) == []
    page.get_by_role("link", name="执行权限").click()
    card = page.locator(f'[data-skill="{RECALL}"]')
    expect(card.get_by_test_id("skill-disabled")).to_be_visible()
    expect(switch(page, RECALL, READ)).to_have_attribute("aria-checked", "false")
    card.get_by_role("link", name="前往技能启用").click()
    expect(enable).to_have_attribute("aria-checked", "false")
    with page.expect_response(
        lambda r: r.url.endswith(f"/rpc/skills/{RECALL}") and r.request.method == "PATCH"
    ):
        enable.click()
    expect(enable).to_have_attribute("aria-checked", "true")
    assert api.skill(RECALL)["enabled"] is True


def test_skill_names_in_chinese_and_in_english(page: Page, signed_in: Any) -> None:
    signed_in(section="skills", prefix="perms")
    for skill_id, (zh, _) in NAMES.items():
        expect(page.locator(f'[data-skill="{skill_id}"]').get_by_test_id("skill-name")).to_have_text(zh)
    expect(page.locator(f'[data-skill="{RECALL}"]')).to_contain_text("L1 只读")
    screenshot(page, "skills")
    page.get_by_role("button", name="English").click()
    for skill_id, (_, en) in NAMES.items():
        expect(page.locator(f'[data-skill="{skill_id}"]').get_by_test_id("skill-name")).to_have_text(en)
    expect(page.locator(f'[data-skill="{RECALL}"]')).to_contain_text("L1 read-only")
    expect(page.locator(f'[data-skill="{RECALL}"] [role="switch"]')).to_have_accessible_name(
        "Enable Memory recall"
    )
    # A skill's "Manage permissions" link lands on its (first) permission switch.
    page.locator(f'[data-skill="{REMINDER}"]').get_by_role("link", name="Manage permissions").click()
    expect(switch(page, REMINDER, PROACTIVE)).to_be_focused()
    row = page.locator(f'[data-skill="{REMINDER}"] [data-permission-row="{PROACTIVE}"]')
    expect(page.locator(f'[data-skill="{REMINDER}"]').get_by_role("heading", level=2)).to_contain_text(
        "Goal check-in reminder"
    )
    expect(row.get_by_test_id("risk")).to_have_text("L2 in-app write")
    expect(row.get_by_test_id("approval")).to_have_text("persistent grant")
    expect(row).to_have_class(re.compile(r"\bhighlight\b"))
    expect(switch(page, REMINDER, PROACTIVE)).to_have_accessible_name(
        "Grant Goal check-in reminder: Send proactive reminders (proactive_message:write), scope: the whole user"
    )
