"""Phones: every section of the page, with data, at 390x844 in both languages, is no wider than the screen
(`document.documentElement.scrollWidth <= 390`), no table reaches past it (tables become stacked rows, each cell
led by its column's name), and a screenshot of each lands in the browser tests' artifacts
(test-artifacts/page/phone-<section>-<lang>.png). The data is long on purpose: ids, URLs, notes and names
without a place to break."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from skillcore.clock import to_api_time
from tests.browser.conftest import TIMEOUT_MS, PageApi, screenshot, sign_in
from tests.hosted_server import HostedServer
from tests.local_stack import StackClient

WIDTH, HEIGHT = 390, 844
SECTIONS = ("skills", "permissions", "reminders", "automation", "capabilities", "hosted", "memories", "agents",
            "activity")
LONG = "一个很长很长的没有空格的说明" * 4 + "averyveryverylongwordwithoutanyplacetobreakitatall" * 2


@pytest.fixture
def context(browser: Browser, hosted_stack: StackClient) -> Iterator[BrowserContext]:
    """A phone's viewport, on the stack that reaches the test MCP server (the hosted section has data)."""
    context = browser.new_context(base_url=hosted_stack.url, timezone_id="Asia/Shanghai", locale="zh-CN",
                                  viewport={"width": WIDTH, "height": HEIGHT}, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


def seed(api: PageApi, hosted: HostedServer) -> dict[str, Any]:
    """Data in every section: an agent with a chat and memories, grants, a reminder, an automation job, a
    capability, a hosted endpoint with a call, and the audit and runs all of it leaves."""
    for skill, permission in (("goal-check-in-reminder", "proactive_message:write"), ("memory-recall", "memory:read"),
                              ("memory-extraction", "memory:write"), ("hosted-workflows", "hosted_workflow:invoke")):
        api.ok("PATCH", "/rpc/skills/permissions",
               {"skillId": skill, "permissionCode": permission, "scope": {"type": "user"}, "granted": True})
    agent = api.ok("POST", "/rpc/agents", {"name": "Mika" + "名字" * 10, "persona": LONG}, status=201)
    conversation = agent["defaultConversationId"]
    api.ok("POST", f"/rpc/agents/{agent['agentId']}/memories", {"title": "爱好" * 20, "content": LONG}, status=201)
    for n, text in enumerate(("我喜欢爬山" + LONG, "你还记得我喜欢什么吗", "/memory-recall")):
        api.ok("POST", f"/rpc/conversations/{conversation}/messages", {"clientMessageId": f"m{n}", "text": text})
    run_at = to_api_time(datetime.now(UTC) + timedelta(days=1))
    api.ok("POST", "/rpc/skills/background-jobs", {"skillId": "goal-check-in-reminder", "agentId": agent["agentId"],
                                                   "runAt": run_at, "note": LONG}, status=201)
    api.ok("POST", "/rpc/automation-jobs", {"title": "每周回顾" * 8, "scheduleType": "weekly", "localTime": "09:30",
                                            "weekday": 1, "config": {"prompt": LONG, "tools": ["memory_write"]}},
           status=201)
    step = {"kind": "platformCapability", "capabilityId": "memory-recall", "instruction": LONG[:200]}
    api.ok("POST", "/rpc/user-capabilities", {
        "name": "weekly_review_with_a_rather_long_name", "displayName": "周复盘" * 10, "whenToUse": ["每周复盘"],
        "workflow": {"objective": LONG[:400], "steps": [step], "completionCriteria": "列出下周三件事"},
        "platformCapabilityIds": ["memory-recall"]}, status=201)
    endpoint = api.ok("POST", "/rpc/hosted-endpoints", {"name": f"phone_{uuid.uuid4().hex[:6]}",
                                                        "displayName": "Flow" + "流程" * 12, "url": hosted.url()},
                      status=201)
    endpoint = api.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}", {
        "expectedVersion": endpoint["version"], "tools": [{"name": "echo", "requiresApproval": False}]})
    got, answer = api.stack.call("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/calls",
                                 {"toolName": "echo", "arguments": {"text": LONG}, "clientCallId": "phone-1"},
                                 token=api.token)
    assert got == 200, answer
    got, asked = api.stack.call("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/calls",
                                {"toolName": "add", "arguments": {"a": 2, "b": 3}, "clientCallId": "phone-2"},
                                token=api.token)
    assert got == 409, asked  # a pending approval, listed in the section
    return agent


WIDEST = """() => {
  const width = document.documentElement.clientWidth;
  const past = [];
  for (const element of document.querySelectorAll("main *")) {
    const box = element.getBoundingClientRect();
    if (box.width > 0 && box.right > width + 1 && !element.closest("pre, .scroll-x")) {
      past.push(`${element.tagName.toLowerCase()}.${element.className} ${Math.round(box.right)}`);
    }
  }
  return past.slice(0, 8);
}"""


def visit(page: Page, section: str, lang: str, query: str = "") -> None:
    page.goto(f"/skills/#/{section}{query}")
    expect(page.locator("main h1")).to_be_visible()
    page.wait_for_load_state("networkidle")
    expect(page.locator("main [role=status].state, main .boot")).to_have_count(0)
    width = page.evaluate("document.documentElement.scrollWidth")
    past = page.evaluate(WIDEST)
    screenshot(page, f"phone-{section}-{lang}")
    assert width <= WIDTH and past == [], f"{section} ({lang}) is {width} px wide; past the screen: {past}"


def test_every_section_fits_a_phone_in_both_languages(page: Page, hosted_stack: StackClient, hosted: HostedServer
                                                      ) -> None:
    user = f"phone-{uuid.uuid4().hex[:8]}"
    sign_in(page, user, section="skills")
    agent = seed(PageApi(page, hosted_stack), hosted)
    page.reload()  # the shell reads the agents once
    expect(page.get_by_test_id("user")).to_have_text(user)
    for lang, button in (("zh", "English"), ("en", "中文")):
        for section in SECTIONS:
            visit(page, section, lang, f"?agent={agent['agentId']}" if section in ("memories", "agents") else "")
        page.get_by_role("button", name=button).click()
        expect(page.locator("html")).to_have_attribute("lang", re.compile("en" if lang == "zh" else "zh"))


def test_a_table_on_a_phone_is_stacked_rows_led_by_their_column_names(page: Page, hosted_stack: StackClient,
                                                                      hosted: HostedServer) -> None:
    user = f"phone-{uuid.uuid4().hex[:8]}"
    sign_in(page, user, section="skills")
    seed(PageApi(page, hosted_stack), hosted)
    page.goto("/skills/#/reminders")
    cell = page.locator("table tbody tr td").first
    expect(cell).to_have_attribute("data-label", "状态")
    assert page.evaluate("getComputedStyle(document.querySelector('table tbody tr')).display") == "block"
    page.get_by_role("button", name="English").click()
    expect(cell).to_have_attribute("data-label", "Status")
    # On a wide screen the same table is a table again.
    page.set_viewport_size({"width": 1280, "height": 900})
    assert page.evaluate("getComputedStyle(document.querySelector('table tbody tr')).display") == "table-row"
