"""Turns table: duplicate-message recovery for chat turns, kept as idempotency records (db/idempotency.py).

Key design: pk = conversationId, sk = clientMessageId. The item holds a SHA-256 of the text (`textSha256`, the
payload fingerprint: it tells a retry from a conflicting reuse of the id) and the full response body
(`response`), returned verbatim on a retry. It is claimed inside the turn's transaction, already complete, under
attribute_not_exists, so of two concurrent identical posts exactly one commits; the other reads the winner's
response from the lost condition (ALL_OLD). Items expire after TURN_TTL_DAYS.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from skillcore.db import idempotency as idem
from skillcore.db.dynamo import Db
from skillcore.db.transact import Op

TURN_TTL_DAYS = 30
SCHEME = idem.Scheme("turn", payload=("textSha256",), response="response")


def text_digest(text: str) -> str:
    return idem.fingerprint(text)


def payload(text: str) -> dict[str, str]:
    return {"textSha256": text_digest(text)}


def turn_slot(db: Db, conversation_id: str, client_message_id: str) -> idem.Slot:
    return idem.Slot(SCHEME, db.tables.turns, {"pk": conversation_id, "sk": client_message_id})


def put_turn_op(
    db: Db, conversation_id: str, client_message_id: str, *, text: str, response: dict[str, Any], now: datetime
) -> Op:
    """The turn's record, claimed complete (named "turn" in the turn's transaction)."""
    return idem.claim_op(turn_slot(db, conversation_id, client_message_id), payload(text), {
        "response": idem.encode_response(response),
        "expiresAt": int((now + timedelta(days=TURN_TTL_DAYS)).timestamp()),
    })


def recorded(item: dict[str, Any] | None) -> idem.Record | None:
    """The record of a stored turn item (read with the turn's state)."""
    return idem.record_of(SCHEME, item)


def get_turn(db: Db, conversation_id: str, client_message_id: str) -> idem.Record | None:
    return idem.read(db, turn_slot(db, conversation_id, client_message_id))
