"""The usage meter (Activity): the day's model tokens against the daily budget and the reset time, as
`GET /rpc/usage` answers them; it follows a chat turn's usage, and says so when the budget is spent."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from playwright.sync_api import Page, expect

from skillcore.db.dynamo import make_db
from skillcore.limits import store
from skillcore.settings import Settings
from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient


def test_the_meter_shows_the_days_tokens_the_budget_and_the_reset(page: Page, stack: StackClient, signed_in: Any) -> None:
    user = signed_in(section="activity", prefix="usage")
    api = PageApi(page, stack)
    usage = api.ok("GET", "/rpc/usage")
    budget = usage["tokensPerDay"]
    meter = page.locator("#usage-meter")
    expect(meter).to_have_attribute("max", str(budget))
    expect(meter).to_have_js_property("value", 0)
    expect(page.get_by_test_id("usage-text")).to_contain_text(f"今日已用 0 / {budget} 个模型 token")

    agent = api.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    api.ok("POST", f"/rpc/conversations/{agent['defaultConversationId']}/messages",
           {"clientMessageId": "usage-1", "text": "你好"})
    used = api.ok("GET", "/rpc/usage")["tokensUsed"]
    assert used > 0
    page.get_by_role("button", name="刷新").click()
    expect(meter).to_have_js_property("value", used)
    expect(page.get_by_test_id("usage-text")).to_contain_text(f"今日已用 {used} / {budget}")
    expect(page.get_by_test_id("usage-spent")).to_have_count(0)

    store.add(make_db(Settings.from_env(stack.env)), user, budget, datetime.now(UTC))
    page.get_by_role("button", name="刷新").click()
    expect(page.get_by_test_id("usage-spent")).to_contain_text("今日模型额度已用完")
    expect(meter).to_have_js_property("value", budget)
    screenshot(page, "usage-meter")
