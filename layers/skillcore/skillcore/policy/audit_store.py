"""Audit table: skill_audit_events.

Key design: pk = userId, sk = eventId (a ULID: time order). Items are AuditEvent dumps: identifiers, codes,
digests and counts only (see policy/audit.py). They expire after AUDIT_TTL_DAYS.
Access patterns: a user's events newest first (Query pk, ScanIndexForward false); append (Put, usually as
part of the transaction that records the outcome it describes).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec

from skillcore.clock import parse_time, to_api_time
from skillcore.db.codec import to_item
from skillcore.db.dynamo import Db, query_page
from skillcore.policy.audit import AuditEvent, AuditMetadata
from skillcore.policy.grants import GrantScope

AUDIT_TTL_DAYS = 400


def to_audit_item(event: AuditEvent) -> dict[str, Any]:
    return to_item({
        "pk": event.user_id,
        "sk": event.event_id,
        "at": to_api_time(event.at),
        "skillId": event.skill_id,
        "skillVersion": event.skill_version,
        "action": event.action.value,
        "decision": event.decision.value,
        "scope": msgspec.to_builtins(event.scope) if event.scope else None,
        "targetId": event.target_id,
        "reason": event.reason,
        "metadata": msgspec.to_builtins(event.metadata),  # unset fields are omitted (omit_defaults)
        "expiresAt": int((event.at + timedelta(days=AUDIT_TTL_DAYS)).timestamp()),
    })


def audit_from_item(item: dict[str, Any]) -> AuditEvent:
    return AuditEvent(
        event_id=item["sk"], user_id=item["pk"], at=parse_time(item["at"]), skill_id=item["skillId"],
        skill_version=item["skillVersion"], action=item["action"], decision=item["decision"],
        scope=GrantScope(**item["scope"]) if item.get("scope") else None, target_id=item.get("targetId"),
        reason=item.get("reason"), metadata=AuditMetadata(**item.get("metadata", {})),
    )


def put_audit_op(db: Db, event: AuditEvent) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.audit, "Item": to_audit_item(event)}}


def put_audit(db: Db, event: AuditEvent) -> None:
    db.client.put_item(TableName=db.tables.audit, Item=to_audit_item(event))


def list_audit(db: Db, user_id: str, *, limit: int, cursor: str | None) -> tuple[list[AuditEvent], str | None]:
    page = query_page(db, table=db.tables.audit, partition=("pk", user_id), limit=limit, cursor=cursor, newest_first=True)
    return [audit_from_item(i) for i in page.items], page.next_cursor
