"""Readable replies in the chat (issue 24 point 2), in Chromium against a stack that reaches the real MCP test
server (tests/hosted_server.py): the agent's Markdown rendered through the page's allow-list (lib/markdown.js,
never HTML); a `/hosted` call's approval as a card with the whole arguments and approve / deny buttons, in the
conversation's language; approving there runs the call, whose result arrives as a card marked as data."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageApi, screenshot
from tests.browser.test_agents_chat import box, last_reply, messages, say
from tests.browser.test_hosted import GRANT, SLOW_MS, context  # noqa: F401 - the hosted stack's browser context
from tests.hosted_server import HostedServer
from tests.local_stack import StackClient


class Api(PageApi):
    def setup(self, hosted: HostedServer, name: str) -> dict[str, Any]:
        """An endpoint (its tools need an approval per call, as new tools do), the grant, and an agent."""
        self.ok("POST", "/rpc/hosted-endpoints", {"name": name, "displayName": f"Flow {name}", "url": hosted.url()},
                status=201)
        self.ok("PATCH", "/rpc/skills/permissions", {**GRANT, "granted": True})
        return self.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)

    def history(self, conversation_id: str) -> list[dict[str, Any]]:
        return self.ok("GET", f"/rpc/conversations/{conversation_id}/messages?limit=100")["items"]


def open_chat(page: Page, hosted_stack: StackClient, hosted: HostedServer, signed_in: Any, name: str) -> tuple[Api, dict]:
    signed_in(section="agents", prefix="replies")
    api = Api(page, hosted_stack)
    agent = api.setup(hosted, name)
    page.goto(f"/skills/#/agents?agent={agent['agentId']}")
    page.reload()
    expect(box(page)).to_be_visible()
    return api, agent


def test_the_agents_markdown_is_rendered_and_nothing_in_it_is_html(page: Page, hosted_stack: StackClient,
                                                                  hosted: HostedServer, signed_in: Any) -> None:
    open_chat(page, hosted_stack, hosted, signed_in, "md_flow")
    # The offline model repeats what it heard: the reply carries this Markdown back.
    reply, _ = say(page, "**重点** 和 `代码` <b>粗</b> <img src=x onerror=alert(1)> [坏](javascript:alert(1)) [好](https://example.com/a)")
    text = reply.get_by_test_id("message-text")
    expect(text.locator("strong")).to_have_text("重点")
    expect(text.locator("code")).to_have_text("代码")
    assert text.locator("b, img, script").count() == 0
    expect(text).to_contain_text("<b>粗</b>")
    expect(text).to_contain_text("<img src=x onerror=alert(1)>")
    expect(text.get_by_role("link", name="好")).to_have_attribute("href", "https://example.com/a")
    assert text.get_by_role("link", name="坏").count() == 0  # a javascript: link is its text alone
    expect(text).to_contain_text("坏")
    # the person's own message stays as typed, Markdown characters and all
    expect(messages(page).first.get_by_test_id("message-text")).to_contain_text("**重点**")
    # an underscore inside a word is no emphasis (snake_case names are common in replies)
    reply, _ = say(page, "call test_flow.add_numbers and _this_")
    expect(reply.get_by_test_id("message-text")).to_contain_text("test_flow.add_numbers")
    expect(reply.get_by_test_id("message-text").locator("em")).to_have_text("this")
    # a numbered list becomes a list
    reply, _ = say(page, "计划：\n\n1. 回顾上周\n2. 列出本周三件重点")
    expect(reply.get_by_test_id("message-text").locator("ol > li")).to_have_count(2)
    screenshot(page, "chat-markdown")


@pytest.mark.parametrize("language", ["zh", "en"])
def test_an_approval_is_a_card_approving_runs_the_call_and_the_result_is_a_data_card(
        page: Page, hosted_stack: StackClient, hosted: HostedServer, signed_in: Any, language: str) -> None:
    api, agent = open_chat(page, hosted_stack, hosted, signed_in, f"card_flow_{language}")
    if language == "en":
        page.get_by_role("button", name="English").click()
    say(page, "你好，帮我算一下" if language == "zh" else "hello, please add two numbers")
    reply, turn = say(page, f'/hosted card_flow_{language}.add {{"a": 2, "b": 3}}')
    card = reply.get_by_test_id("approval-card")
    tool = f"card_flow_{language}.add"
    title = f"调用 {tool} 需要你的批准" if language == "zh" else f"Calling {tool} needs your approval"
    expect(card).to_contain_text(title)
    expect(card.get_by_test_id("card-arguments")).to_have_text('{"a":2,"b":3}')
    # the text it replaces (a fence, `│` quotes) is not shown; the server's text is in the conversation's language
    log = page.get_by_test_id("chat-log")
    expect(log).not_to_contain_text("│")
    expect(log).not_to_contain_text("```")
    assert turn["reply"]["text"].startswith("调用" if language == "zh" else "Calling")
    assert turn["reply"]["card"]["kind"] == "approval" and turn["reply"]["card"]["replacesText"] is True
    approval_id = turn["reply"]["card"]["approvalId"]
    screenshot(page, f"chat-approval-card-{language}")

    approve = card.get_by_role("button", name=f"批准并调用 {tool}" if language == "zh" else f"Approve and call {tool}")
    with page.expect_response(lambda r: r.url.endswith(f"/rpc/approvals/{approval_id}"), timeout=SLOW_MS) as decided:
        approve.click()
    assert decided.value.status == 200 and decided.value.json()["status"] in ("approved", "used")
    result = last_reply(page).get_by_test_id("result-card")
    expect(result).to_be_visible(timeout=SLOW_MS)
    expect(result.get_by_test_id("card-content")).to_have_text("5")
    expect(result).to_contain_text("外部数据" if language == "zh" else "External data")
    expect(result).to_contain_text("来自外部服务的数据，不是指令。" if language == "zh"
                                   else "Data from an external service, not instructions.")
    expect(log).not_to_contain_text("hosted-result")
    expect(card.get_by_role("button", name=re.compile("批准|Approve"))).to_be_disabled()
    screenshot(page, f"chat-result-card-{language}")

    # the API has the same: the result message with its card; the approval used once
    last = api.history(agent["defaultConversationId"])[-1]
    assert last["card"] == {"kind": "hosted_result", "endpointId": last["card"]["endpointId"],
                            "endpointName": f"card_flow_{language}", "toolName": "add", "isError": False,
                            "content": "5", "replacesText": True}, json.dumps(last)
    assert [a["approvalId"] for a in api.ok("GET", "/rpc/approvals?status=used")["items"]] == [approval_id]


def test_denying_on_the_card_calls_nothing(page: Page, hosted_stack: StackClient, hosted: HostedServer,
                                           signed_in: Any) -> None:
    api, agent = open_chat(page, hosted_stack, hosted, signed_in, "deny_flow")
    calls_before = hosted.calls["add"]
    reply, turn = say(page, '/hosted deny_flow.add {"a": 1, "b": 1}')
    card = reply.get_by_test_id("approval-card")
    card.get_by_role("button", name="拒绝 deny_flow.add").click()
    expect(card.get_by_test_id("card-status")).to_have_text("已拒绝：没有调用。")
    expect(last_reply(page).get_by_test_id("message-text")).to_have_text("已拒绝：deny_flow.add 没有被调用。")
    # deciding again (another tab, or a stale view) says it is no longer pending
    status, _ = hosted_stack.call("POST", f"/rpc/approvals/{turn['reply']['card']['approvalId']}",
                                  {"decision": "approve"}, token=api.token)
    assert status == 409
    assert hosted.calls["add"] == calls_before
    assert api.history(agent["defaultConversationId"])[-1].get("card") is None


def test_a_try_whose_approval_is_denied_on_the_page_says_so_and_sends_nothing(
        page: Page, hosted_stack: StackClient, hosted: HostedServer, signed_in: Any) -> None:
    signed_in(section="hosted", prefix="replies")
    api = Api(page, hosted_stack)
    api.setup(hosted, "try_flow")
    page.reload()
    endpoint = page.locator('article[data-endpoint="try_flow"]')
    endpoint.get_by_role("button", name="试用工具 echo").click()
    form = endpoint.get_by_test_id("try-it")
    form.get_by_label(re.compile(r"^text")).fill("hi")
    with page.expect_response(lambda r: r.url.endswith("/calls") and r.request.method == "POST",
                              timeout=SLOW_MS) as answer:
        form.get_by_role("button", name="发送调用").click()
    assert answer.value.status == 409
    approval_id = answer.value.json()["error"]["details"]["approvalId"]
    expect(form.get_by_test_id("approval-required")).to_contain_text("批准后，它会自动重新发送")
    calls_before = hosted.calls["echo"]
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/calls") else None)
    form.get_by_test_id("approval-link").click()
    item = page.locator(f'li[data-approval="{approval_id}"]')
    with page.expect_response(lambda r: r.url.endswith(f"/rpc/approvals/{approval_id}")) as decided:
        item.get_by_role("button", name="拒绝调用 echo（Flow try_flow）").click()
    assert decided.value.status == 200
    expect(form.get_by_test_id("try-denied")).to_have_text("审批被拒绝：这次调用没有发送。")
    assert sent == [] and hosted.calls["echo"] == calls_before
