"""The one drain engine: background jobs and automation slots are drained by the same loop.

A kind of due work (background/worker.py, automation/runner.py) is a `DrainSource`: it lists a shard's
candidates and handles one of them (its own conditional claim, then its run), counting into the one
`ScanSummary`. The engine owns what used to be written twice: the batches, the random order, the bounded
fan-out of a batch (work/fanout.py), the safety margin before the invocation ends, yielding a shard to
another worker after a lost race, and the summary. It knows no feature: the scan, the dispatcher and the
worker hand it the sources that bootstrap.py built.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from msgspec import Struct

from skillcore.db.records import ScanFailures
from skillcore.work.fanout import DEFAULT_CONCURRENCY, Fanout

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

# Stop starting new items this long before the invocation ends: a started run (a model call, a message and
# its bookkeeping) must finish, and the rest of a shard goes on in a continuation.
SAFETY_MARGIN_MS = 20_000
DEFAULT_BATCH = 20

# What `POST /_local/scan` and a worker's batch answer: the local-stack contract's fields, then `errors` (the
# items this scan skipped because they could not be read or handled; each is logged with its type and id).
SUMMARY_KEYS = ("recovered", "claimed", "succeeded", "retried", "failed", "cancelled", "automationRuns", "errors")


class ScanSummary(Struct):
    """The counts of one drain, whatever it drained; `lost_races` is internal (it never leaves the worker)."""

    recovered: int = 0
    claimed: int = 0
    succeeded: int = 0
    retried: int = 0
    failed: int = 0
    cancelled: int = 0
    automation_runs: int = 0
    errors: int = 0
    lost_races: int = 0

    def add(self, other: ScanSummary) -> None:
        for name in ScanSummary.__struct_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, int]:
        return {
            "recovered": self.recovered, "claimed": self.claimed, "succeeded": self.succeeded,
            "retried": self.retried, "failed": self.failed, "cancelled": self.cancelled,
            "automationRuns": self.automation_runs, "errors": self.errors,
        }


class Handled(Struct, frozen=True):
    """What handling one candidate did: `progress` 1 when this worker claimed (or skipped) it, `raced` when
    another worker's claim won it (that worker is in this shard)."""

    progress: int = 0
    raced: bool = False


class DrainSource(Protocol[T_contra]):
    def candidates(self, shard_no: int, now: datetime, limit: int) -> Sequence[Any]: ...

    def handle(self, item: T_contra, now: datetime, summary: ScanSummary, failures: ScanFailures,
               since: float) -> Handled: ...


class DueProbe(Protocol):
    """Whether a shard has work of one kind: what the dispatching scan asks, without building the workers."""

    @property
    def kind(self) -> str: ...

    def probe(self, shard_no: int, now: datetime) -> tuple[bool, bool]:
        """(the shard has due work, it has work to recover): one Query with Limit 1 per index."""
        ...


class Probe(Struct, frozen=True):
    """A DueProbe from a store function (the scan function imports the stores, never the workers)."""

    kind: str
    probe: Callable[[int, datetime], tuple[bool, bool]]


class ShardSource(DueProbe, Protocol):
    """A kind of due work as the scan and the worker see it."""

    def recover_shard(self, shard_no: int, now: datetime, summary: ScanSummary, failures: ScanFailures) -> None: ...

    def work_shard(self, shard_no: int, now: datetime, remaining_ms: Callable[[], int], summary: ScanSummary,
                   failures: ScanFailures, *, yield_on_race: bool = False, since: float | None = None) -> bool: ...


class _Batch:
    """What the items of one batch of a shard did, written under `lock` by the threads that ran them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.progress = 0
        self.raced = False
        self.short = False


class Drain:
    def __init__(self, *, batch_size: int = DEFAULT_BATCH, concurrency: int = DEFAULT_CONCURRENCY,
                 rng: random.Random | None = None, margin_ms: int = SAFETY_MARGIN_MS):
        self.batch_size = batch_size
        self.margin_ms = margin_ms
        self._fanout = Fanout(concurrency)
        self._rng = rng or random.Random()

    def shard(self, source: DrainSource[T], shard_no: int, now: datetime, remaining_ms: Callable[[], int],
              summary: ScanSummary, failures: ScanFailures, *, yield_on_race: bool = False,
              since: float | None = None) -> bool:
        """Claims and runs the due items of one shard while time remains. True when due work may be left (time
        ran short, or `yield_on_race` and another worker won a race here), False when the shard is drained.

        Candidates come in random order, so two workers handed the same shard (a duplicate message, a
        continuation racing a new scan) mostly claim different items; each claim is conditional either way.
        `since`: the time.monotonic() instant that `now` stands for (default: this call's start; a worker
        passes the queue message's age into it)."""
        since = time.monotonic() if since is None else since
        while True:
            if remaining_ms() <= self.margin_ms:
                return True
            candidates = list(source.candidates(shard_no, now, self.batch_size))
            if not candidates:
                return False
            self._rng.shuffle(candidates)
            batch = self._batch(source, candidates, now, remaining_ms, summary, failures, since)
            if batch.short:
                return True
            if batch.raced:
                if yield_on_race:
                    return True  # another scanner works this shard: go elsewhere, come back later
                continue  # read the shard again: what is left, in a new random order
            if batch.progress == 0:
                # Only stale entries (the index will catch up) or items this worker already skipped.
                return False

    def _batch(self, source: DrainSource[T], candidates: list[T], now: datetime, remaining_ms: Callable[[], int],
               summary: ScanSummary, failures: ScanFailures, since: float) -> _Batch:
        """Up to `concurrency` candidates at once, each behind its own conditional claim; none starts once
        time is short or a race was lost (another worker is here), and every started one finishes."""
        batch = _Batch()

        def stop() -> bool:
            if remaining_ms() <= self.margin_ms:
                batch.short = True
            return batch.short or batch.raced

        def one(candidate: T) -> None:
            mine = ScanSummary()  # this item's counts, added to the shard's under the lock
            handled = Handled()
            try:
                handled = source.handle(candidate, now, mine, failures, since)
            finally:
                with batch.lock:
                    summary.add(mine)
                    batch.progress += handled.progress
                    batch.raced = batch.raced or handled.raced

        self._fanout.run(candidates, one, stop=stop)
        return batch


def drain_all(source: ShardSource, shards: int, now: datetime, remaining_ms: Callable[[], int],
              summary: ScanSummary, failures: ScanFailures, rng: random.Random) -> None:
    """Every shard of one kind in one invocation (the in-process scan, the bench and the tests' scanners):
    recovery first, then each shard through `work_shard`, the same code a WorkerFunction runs for one queue
    message. Each scanner walks the shards in its own random order; a shard it leaves after a lost race
    (another scanner works it) is visited again later, so concurrent scanners spread out instead of queueing."""
    for shard_no in range(shards):
        source.recover_shard(shard_no, now, summary, failures)
    pending = rng.sample(range(shards), shards)
    while pending and remaining_ms() > SAFETY_MARGIN_MS:
        pending = [shard_no for shard_no in pending
                   if source.work_shard(shard_no, now, remaining_ms, summary, failures, yield_on_race=True)]
