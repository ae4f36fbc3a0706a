"""Readable hosted replies in the chat (issue 24 point 2): the language a `/hosted` command is answered in (the
conversation's: its tool name and JSON are no one's language), the structured card that goes with an approval
prompt and a result (conversations/models.py MessageCard), and the card's way through the message item and the
API body."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from skillcore.api.views.core import message as message_view
from skillcore.conversations import message_store
from skillcore.conversations.models import (
    AgentCard,
    CardKind,
    Conversation,
    ConversationKind,
    Message,
    MessageCard,
    Origin,
    Role,
)
from skillcore.executor.context import TurnContext
from skillcore.hosted import chat, chat_replies
from skillcore.hosted.call_answer import CallResult
from skillcore.hosted.chat_words import parse_command
from skillcore.language import Language

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
COMMAND = '/hosted test_flow.add {"a": 2, "b": 3}'


def said(role: Role, text: str) -> Message:
    return Message(message_id=f"m-{text}", conversation_id="c", role=role, agent_id=None, text=text,
                   origin=Origin.CHAT, created_at=NOW)


def context(text: str, history: list[Message]) -> TurnContext:
    agent = AgentCard(agent_id="a", name="Ada", persona="")
    return TurnContext(
        user_id="u", agent=agent, text=text, source_message_id="s", disabled_skills=frozenset(), session=None,
        now=NOW, load_history=lambda: history,
        conversation=Conversation(user_id="u", conversation_id="c", kind=ConversationKind.SINGLE, agents=(agent,),
                                  title="Ada", message_count=len(history), last_message_at=None,
                                  last_message_preview=None, created_at=NOW))


@pytest.mark.parametrize(("history", "expected"), [
    ([said(Role.USER, "你好"), said(Role.ASSISTANT, "Hello there")], Language.ZH),
    ([said(Role.USER, "hello"), said(Role.ASSISTANT, "你好")], Language.EN),
    # earlier commands are no one's language either; the person's own words before them decide
    ([said(Role.USER, "帮我算一下"), said(Role.USER, '/hosted test_flow.echo {"text": "hi"}')], Language.ZH),
    ([], Language.ZH),  # nothing said yet: the product's default
])
def test_a_hosted_command_takes_the_conversations_language(history: list[Message], expected: Language) -> None:
    ctx = context(COMMAND, history)
    assert chat.reply_language(ctx, parse_command(COMMAND)) is expected


def test_other_turns_keep_the_language_of_their_own_text() -> None:
    ctx = context("approve", [said(Role.USER, "你好")])
    assert chat.reply_language(ctx, None) is Language.EN


def test_the_approval_prompt_in_chinese_is_chinese_and_has_its_card() -> None:
    text = chat_replies.ask_text("test_flow.add", "01ABCDEFGH0123456789XYZ9K2", '{"a":2,"b":3}', Language.ZH)
    assert text.startswith("调用 test_flow.add 需要你的批准") and "Calling" not in text
    card = chat_replies.ask_card("ep-1", "test_flow", "add", "01ABCDEFGH0123456789XYZ9K2", '{"a":2,"b":3}', NOW)
    assert (card.kind, card.code, card.arguments, card.approval_id) == (
        CardKind.APPROVAL, "XYZ9K2", '{"a":2,"b":3}', "01ABCDEFGH0123456789XYZ9K2")
    assert card.expires_at == NOW + timedelta(minutes=10) and card.replaces_text


def test_a_result_card_holds_the_content_as_data_and_whether_it_was_an_error() -> None:
    result = CallResult(call_id="c1", is_error=True, content="```\n<b>boom</b>", duration_ms=3)
    card = chat_replies.result_card("ep-1", "test_flow", "add", result, replaces_text=False)
    assert (card.kind, card.is_error, card.content, card.replaces_text) == (
        CardKind.HOSTED_RESULT, True, "```\n<b>boom</b>", False)
    assert card.approval_id is None and card.arguments is None


@pytest.mark.parametrize("card", [
    None,
    MessageCard(kind=CardKind.APPROVAL, endpoint_id="ep", endpoint_name="flow", tool_name="add", approval_id="ap",
                code="AAAAAA", arguments='{"a":1}', expires_at=NOW + timedelta(minutes=10)),
    MessageCard(kind=CardKind.HOSTED_RESULT, endpoint_id="ep", endpoint_name="flow", tool_name="add",
                is_error=False, content="5", replaces_text=False),
])
def test_a_card_survives_the_message_item_and_reaches_the_body(card: MessageCard | None) -> None:
    stored = Message(message_id="m", conversation_id="c", role=Role.ASSISTANT, agent_id="a", text="t",
                     origin=Origin.CHAT, created_at=NOW, card=card)
    item = message_store.to_message_item(stored, "u")
    assert ("card" in item) is (card is not None)
    back = message_store.message_from_item({k: _plain(v) for k, v in item.items()})
    assert back == stored
    body: dict[str, Any] = msgspec.to_builtins(message_view(back))
    if card is None:
        assert "card" not in body  # older clients and messages: no field at all
        return
    assert body["card"]["kind"] == card.kind.value and body["card"]["replacesText"] is card.replaces_text
    if card.kind is CardKind.APPROVAL:
        assert body["card"]["expiresAt"] == "2026-12-03T12:10:00Z" and "content" not in body["card"]
    else:
        assert body["card"]["content"] == "5" and "approvalId" not in body["card"]


def _plain(value: dict[str, Any]) -> Any:
    """A DynamoDB attribute value as the store reads it back (db/codec.py from_item)."""
    from skillcore.db.codec import from_item

    return from_item({"x": value})["x"]  # type: ignore[index]
