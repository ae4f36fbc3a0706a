"""Conditional writes: a transaction of named operations, or one conditional item write.

Every write that can lose a condition goes through here, so the rules hold in one place: each operation
carries a name ("turn", "message", "quota", ...) and its Put/Update/Delete/ConditionCheck (built by its
store, with named sub-conditions and ExpressionAttributeNames); a condition asks for the item as it was
(`ReturnValuesOnConditionCheckFailure=ALL_OLD`, added here when the builder did not). A lost condition
raises `TransactionFailed` (or `ConditionFailed` for one item) naming the operations that failed, read from
`CancellationReasons` by operation index, with their old items; the store or service that composed the
write turns that into its domain error. A cancellation by a concurrent transaction (`TransactionConflict`)
is retried a few times with full jitter, then answered as `ConcurrentUpdate` (409 `concurrent_update`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from msgspec import Struct

from skillcore.db.codec import from_item
from skillcore.db.dynamo import Db
from skillcore.db.errors import (
    TRANSIENT_REASONS,
    ConditionFailed,
    Failure,
    StoreUnavailable,
    TransactionCanceled,
    TransactionFailed,
    TransactionThrottled,
)
from skillcore.errors import ConcurrentUpdate


class Op(Struct, frozen=True):
    """One named operation: `request` is {"Put" | "Update" | "Delete" | "ConditionCheck": parameters}."""

    name: str
    request: dict[str, Any]


class Backoff(Struct, frozen=True):
    """Bounded retries of a transaction another one cancelled: full jitter, capped."""

    attempts: int = 3
    base_s: float = 0.02
    cap_s: float = 0.2

    def delay(self, attempt: int, rng: random.Random | Any) -> float:
        return float(rng.uniform(0, min(self.cap_s, self.base_s * 2 ** (attempt - 1))))


BACKOFF = Backoff()
_WRITES = {"Put": "put_item", "Update": "update_item", "Delete": "delete_item"}


def _asking_old(request: dict[str, Any]) -> dict[str, Any]:
    ((kind, params),) = request.items()
    if "ConditionExpression" in params and "ReturnValuesOnConditionCheckFailure" not in params:
        return {kind: {**params, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}
    return request


def transact(
    db: Db, ops: Sequence[Op], *, backoff: Backoff = BACKOFF, rng: random.Random | Any = random,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Commits `ops` atomically (one TransactWriteItems; more only when another transaction interfered)."""
    if not ops:
        return
    items = [_asking_old(op.request) for op in ops]
    attempt = 0
    while True:
        attempt += 1
        try:
            db.client.transact_write_items(TransactItems=items)
            return
        except TransactionCanceled as canceled:
            failures = tuple(
                Failure(i, ops[i].name if i < len(ops) else f"#{i}", reason.old)
                for i, reason in enumerate(canceled.reasons) if reason.code == "ConditionalCheckFailed"
            )
            if failures:
                raise TransactionFailed(failures, canceled.reasons) from canceled
            codes = {reason.code for reason in canceled.reasons} - {"None"}
            if not codes or not codes <= TRANSIENT_REASONS:
                raise  # a malformed transaction (ValidationError, ...): a bug, not a race
            if attempt >= backoff.attempts:
                if "TransactionConflict" in codes:
                    raise ConcurrentUpdate() from canceled
                # still throttled: the cancellation, and transient (503 `store_unavailable` to a request)
                raise TransactionThrottled(str(canceled), reasons=canceled.reasons) from canceled
            sleep(backoff.delay(attempt, rng))


def write(
    db: Db, op: Op, *, return_values: str | None = None, backoff: Backoff = BACKOFF,
    rng: random.Random | Any = random, sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any] | None:
    """One conditional Put/Update/Delete. Raises ConditionFailed named after `op`, with the old item;
    returns the item's attributes when `return_values` asks for them (deserialised), else None. A write
    that met a concurrent transaction on its item is retried like a transaction."""
    ((kind, params),) = _asking_old(op.request).items()
    method = getattr(db.client, _WRITES[kind])
    extra = {"ReturnValues": return_values} if return_values else {}
    attempt = 0
    while True:
        attempt += 1
        try:
            response = method(**params, **extra)
            return from_item(response.get("Attributes")) if return_values else None
        except ConditionFailed as failed:
            failed.operation = op.name
            raise
        except StoreUnavailable as unavailable:
            if unavailable.code != "TransactionConflictException":
                raise
            if attempt >= backoff.attempts:
                raise ConcurrentUpdate() from unavailable
            sleep(backoff.delay(attempt, rng))
