"""The first load with the chat open (issue 24 point 2): the page budget of tests/browser/test_page_budget.py
(at most 150 KB transferred, at most 6 API requests before usable, nothing from another origin) holds on
`#/agents` with a conversation whose replies are Markdown, the renderer and sanitiser counted."""

from __future__ import annotations

from playwright.sync_api import Browser

from scripts.page_load import measure_first_load
from tests.browser.conftest import new_user
from tests.browser.test_page_budget import BUDGET_API_REQUESTS, BUDGET_BYTES
from tests.local_stack import StackClient

CHAT_USABLE = "[data-testid=chat-log] li[data-role=assistant] [data-testid=message-text]"


def test_first_load_with_the_chat_open_is_within_budget(browser: Browser, stack: StackClient) -> None:
    user = new_user("budget-chat")
    token = stack.token(user)
    assert stack.call("PUT", "/rpc/me", {"timezone": "Asia/Shanghai"}, token=token)[0] in (200, 201)
    status, agent = stack.call("POST", "/rpc/agents", {"name": "Mika"}, token=token)
    assert status == 201
    status, _ = stack.call("POST", f"/rpc/conversations/{agent['defaultConversationId']}/messages",
                           {"clientMessageId": "m1", "text": "/goal 跑一次十公里"}, token=token)
    assert status == 200
    load = measure_first_load(browser, stack.url, token, path=f"/skills/#/agents?agent={agent['agentId']}",
                              usable=CHAT_USABLE)
    figures = "\n".join(f"{f.method} {f.url} {f.status} {f.body_bytes}+{f.header_bytes}" for f in load.fetched)
    print(f"\nchat first load: {load.total_bytes} bytes, {len(load.api_requests)} API requests, "
          f"usable in {load.usable_ms:.0f} ms\n{figures}")
    assert load.failed == []
    assert load.other_origins == []
    assert load.total_bytes <= BUDGET_BYTES, figures
    assert 1 <= len(load.api_requests) <= BUDGET_API_REQUESTS, figures
