"""Sessions table: the workflow Session of a conversation.

Key design: pk = conversationId, sk = "workflow". A conversation has at most one workflow session at a
time; the item keeps the last one (status active/completed/cancelled) and `revision`, bumped by every step
under a condition on the previous revision, so two turns can never both advance the same step.
Finished sessions expire after SESSION_TTL_DAYS.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from skillcore.clock import parse_time, to_api_time
from skillcore.conversations.models import SessionStatus, WorkflowSession
from skillcore.db.codec import to_item
from skillcore.db.dynamo import Db, key

SESSION_SK = "workflow"
SESSION_TTL_DAYS = 30


def session_key(conversation_id: str) -> dict[str, Any]:
    return key(pk=conversation_id, sk=SESSION_SK)


def session_from_item(item: dict[str, Any] | None) -> WorkflowSession | None:
    if not item:
        return None
    return WorkflowSession(
        conversation_id=item["pk"],
        session_id=item["sessionId"],
        skill_id=item["skillId"],
        skill_version=item["skillVersion"],
        status=SessionStatus(item["status"]),
        step=item["step"],
        slots=item.get("slots", {}),
        revision=int(item["revision"]),
        started_at=parse_time(item["startedAt"]),
        updated_at=parse_time(item["updatedAt"]),
    )


def put_session_op(db: Db, session: WorkflowSession, *, previous_revision: int | None) -> dict[str, Any]:
    """Writes the session's new state; `previous_revision` None means "no session item or a finished one"."""
    item = {
        "pk": session.conversation_id,
        "sk": SESSION_SK,
        "sessionId": session.session_id,
        "skillId": session.skill_id,
        "skillVersion": session.skill_version,
        "status": session.status.value,
        "step": session.step,
        "slots": dict(session.slots),
        "revision": session.revision,
        "startedAt": to_api_time(session.started_at),
        "updatedAt": to_api_time(session.updated_at),
        "expiresAt": None
        if session.active
        else int((session.updated_at + timedelta(days=SESSION_TTL_DAYS)).timestamp()),
    }
    names = {"#rev": "revision", "#pk": "pk"}
    if previous_revision is None:
        condition = "attribute_not_exists(#pk) OR #status <> :active"
        names["#status"] = "status"
        values = {":active": {"S": SessionStatus.ACTIVE.value}}
        names.pop("#rev")
    else:
        condition = "#rev = :prev"
        names.pop("#pk")
        values = {":prev": {"N": str(previous_revision)}}
    return {
        "Put": {
            "TableName": db.tables.sessions,
            "Item": to_item(item),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }
