"""A code tool's recent outcomes, from the person's own audit trail (`tool.execute` events: codes, ids and times
only): how many calls ended how, and the last few, for the Skills page.

One Query: the newest AUDIT_WINDOW events of the user's trail (any action), of which the code tools' are counted.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from msgspec import Struct

from skillcore.db.dynamo import Db
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, Decision

AUDIT_WINDOW = 100
LAST = 5


class Outcome(Struct, frozen=True, kw_only=True):
    at: datetime
    code: str  # `succeeded`, a sandbox code (`sandbox_fuel_exhausted`, ...), `host_call_denied`, a denial's reason


class Summary(Struct, frozen=True, kw_only=True):
    calls: int = 0
    counts: dict[str, int] = {}
    last: tuple[Outcome, ...] = ()


def recent(db: Db, user_id: str, tools: set[tuple[str, str]]) -> dict[tuple[str, str], Summary]:
    """(skill id, tool id) -> its summary, over the user's newest audit events."""
    events, _ = audit_store.list_audit(db, user_id, limit=AUDIT_WINDOW, cursor=None)
    ended: dict[tuple[str, str], list[Outcome]] = {t: [] for t in tools}
    for event in events:  # newest first
        tool_id = event.metadata.tool_id if event.metadata else None
        key = (event.skill_id, tool_id or "")
        if event.action is not AuditAction.TOOL_EXECUTE or key not in ended or event.decision is Decision.ALLOWED:
            continue
        code = "succeeded" if event.decision is Decision.SUCCEEDED else (
            (event.metadata.error_code if event.metadata else None) or event.reason or event.decision.value)
        ended[key].append(Outcome(at=event.at, code=code))
    return {key: Summary(calls=len(found), counts=dict(Counter(o.code for o in found)), last=tuple(found[:LAST]))
            for key, found in ended.items()}
