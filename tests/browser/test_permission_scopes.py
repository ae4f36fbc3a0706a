"""Finer scopes on the Permissions section (web/sections/permissions/narrowing.js): granting with a narrowing
(one agent, an argument's maximum length), the narrowing shown on the grant's row in both languages, a refused
narrowing shown at its field, and the narrowed grant enforced (checked through the API)."""

from __future__ import annotations

import uuid
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser import confirming
from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient

RECALL = "memory-recall"
READ = "memory:read"


def grant_request(page: Page, submit: Any) -> Any:
    with page.expect_response(
        lambda r: r.url.endswith("/rpc/skills/permissions") and r.request.method == "PATCH"
    ) as answer:
        submit()
    return answer.value


def test_a_grant_narrowed_on_the_page_is_shown_and_enforced(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="permissions", prefix="scopes")
    api = PageApi(page, stack)
    mika = api.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    nora = api.ok("POST", "/rpc/agents", {"name": "Nora"}, status=201)
    page.reload()
    row = page.locator(f'[data-skill="{RECALL}"] [data-permission-row="{READ}"]')
    narrow = row.get_by_test_id("narrow")
    narrow.locator("summary").click()
    expect(narrow.get_by_text("只对这些 Agent 生效")).to_be_visible()

    # an argument the tool does not declare: refused, shown at the field, nothing granted
    narrow.get_by_label("Mika").check()
    narrow.get_by_label("参数名").fill("limit")
    narrow.get_by_label("限制方式").select_option(label="最大长度")
    narrow.get_by_label("值", exact=True).fill("20")
    refused = grant_request(page, narrow.get_by_role("button", name="按此范围授予").click)
    assert refused.status == 422
    name = narrow.get_by_label("参数名")
    expect(name).to_have_attribute("aria-invalid", "true")
    expect(narrow.get_by_test_id("field-error")).to_contain_text("scope.arguments[0].name")
    expect(name).to_be_focused()
    assert [g for g in api.ok("GET", "/rpc/skills/permissions")["items"]] == []

    name.fill("question")
    answer = grant_request(page, narrow.get_by_role("button", name="按此范围授予").click)
    assert answer.status == 200
    assert answer.request.post_data_json["scope"] == {
        "type": "user", "resources": [{"kind": "agent", "id": mika["agentId"]}],
        "arguments": [{"name": "question", "maxLength": 20}]}
    expect(row.get_by_test_id("grant-narrowing")).to_have_text("限定于：Agent Mika；question 最长 20")
    expect(row.get_by_role("switch")).to_have_attribute("aria-checked", "true")
    expect(row.get_by_role("status")).to_have_text("已按限定范围授予 读取 Agent 记忆（整个用户）。")
    (stored,) = api.ok("GET", "/rpc/skills/permissions")["items"]
    assert stored["scope"] == answer.json()["scope"] and stored["status"] == "active"
    screenshot(page, "permission-scopes")

    # enforced: Mika may recall, Nora's call is outside the grant (a denied run; the audit says why)
    for agent, outcome in ((mika, "succeeded"), (nora, "denied")):
        body = api.ok("POST", f"/rpc/conversations/{agent['defaultConversationId']}/messages",
                      {"clientMessageId": uuid.uuid4().hex[:12], "text": "/memory-recall tea"})
        assert body["run"]["outcome"] == outcome, agent["name"]
    events = [e for e in api.ok("GET", "/rpc/skills/audit-events?action=tool.execute")["items"]
              if e["decision"] == "denied"]
    assert [(e["reason"], e["metadata"]["scopeMismatch"]) for e in events] == [("grant_scope_mismatch", "agent")]

    # shown after a reload, and in English
    page.reload()
    expect(row.get_by_test_id("grant-narrowing")).to_have_text("限定于：Agent Mika；question 最长 20")
    page.get_by_role("button", name="English").click()
    expect(row.get_by_test_id("grant-narrowing")).to_have_text("Limited to: agent Mika; question at most 20 long")
    expect(row.get_by_test_id("narrow").locator("summary")).to_have_text("Narrow this grant…")


def test_an_agent_scope_offers_no_agent_list_and_granting_again_widens(page: Page, stack: StackClient,
                                                                        signed_in: Any) -> None:
    signed_in(section="permissions", prefix="scopes")
    api = PageApi(page, stack)
    mika = api.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    api.ok("PATCH", "/rpc/skills/permissions", {
        "skillId": RECALL, "permissionCode": READ, "granted": True,
        "scope": {"type": "agent", "agentId": mika["agentId"], "arguments": [{"name": "question", "maxLength": 5}]}})
    page.reload()
    page.get_by_label("授权范围").select_option(label="Agent：Mika")
    row = page.locator(f'[data-skill="{RECALL}"] [data-permission-row="{READ}"]')
    expect(row.get_by_test_id("grant-narrowing")).to_have_text("限定于：question 最长 5")
    narrow = row.get_by_test_id("narrow")
    narrow.locator("summary").click()
    expect(narrow.get_by_test_id("narrow-argument")).to_be_visible()
    expect(narrow.get_by_test_id("narrow-agents")).to_have_count(0)  # an agent's grant is already one agent's

    # revoke (after the confirmation) and grant again with the switch: unscoped
    switch = row.get_by_role("switch")

    def revoke() -> None:
        switch.click()
        confirming.answer(page)

    grant_request(page, revoke)
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(row.get_by_test_id("grant-narrowing")).to_have_count(0)
    grant_request(page, switch.click)
    expect(switch).to_have_attribute("aria-checked", "true")
    expect(row.get_by_test_id("grant-narrowing")).to_have_count(0)
    (stored,) = api.ok("GET", "/rpc/skills/permissions")["items"]
    assert stored["scope"] == {"type": "agent", "agentId": mika["agentId"]}
