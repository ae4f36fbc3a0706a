"""Outcome counters: how the tool calls of one version of an installed (catalog) skill ended, counted per
version and per 5-minute bucket, in the catalog table (`SKILLS_TABLE_CATALOG`).

| item | pk | sk |
|---|---|---|
| one version's outcomes in one bucket | `out#<skillId>@<version>` | `b#<bucket>` (minutes since the epoch // 5, zero-padded) |

Each outcome is one atomic `ADD` on its bucket's item (`calls` and the outcome's own counter: `failures`,
`denials` or `timeouts`), written in the same transaction as the call's execution record and audit when the
ToolRunner records it (tools/runner.py), so a count is never lost nor doubled. The canary's evaluation reads the
buckets of its window for two versions with BatchGetItem (100 keys a request). No Scan; no text, only counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from msgspec import Struct

from skillcore.db.codec import to_value
from skillcore.db.dynamo import Db, batch_get, key

BUCKET_MINUTES = 5
SUCCEEDED = "succeeded"
FAILED = "failed"
DENIED = "denied"
TIMEOUT = "timeout"
_COUNTER = {FAILED: "failures", DENIED: "denials", TIMEOUT: "timeouts"}


class Counts(Struct, frozen=True):
    calls: int = 0
    failures: int = 0
    denials: int = 0
    timeouts: int = 0

    @property
    def bad(self) -> int:
        return self.failures + self.denials + self.timeouts

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.calls + other.calls, self.failures + other.failures, self.denials + other.denials,
                      self.timeouts + other.timeouts)


def bucket_of(at: datetime) -> int:
    return int(at.timestamp() // 60) // BUCKET_MINUTES


def _key(skill_id: str, version: str, bucket: int) -> dict[str, Any]:
    return key(pk=f"out#{skill_id}@{version}", sk=f"b#{bucket:012d}")


def record_op(db: Db, skill_id: str, version: str, outcome: str, at: datetime) -> dict[str, Any]:
    """The `Update` (for a transaction) that counts one outcome: succeeded, failed, denied or timeout."""
    counter = _COUNTER.get(outcome)
    names = {"#calls": "calls"}
    values: dict[str, Any] = {":one": to_value(1)}
    expression = "ADD #calls :one"
    if counter is not None:
        names["#bad"] = counter
        expression += ", #bad :one"
    return {"Update": {"TableName": db.tables.catalog, "Key": _key(skill_id, version, bucket_of(at)),
                       "UpdateExpression": expression, "ExpressionAttributeNames": names,
                       "ExpressionAttributeValues": values}}


def record(db: Db, skill_id: str, version: str, outcome: str, at: datetime) -> None:
    """One outcome counted on its own (one UpdateItem), for a caller outside a transaction."""
    db.client.update_item(**record_op(db, skill_id, version, outcome, at)["Update"])


def window_buckets(now: datetime, minutes: int, *, since: datetime | None = None) -> list[int]:
    """The buckets of the last `minutes` up to `now` (not before `since`)."""
    last = bucket_of(now)
    first = bucket_of(now) - max(1, -(-minutes // BUCKET_MINUTES)) + 1
    if since is not None:
        first = max(first, bucket_of(since))
    return list(range(first, last + 1))


def read(db: Db, versions: Sequence[tuple[str, str]], buckets: Sequence[int]) -> dict[tuple[str, str], Counts]:
    """The counts of each (skill id, version) summed over `buckets`."""
    keys = [(v, b) for v in versions for b in buckets]
    totals = {v: Counts() for v in versions}
    for start in range(0, len(keys), 100):
        chunk = keys[start:start + 100]
        found = batch_get(db, {db.tables.catalog: [_key(s, ver, b) for (s, ver), b in chunk]})[db.tables.catalog]
        for item in found:
            skill_version = item["pk"][len("out#"):]
            skill_id, _, version = skill_version.rpartition("@")
            totals[(skill_id, version)] = totals[(skill_id, version)] + Counts(
                int(item.get("calls", 0)), int(item.get("failures", 0)), int(item.get("denials", 0)),
                int(item.get("timeouts", 0)))
    return totals
