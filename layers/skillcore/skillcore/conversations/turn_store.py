"""Turns table: duplicate-message recovery for chat turns.

Key design: pk = conversationId, sk = clientMessageId. The item holds a SHA-256 of the text (to tell a
retry from a conflicting reuse of the id) and the full response body, returned verbatim on a retry.
It is written inside the turn's transaction under attribute_not_exists, so of two concurrent identical
posts exactly one commits; the other reads the winner's response. Items expire after TURN_TTL_DAYS.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from typing import Any

from skillcore.db.codec import from_item, to_item
from skillcore.db.dynamo import Db, key

TURN_TTL_DAYS = 30


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def turn_key(conversation_id: str, client_message_id: str) -> dict[str, Any]:
    return key(pk=conversation_id, sk=client_message_id)


def put_turn_op(
    db: Db, conversation_id: str, client_message_id: str, *, text: str, response: dict[str, Any], now: datetime
) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": db.tables.turns,
            "Item": to_item(
                {
                    "pk": conversation_id,
                    "sk": client_message_id,
                    "textSha256": text_digest(text),
                    "response": json.dumps(response, ensure_ascii=False, separators=(",", ":")),
                    "expiresAt": int((now + timedelta(days=TURN_TTL_DAYS)).timestamp()),
                }
            ),
            "ConditionExpression": "attribute_not_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": "pk"},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def recorded_response(item: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """(text digest, response body) of a stored turn item."""
    if not item:
        return None
    return item["textSha256"], json.loads(item["response"])


def get_turn(db: Db, conversation_id: str, client_message_id: str) -> tuple[str, dict[str, Any]] | None:
    response = db.client.get_item(
        TableName=db.tables.turns, Key=turn_key(conversation_id, client_message_id), ConsistentRead=True
    )
    return recorded_response(from_item(response.get("Item")))
