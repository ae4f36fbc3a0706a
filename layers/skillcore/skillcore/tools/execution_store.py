"""Tool executions table: skill_tool_executions.

Key design: pk = idempotency key (SHA-256 of userId + toolId + sourceMessageId), no sort key. One record
per key, created with a conditional put before the handler runs, completed afterwards. It holds exactly
the seed's fields: tool, skill, version, source message id, key, input digest, status, error code,
duration; never the input, memory text or output.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from skillcore.clock import to_api_time
from skillcore.conversations.models import ExecutionStatus
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, key
from skillcore.db.errors import ConditionFailed
from skillcore.db.transact import Op, write

EXECUTION_TTL_DAYS = 90


def create_execution(
    db: Db, *, idempotency_key: str, user_id: str, tool_id: str, skill_id: str, skill_version: str,
    source_message_id: str, input_sha256: str, now: datetime,
) -> dict[str, Any] | None:
    """Creates the record; returns None when created, or the existing record (the key was seen before)."""
    item = {
        "pk": idempotency_key, "userId": user_id, "toolId": tool_id, "skillId": skill_id,
        "skillVersion": skill_version, "sourceMessageId": source_message_id, "inputSha256": input_sha256,
        "status": ExecutionStatus.RUNNING.value, "createdAt": to_api_time(now), "updatedAt": to_api_time(now),
        "expiresAt": int((now + timedelta(days=EXECUTION_TTL_DAYS)).timestamp()),
    }
    try:
        write(db, Op("tool_execution", {"Put": {
            "TableName": db.tables.tool_executions, "Item": to_item(item),
            "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"},
        }}))
    except ConditionFailed as error:
        return error.old or {"pk": idempotency_key}
    return None


def finish_execution_op(
    db: Db, idempotency_key: str, *, status: ExecutionStatus, error_code: str | None, duration_ms: int, now: datetime
) -> dict[str, Any]:
    names = {"#status": "status", "#d": "durationMs", "#u": "updatedAt", "#e": "errorCode"}
    values: dict[str, Any] = {
        ":status": to_value(status.value), ":d": to_value(duration_ms), ":now": to_value(to_api_time(now)),
    }
    update = "SET #status = :status, #d = :d, #u = :now"
    if error_code:
        values[":e"] = to_value(error_code)
        update += ", #e = :e"
    else:
        update += " REMOVE #e"
    return {
        "Update": {
            "TableName": db.tables.tool_executions, "Key": key(pk=idempotency_key),
            "UpdateExpression": update, "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
        }
    }


def get_execution(db: Db, idempotency_key: str) -> dict[str, Any] | None:
    response = db.client.get_item(TableName=db.tables.tool_executions, Key=key(pk=idempotency_key), ConsistentRead=True)
    return from_item(response.get("Item"))
