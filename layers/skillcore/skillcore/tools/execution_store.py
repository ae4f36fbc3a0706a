"""Tool executions table: skill_tool_executions, kept as idempotency records (db/idempotency.py).

Key design: pk = idempotency key (SHA-256 of userId + toolId + sourceMessageId), no sort key. One record
per key, claimed with a conditional put before the handler runs (alone: 1 PutItem), completed afterwards in the
turn's transaction. It holds exactly the seed's fields: tool, skill, version, source message id, key, input
digest (`inputSha256`, the payload fingerprint), status, error code, duration; never the input, memory text or
output. A key met again is not refused: the runner runs the tool again (tools/runner.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from skillcore.clock import to_api_time
from skillcore.conversations.models import ExecutionStatus
from skillcore.db import idempotency as idem
from skillcore.db.dynamo import Db
from skillcore.db.transact import Op

EXECUTION_TTL_DAYS = 90
SCHEME = idem.Scheme("tool_execution", payload=("inputSha256",))


def execution_slot(db: Db, idempotency_key: str) -> idem.Slot:
    return idem.Slot(SCHEME, db.tables.tool_executions, {"pk": idempotency_key})


def create_execution(
    db: Db, *, idempotency_key: str, user_id: str, tool_id: str, skill_id: str, skill_version: str,
    source_message_id: str, input_sha256: str, now: datetime,
) -> dict[str, Any] | None:
    """Creates the record; returns None when created, or the existing record (the key was seen before)."""
    existing = idem.claim(db, execution_slot(db, idempotency_key), {"inputSha256": input_sha256}, {
        "userId": user_id, "toolId": tool_id, "skillId": skill_id, "skillVersion": skill_version,
        "sourceMessageId": source_message_id, "status": ExecutionStatus.RUNNING.value,
        "createdAt": to_api_time(now), "updatedAt": to_api_time(now),
        "expiresAt": int((now + timedelta(days=EXECUTION_TTL_DAYS)).timestamp()),
    })
    return existing.item if existing is not None else None


def finish_execution_op(
    db: Db, idempotency_key: str, *, status: ExecutionStatus, error_code: str | None, duration_ms: int, now: datetime
) -> Op:
    """The record's completion (named "tool_execution"), written in the turn's transaction."""
    done: dict[str, Any] = {"status": status.value, "durationMs": duration_ms, "updatedAt": to_api_time(now)}
    if error_code:
        done["errorCode"] = error_code
    return idem.complete_op(execution_slot(db, idempotency_key), done, remove=() if error_code else ("errorCode",))


def get_execution(db: Db, idempotency_key: str) -> dict[str, Any] | None:
    record = idem.read(db, execution_slot(db, idempotency_key))
    return record.item if record is not None else None
