"""The chat turn's first read: everything it needs, keyed by user and conversation, in one BatchGetItem.

This crosses aggregates on purpose (conversation, the user's skill switches, the turn record and the
workflow session), because a plain turn has a budget of a handful of requests. Later issues add the
user's permission grants to the same batch.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from skillcore.conversations import conversation_store as conversations
from skillcore.conversations import profile_store as users
from skillcore.conversations import session_store as sessions
from skillcore.conversations import turn_store as turns
from skillcore.conversations.models import Conversation, WorkflowSession
from skillcore.db.dynamo import Db, batch_get
from skillcore.db.idempotency import Record


class TurnState(Struct, frozen=True):
    conversation: Conversation | None
    disabled_skills: frozenset[str]
    recorded: Record | None  # the turn record of a previous post with this clientMessageId
    session: WorkflowSession | None


def read_turn_state(db: Db, user_id: str, conversation_id: str, client_message_id: str) -> TurnState:
    wanted: dict[str, list[dict[str, Any]]] = {
        db.tables.conversations: [conversations.conversation_key(user_id, conversation_id)],
        db.tables.users: [users.bindings_key(user_id)],
        db.tables.turns: [turns.turn_slot(db, conversation_id, client_message_id).item_key],
        db.tables.sessions: [sessions.session_key(conversation_id)],
    }
    found = batch_get(db, wanted)
    conversation_items = found[db.tables.conversations]
    turn_items = found[db.tables.turns]
    session_items = found[db.tables.sessions]
    binding_items = found[db.tables.users]
    return TurnState(
        conversation=conversations.conversation_from_item(conversation_items[0]) if conversation_items else None,
        disabled_skills=users.disabled_skills(binding_items[0] if binding_items else None),
        recorded=turns.recorded(turn_items[0] if turn_items else None),
        session=sessions.session_from_item(session_items[0] if session_items else None),
    )
