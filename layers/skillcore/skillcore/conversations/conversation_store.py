"""Conversations table.

Key design: pk = userId, sk = conversationId. The item carries a copy of its member agents' cards
(agents are immutable), so a chat turn learns the answering agent's name and persona from the same read.
Counters (`messageCount` of visible messages, `lastMessageAt`, `lastMessagePreview`) are maintained by the
writers of messages: the chat turn in its transaction, background writers by recounting.
Access patterns: get one (pk+sk, batched into the chat turn's first read), list a user's conversations
(Query pk, optional filter on kind: kinds are few and a user's conversations are few), and for operators
the owner of a conversation id (GSI `byConversationId`, hash = sk, keys only: counter updates never touch it).
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from msgspec.structs import asdict

from skillcore.clock import parse_time, to_api_time
from skillcore.conversations.models import AgentCard, Conversation, ConversationKind
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, key, query_page
from skillcore.db.errors import ConditionFailed
from skillcore.db.transact import Op, write


def conversation_key(user_id: str, conversation_id: str) -> dict[str, Any]:
    return key(pk=user_id, sk=conversation_id)


def to_conversation_item(conversation: Conversation) -> dict[str, Any]:
    return to_item(
        {
            "pk": conversation.user_id,
            "sk": conversation.conversation_id,
            "kind": conversation.kind.value,
            "agents": [asdict(a) for a in conversation.agents],
            "title": conversation.title,
            "messageCount": conversation.message_count,
            "lastMessageAt": to_api_time(conversation.last_message_at) if conversation.last_message_at else None,
            "lastMessagePreview": conversation.last_message_preview,
            "automationJobId": conversation.automation_job_id,
            "createdAt": to_api_time(conversation.created_at),
        }
    )


def conversation_from_item(item: dict[str, Any]) -> Conversation:
    return Conversation(
        user_id=item["pk"],
        conversation_id=item["sk"],
        kind=ConversationKind(item["kind"]),
        agents=tuple(AgentCard(**a) for a in item.get("agents", [])),
        title=item.get("title", ""),
        message_count=int(item.get("messageCount", 0)),
        last_message_at=parse_time(item["lastMessageAt"]) if item.get("lastMessageAt") else None,
        last_message_preview=item.get("lastMessagePreview"),
        automation_job_id=item.get("automationJobId"),
        created_at=parse_time(item["createdAt"]),
    )


def get_conversation(db: Db, user_id: str, conversation_id: str) -> Conversation | None:
    response = db.client.get_item(TableName=db.tables.conversations, Key=conversation_key(user_id, conversation_id))
    item = from_item(response.get("Item"))
    return conversation_from_item(item) if item else None


BY_CONVERSATION_ID = "byConversationId"


def owner_of(db: Db, conversation_id: str) -> str | None:
    response = db.client.query(
        TableName=db.tables.conversations, IndexName=BY_CONVERSATION_ID,
        KeyConditionExpression="#sk = :id", ExpressionAttributeNames={"#sk": "sk"},
        ExpressionAttributeValues={":id": {"S": conversation_id}}, Limit=1,
    )
    items = response.get("Items", [])
    return items[0]["pk"]["S"] if items else None


def list_conversations(
    db: Db, user_id: str, *, kind: ConversationKind | None, limit: int, cursor: str | None
) -> tuple[list[Conversation], str | None]:
    page = query_page(
        db,
        table=db.tables.conversations,
        partition=("pk", user_id),
        limit=limit,
        cursor=cursor,
        filter_expression="#kind = :kind" if kind else None,
        names={"#kind": "kind"} if kind else None,
        values={":kind": kind.value} if kind else None,
    )
    return [conversation_from_item(i) for i in page.items], page.next_cursor


def list_all(db: Db, user_id: str) -> list[Conversation]:
    items, cursor = list_conversations(db, user_id, kind=None, limit=100, cursor=None)
    while cursor:
        more, cursor = list_conversations(db, user_id, kind=None, limit=100, cursor=cursor)
        items += more
    return items


def put_conversation_op(db: Db, conversation: Conversation) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": db.tables.conversations,
            "Item": to_conversation_item(conversation),
            "ConditionExpression": "attribute_not_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": "pk"},
        }
    }


def put_conversation(db: Db, conversation: Conversation) -> None:
    write(db, Op("conversation", put_conversation_op(db, conversation)))


def record_visible_messages_op(
    db: Db, user_id: str, conversation_id: str, *, added: int, last_at: datetime, last_text: str
) -> dict[str, Any]:
    """Counts `added` visible messages and moves the summary forward (never backwards in time)."""
    return {
        "Update": {
            "TableName": db.tables.conversations,
            "Key": conversation_key(user_id, conversation_id),
            "UpdateExpression": "SET #lat = :at, #prev = :prev ADD #count :n",
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": {
                "#lat": "lastMessageAt", "#prev": "lastMessagePreview", "#count": "messageCount", "#pk": "pk",
            },
            "ExpressionAttributeValues": {
                ":at": to_value(to_api_time(last_at)), ":prev": to_value(last_text), ":n": to_value(added),
            },
        }
    }


def count_messages_op(db: Db, user_id: str, conversation_id: str, *, added: int) -> dict[str, Any]:
    """Counts visible messages only; written in the same transaction as the messages it counts."""
    return {
        "Update": {
            "TableName": db.tables.conversations,
            "Key": conversation_key(user_id, conversation_id),
            "UpdateExpression": "ADD #count :n",
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": {"#count": "messageCount", "#pk": "pk"},
            "ExpressionAttributeValues": {":n": to_value(added)},
        }
    }


def advance_summary(db: Db, user_id: str, conversation_id: str, *, at: datetime, preview: str) -> None:
    """Sets the last-message summary unless a newer message already did: it never moves backwards, so
    concurrent writers (a chat turn, a reminder) cannot undo each other."""
    conversation_exists, not_newer = "attribute_exists(#pk)", "(attribute_not_exists(#lat) OR #lat <= :at)"
    with contextlib.suppress(ConditionFailed):  # absent, or a newer message got there first
        write(db, Op("conversation_summary", {"Update": {
            "TableName": db.tables.conversations,
            "Key": conversation_key(user_id, conversation_id),
            "UpdateExpression": "SET #lat = :at, #prev = :prev",
            "ConditionExpression": f"{conversation_exists} AND {not_newer}",
            "ExpressionAttributeNames": {"#lat": "lastMessageAt", "#prev": "lastMessagePreview", "#pk": "pk"},
            "ExpressionAttributeValues": {":at": to_value(to_api_time(at)), ":prev": to_value(preview)},
        }}))
