"""Audit table: skill_audit_events.

Key design: pk = userId, sk = eventId (a ULID: time order). Items are AuditEvent dumps: identifiers, codes,
digests and counts only (see policy/audit.py). They expire after AUDIT_TTL_DAYS.
Access patterns: a user's events newest first (Query pk, ScanIndexForward false); filtered by time range
(a key condition: sk BETWEEN the ULIDs of the range's ends) and by skill, action, outcome and endpoint (a
FilterExpression on that one partition, never a Scan; `query_audit` bounds the reads a page takes); append
(Put, usually as part of the transaction that records the outcome it describes). No index.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import msgspec
from msgspec import Struct

from skillcore.clock import parse_time, to_api_time
from skillcore.db.codec import to_item
from skillcore.db.dynamo import Db, encode_cursor, key, query_page
from skillcore.policy.audit import AuditEvent, AuditMetadata, Decision
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


# -- filtered queries ------------------------------------------------------------------------------------------

# A filtered page makes at most this many Query calls, each evaluating at most `limit` (<= 100) items of one
# user's partition within the time range: at most 5 x 100 = 500 items (each Query also stops at 1 MB), whatever
# the filters match. A page that reaches the bound with fewer than `limit` matches is returned as is (it may be
# empty) with a cursor: the client follows it to go on.
AUDIT_PAGE_READS = 5

_RANDOM_BITS = 80


def _ulid_text(value: int) -> str:
    """128 bits as a ULID's 26 Crockford base32 characters (ids.new_id's layout)."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    chars = []
    for _ in range(26):
        chars.append(alphabet[value & 31])
        value >>= 5
    return "".join(reversed(chars))


class AuditFilter(Struct, frozen=True, kw_only=True):
    """What an audit query keeps. `action` is an action's value, or a prefix ending in "." (every action of a
    family, `hosted_endpoint.`); `since` is inclusive and `until` exclusive (at millisecond precision, the
    event id's)."""

    skill_id: str | None = None
    action: str | None = None
    decision: Decision | None = None
    endpoint_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


class AuditQueryParts(Struct, frozen=True):
    sort_condition: str | None
    filter_expression: str | None
    names: dict[str, str]
    values: dict[str, Any]


def _millis(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _sk_range(f: AuditFilter) -> tuple[int, int]:
    """The ULIDs (as integers) from the first of `since`'s millisecond to the last before `until`'s."""
    low = max(_millis(f.since), 0) << _RANDOM_BITS if f.since is not None else 0
    high = (max(_millis(f.until), 0) << _RANDOM_BITS) - 1 if f.until is not None else (1 << 128) - 1
    return low, high


def empty_range(f: AuditFilter) -> bool:
    low, high = _sk_range(f)
    return high < low


def build_query(f: AuditFilter) -> AuditQueryParts:
    """The Query's parts: the time range as a key condition on sk (the event id is a ULID, whose first ten
    characters are its millisecond), the other fields as a FilterExpression, every attribute through
    ExpressionAttributeNames."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    sort_condition = None
    if f.since is not None or f.until is not None:
        low, high = _sk_range(f)
        names["#sk"] = "sk"
        values[":from"], values[":to"] = _ulid_text(low), _ulid_text(high)
        sort_condition = "#sk BETWEEN :from AND :to"
    clauses = []
    if f.skill_id is not None:
        names["#skillId"] = "skillId"
        values[":skillId"] = f.skill_id
        clauses.append("#skillId = :skillId")
    if f.action is not None:
        names["#action"] = "action"
        values[":action"] = f.action
        clauses.append("begins_with(#action, :action)" if f.action.endswith(".") else "#action = :action")
    if f.decision is not None:
        names["#decision"] = "decision"
        values[":decision"] = f.decision.value
        clauses.append("#decision = :decision")
    if f.endpoint_id is not None:
        names["#metadata"] = "metadata"
        names["#endpointId"] = "endpoint_id"
        values[":endpointId"] = f.endpoint_id
        clauses.append("#metadata.#endpointId = :endpointId")
    return AuditQueryParts(sort_condition=sort_condition, filter_expression=" AND ".join(clauses) or None,
                           names=names, values=values)


def query_audit(db: Db, user_id: str, f: AuditFilter, *, limit: int,
                cursor: str | None) -> tuple[list[AuditEvent], str | None]:
    """One user's events that `f` keeps, newest first: Queries of the user's partition (never a Scan), at most
    AUDIT_PAGE_READS of them, until `limit` events are found. The cursor is the key of the last event served
    (when a read found more than the page holds) or where the last read stopped."""
    if empty_range(f):
        return [], None
    parts = build_query(f)
    found: list[dict[str, Any]] = []
    next_cursor = cursor
    for _ in range(AUDIT_PAGE_READS if parts.filter_expression else 1):
        page = query_page(db, table=db.tables.audit, partition=("pk", user_id), limit=limit, cursor=next_cursor,
                          newest_first=True, sort_condition=parts.sort_condition, values=parts.values,
                          names=parts.names, filter_expression=parts.filter_expression)
        found.extend(page.items)
        next_cursor = page.next_cursor
        if len(found) > limit:  # the read found more than the page holds: go on after the last one served
            found = found[:limit]
            next_cursor = encode_cursor(key(pk=found[-1]["pk"], sk=found[-1]["sk"]))
            break
        if len(found) == limit or next_cursor is None:
            break
    return [audit_from_item(i) for i in found], next_cursor
