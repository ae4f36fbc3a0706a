"""Readable hosted replies over real HTTP (issue 24 point 2): a stack whose functions reach the real test MCP
server (tests/hosted_server.py). A `/hosted` command is answered in the conversation's language (its JSON is no
one's); the approval prompt and the result carry a card (Message.card) in the turn's answer, in the history, and
in the message HostedFunction posts after an approval given by API; a replayed turn answers the same card."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.hosted_server import HostedServer

from .conftest import StackClient
from .test_hosted_chat_http import ChatUser


@pytest.fixture(scope="module")
def stack(hosted_stack: StackClient) -> StackClient:
    """The shared stack whose functions reach the real test MCP server (tests/local_stack.py `hosted_stack`)."""
    return hosted_stack


ADD = '/hosted test_flow.add {"a": 2, "b": 3}'


class CardUser(ChatUser):
    def turn(self, text: str, client_id: str | None = None) -> dict[str, Any]:
        return self.ok("POST", f"/rpc/conversations/{self.conversation}/messages",
                       {"clientMessageId": client_id or uuid.uuid4().hex, "text": text})


@pytest.mark.parametrize(("opening", "asked", "result"), [
    ("你好，帮我算一下", "调用 test_flow.add 需要你的批准", "test_flow.add 的结果"),
    ("hello, please add these", "Calling test_flow.add needs your approval", "Result of test_flow.add"),
])
def test_the_approval_and_the_result_carry_cards_in_the_conversations_language(
        stack: StackClient, hosted: HostedServer, opening: str, asked: str, result: str) -> None:
    user = CardUser(stack, hosted)
    user.turn(opening)
    client_id = uuid.uuid4().hex
    turn = user.turn(ADD, client_id)
    reply = turn["reply"]
    assert reply["text"].startswith(asked)
    card = reply["card"]
    [approval] = user.pending()
    assert card == {"kind": "approval", "endpointId": user.endpoint_id, "endpointName": "test_flow", "toolName": "add",
                    "approvalId": approval["approvalId"], "code": approval["approvalId"][-6:].upper(),
                    "arguments": '{"a":2,"b":3}', "expiresAt": approval["expiresAt"], "replacesText": True}
    # the history has it too, and a replay of the same turn answers the same card and calls nothing
    assert user.messages()[-1]["card"] == card
    assert user.turn(ADD, client_id)["reply"] == reply
    assert user.calls_out() == []

    decided = user.ok("POST", f"/rpc/approvals/{approval['approvalId']}", {"decision": "approve"})
    assert decided["status"] == "approved"
    last = user.messages()[-1]
    assert last["role"] == "assistant" and last["text"].startswith(result)
    assert last["card"] == {"kind": "hosted_result", "endpointId": user.endpoint_id, "endpointName": "test_flow",
                            "toolName": "add", "isError": False, "content": "5", "replacesText": True}
    assert len(user.calls_out()) == 1
    # the person's own earlier messages never carry a card
    assert all("card" not in m for m in user.messages() if m["role"] == "user")


def test_a_result_in_the_turn_itself_carries_its_card(stack: StackClient, hosted: HostedServer) -> None:
    user = CardUser(stack, hosted)
    reply = user.turn('/hosted test_flow.echo {"text": "<b>hi</b>"}')["reply"]
    assert reply["card"]["kind"] == "hosted_result" and reply["card"]["content"] == "echo: <b>hi</b>"
    assert reply["card"]["isError"] is False and "approvalId" not in reply["card"]
    # the text stays whole for a client that reads only the text
    assert "│ echo: <b>hi</b>" in reply["text"]
    # a refusal has no card
    refused = user.turn('/hosted test_flow.nothing {"a": 1}')["reply"]
    assert "card" not in refused
