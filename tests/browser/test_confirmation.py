"""Destructive actions ask first (web/lib/confirm.js): one modal dialog (role alertdialog) with a title, the
consequence said, the focus on the button that changes nothing, Escape or that button keeping everything as it
was, the focus back on the action's control, and the action done only once confirmed. In both languages.

Covered here: cancelling a reminder, revoking a permission (Permissions section and the automation job's grant
switch), turning a skill off. Deactivating a capability and disabling a hosted endpoint ask the same way
(tests/browser/test_capabilities.py and test_hosted.py confirm them), and so do deleting an automation job, a
capability, a tool binding or an endpoint and forgetting a memory (their sections' tests answer both ways)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from playwright.sync_api import Locator, Page, expect

from skillcore.clock import to_api_time
from tests.browser import confirming
from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient

REMINDER_SKILL, PROACTIVE = "goal-check-in-reminder", "proactive_message:write"
RECALL, READ = "memory-recall", "memory:read"


def grant(api: PageApi, skill: str, permission: str) -> None:
    api.ok("PATCH", "/rpc/skills/permissions",
           {"skillId": skill, "permissionCode": permission, "scope": {"type": "user"}, "granted": True})


def grants(api: PageApi, skill: str, permission: str) -> list[str]:
    return [g["status"] for g in api.ok("GET", "/rpc/skills/permissions")["items"]
            if g["skillId"] == skill and g["permissionCode"] == permission]


def job_status(api: PageApi, job_id: str) -> str:
    items = api.ok("GET", "/rpc/skills/background-jobs?limit=100")["items"]
    return str(next(j for j in items if j["jobId"] == job_id)["status"])


def in_english(page: Page) -> None:
    page.get_by_role("button", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")


def expect_asked(page: Page, title: str, says: str, keep: str) -> Locator:
    """The dialog open, named by its title, described by the consequence (which contains `says`)."""
    dialog = confirming.dialog(page)
    expect(dialog).to_be_visible()
    expect(dialog).to_have_accessible_name(title)
    expect(dialog).to_have_accessible_description(re.compile(re.escape(says)))
    expect(dialog.get_by_role("button", name=keep)).to_be_focused()
    return dialog


def test_cancelling_a_reminder_asks_first(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="skills", prefix="confirm")
    api = PageApi(page, stack)
    grant(api, REMINDER_SKILL, PROACTIVE)
    agent = api.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    run_at = to_api_time(datetime.now(UTC) + timedelta(days=2))
    job = api.ok("POST", "/rpc/skills/background-jobs",
                 {"skillId": REMINDER_SKILL, "agentId": agent["agentId"], "runAt": run_at, "note": "跑步"}, status=201)
    page.goto("/skills/#/reminders")
    row = page.locator(f'tr[data-job="{job["jobId"]}"]')
    cancel = row.get_by_role("button", name=re.compile("取消"))

    # Escape keeps the reminder; the focus is back on the button.
    cancel.click()
    dialog = expect_asked(page, "取消这条提醒？", "不能恢复", "保留")
    screenshot(page, "confirm-reminder-zh")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(cancel).to_be_focused()
    expect(row.locator("[data-status]")).to_have_text("等待")
    assert job_status(api, job["jobId"]) == "scheduled"

    # Confirmed, it is cancelled.
    with page.expect_response(lambda r: r.url.endswith("/cancel")) as answer:
        cancel.click()
        confirming.answer(page)
    assert answer.value.status == 200
    expect(row.locator("[data-status]")).to_have_text("取消")
    assert job_status(api, job["jobId"]) == "cancelled"


def test_revoking_and_turning_a_skill_off_ask_first_in_english(page: Page, stack: StackClient,
                                                                signed_in: Any) -> None:
    signed_in(section="permissions", prefix="confirm")
    api = PageApi(page, stack)
    grant(api, RECALL, READ)
    page.reload()
    in_english(page)
    switch = page.locator(f'[data-skill="{RECALL}"] [data-permission="{READ}"]')
    expect(switch).to_have_attribute("aria-checked", "true")

    switch.click()
    dialog = expect_asked(page, "Revoke this permission?", "(the whole user)", "Keep it")
    screenshot(page, "confirm-revoke-en")
    dialog.get_by_role("button", name="Keep it").click()
    expect(dialog).to_have_count(0)
    expect(switch).to_be_focused()
    expect(switch).to_have_attribute("aria-checked", "true")
    assert grants(api, RECALL, READ) == ["active"]

    with page.expect_response(lambda r: r.url.endswith("/rpc/skills/permissions") and r.request.method == "PATCH"):
        switch.click()
        confirming.answer(page)
    expect(switch).to_have_attribute("aria-checked", "false")
    assert grants(api, RECALL, READ) == ["revoked"]

    # Turning a skill off.
    page.goto("/skills/#/skills")
    enable = page.locator(f'[data-skill="{RECALL}"] [role="switch"]')
    expect(enable).to_have_attribute("aria-checked", "true")
    enable.click()
    dialog = expect_asked(page, "Turn this skill off?", "its permissions are kept", "Keep it")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(enable).to_have_attribute("aria-checked", "true")
    skill = next(s for s in api.ok("GET", "/rpc/skills?limit=100")["items"] if s["skillId"] == RECALL)
    assert skill["enabled"] is True
    with page.expect_response(lambda r: r.url.endswith(f"/rpc/skills/{RECALL}") and r.request.method == "PATCH"):
        enable.click()
        confirming.answer(page)
    expect(enable).to_have_attribute("aria-checked", "false")
    # Turning it on again asks nothing.
    with page.expect_response(lambda r: r.url.endswith(f"/rpc/skills/{RECALL}") and r.request.method == "PATCH"):
        enable.click()
    expect(confirming.dialog(page)).to_have_count(0)
    expect(enable).to_have_attribute("aria-checked", "true")


def test_the_automation_grant_switch_asks_before_it_revokes(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="skills", prefix="confirm")
    api = PageApi(page, stack)
    grant(api, "memory-extraction", "memory:write")
    page.goto("/skills/#/automation")
    switch = page.locator("#grant-memory-write")
    expect(switch).to_have_attribute("aria-checked", "true")
    switch.click()
    dialog = expect_asked(page, "撤销这项授权？", "（整个用户）", "保留")
    dialog.get_by_role("button", name="保留").click()
    expect(switch).to_have_attribute("aria-checked", "true")
    assert grants(api, "memory-extraction", "memory:write") == ["active"]
    switch.click()
    confirming.answer(page)
    expect(switch).to_have_attribute("aria-checked", "false")
    assert grants(api, "memory-extraction", "memory:write") == ["revoked"]


def test_the_dialog_is_one_at_a_time_and_modal(page: Page, stack: StackClient, signed_in: Any) -> None:
    """While it is open nothing behind it takes a click, and Tab stays inside it."""
    signed_in(section="skills", prefix="confirm")
    enable = page.locator(f'[data-skill="{RECALL}"] [role="switch"]')
    enable.click()
    dialog = expect_asked(page, "停用这个技能？", "授权保留不变", "保留")
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="停用技能")).to_be_focused()
    assert page.evaluate("document.querySelectorAll('dialog[open]').length") == 1
    assert page.evaluate("document.querySelector('dialog[open]').matches(':modal')") is True
    page.keyboard.press("Escape")
    expect(enable).to_have_attribute("aria-checked", "true")
