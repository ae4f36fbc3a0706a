"""Messages table.

Key design: pk = conversationId, sk = messageId. The message id is the idempotency key of its writer
(a background job writes with messageId = jobId under attribute_not_exists, so a second write does nothing).
Two local secondary indexes order a conversation by time:
- `byTime` on `seq` = "<createdAt ms>#<messageId>": every message (the operator's audit view);
- `visibleByTime` on `visibleSeq`, set only on visible messages: a sparse index, so user history and
  counts never read hidden automation input at all (no filter, no wasted reads).
Access patterns: page through visible history (oldest first), the last N visible messages as model
context (newest first), every message for admins, conditional put.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from skillcore.clock import parse_time, to_sort_time
from skillcore.conversations.models import Message, MessageCard, Origin, Role
from skillcore.db.codec import from_item, to_item
from skillcore.db.dynamo import Db, key, query_page

BY_TIME = "byTime"
VISIBLE_BY_TIME = "visibleByTime"


def seq(message: Message) -> str:
    return f"{to_sort_time(message.created_at)}#{message.message_id}"


def to_message_item(message: Message, user_id: str) -> dict[str, Any]:
    return to_item(
        {
            "pk": message.conversation_id,
            "sk": message.message_id,
            "userId": user_id,
            "role": message.role.value,
            "agentId": message.agent_id,
            "text": message.text,
            "origin": message.origin.value,
            "hiddenFromUser": message.hidden_from_user,
            "createdAt": to_sort_time(message.created_at),
            "seq": seq(message),
            "visibleSeq": None if message.hidden_from_user else seq(message),
            # The card (structured data beside the text, models.MessageCard) as JSON text: absent without one.
            "card": msgspec.json.encode(message.card).decode() if message.card is not None else None,
        }
    )


def message_from_item(item: dict[str, Any]) -> Message:
    return Message(
        message_id=item["sk"],
        conversation_id=item["pk"],
        role=Role(item["role"]),
        agent_id=item.get("agentId"),
        text=item["text"],
        origin=Origin(item.get("origin", "chat")),
        hidden_from_user=bool(item.get("hiddenFromUser", False)),
        created_at=parse_time(item["createdAt"]),
        card=msgspec.json.decode(item["card"], type=MessageCard) if item.get("card") else None,
    )


def put_message_op(db: Db, message: Message, user_id: str) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": db.tables.messages,
            "Item": to_message_item(message, user_id),
            "ConditionExpression": "attribute_not_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": "pk"},
        }
    }


def list_messages(
    db: Db, conversation_id: str, *, include_hidden: bool, limit: int, cursor: str | None
) -> tuple[list[Message], str | None]:
    page = query_page(
        db,
        table=db.tables.messages,
        index=BY_TIME if include_hidden else VISIBLE_BY_TIME,
        partition=("pk", conversation_id),
        limit=limit,
        cursor=cursor,
    )
    return [message_from_item(i) for i in page.items], page.next_cursor


def recent_visible(db: Db, conversation_id: str, *, limit: int) -> list[Message]:
    """The last `limit` visible messages, oldest first (model context)."""
    if limit <= 0:
        return []
    page = query_page(
        db, table=db.tables.messages, index=VISIBLE_BY_TIME, partition=("pk", conversation_id),
        limit=limit, cursor=None, newest_first=True,
    )
    return [message_from_item(i) for i in reversed(page.items)]


def visible_since(db: Db, conversation_id: str, since: datetime, *, limit: int = 200) -> list[Message]:
    """Visible messages created at or after `since`, oldest first."""
    page = query_page(
        db, table=db.tables.messages, index=VISIBLE_BY_TIME, partition=("pk", conversation_id),
        limit=limit, cursor=None, sort_condition="#seq >= :since", names={"#seq": "visibleSeq"},
        values={":since": to_sort_time(since)},
    )
    return [message_from_item(i) for i in page.items]


def get_message(db: Db, conversation_id: str, message_id: str) -> Message | None:
    response = db.client.get_item(TableName=db.tables.messages, Key=key(pk=conversation_id, sk=message_id),
                                  ConsistentRead=True)
    item = from_item(response.get("Item"))
    return message_from_item(item) if item else None


def exists(db: Db, conversation_id: str, message_id: str) -> bool:
    response = db.client.get_item(TableName=db.tables.messages, Key=key(pk=conversation_id, sk=message_id),
                                  ConsistentRead=True, ProjectionExpression="#pk", ExpressionAttributeNames={"#pk": "pk"})
    return "Item" in response
