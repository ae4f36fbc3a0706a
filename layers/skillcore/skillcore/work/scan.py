"""The scan's contract: its "now" is the scheduled event's `time`, and it answers a summary of counts.

Deployed, the scan dispatches (`dispatch_scan`: one queue message per shard with due work) and
WorkerFunction works each message (`ShardWork`); the counts of docs/contract.md "The local stack" are then the sum of the
workers' summaries, which is what the local stack's `POST /_local/scan` answers after draining the queue.
`run_scan` is the same work in one call (every shard in turn), for the bench and the in-process tests.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from skillcore.clock import parse_time
from skillcore.db.dynamo import Db
from skillcore.db.records import ScanFailures
from skillcore.observability import logger
from skillcore.work.dispatch import ShardTask, dispatch, run_task
from skillcore.work.drain import SUMMARY_KEYS, DueProbe, ScanSummary, ShardSource, drain_all
from skillcore.work.sqs_queue import WorkQueue


def scan_time(event: dict[str, Any]) -> datetime:
    raw = event.get("time")
    if isinstance(raw, str):
        try:
            return parse_time(raw)
        except ValueError:
            pass
    return datetime.now(UTC)


def run_scan(
    sources: Sequence[ShardSource], shards: int, now: datetime, remaining_ms: Callable[[], int],
    rng: random.Random | None = None,
) -> dict[str, int]:
    """Every source in its order (background jobs first: their time was promised to the minute, then
    automation slots). One item's failure is isolated where it happens; the scan always reaches the last source."""
    summary = ScanSummary()
    failures = ScanFailures()
    for source in sources:
        drain_all(source, shards, now, remaining_ms, summary, failures, rng or random.Random())
    summary.errors = failures.count
    return summary.as_dict()


def dispatch_scan(db: Db, sources: Sequence[DueProbe], queue: WorkQueue, now: datetime) -> dict[str, int]:
    sent = dispatch(db.shards.read, sources, queue, now)
    return {"shards": sent.shards, "messages": sent.messages, "background": sent.background,
            "automation": sent.automation}


class ShardWork:
    """A WorkerFunction's shard tasks; each invocation sums its tasks' counts in its own `new_summary()`."""

    def __init__(self, sources: Sequence[ShardSource], queue: WorkQueue, *,
                 max_age_seconds: float, wall_clock: Callable[[], float] = time.time):
        self._sources = {source.kind: source for source in sources}
        self._queue = queue
        self._max_age = max_age_seconds
        self._wall = wall_clock

    def source(self, kind: str) -> ShardSource:
        return self._sources[kind]

    @staticmethod
    def new_summary() -> dict[str, int]:
        return dict.fromkeys((*SUMMARY_KEYS, "stale", "continued"), 0)

    def handle(self, body: str, sent_timestamp_ms: str | int | None, remaining_ms: Callable[[], int],
               summary: dict[str, int]) -> None:
        """Runs one message; raises for a body that is not a shard task (the batch reports it as failed)."""
        task = ShardTask.decode(body)
        age = self._wall() - int(sent_timestamp_ms) / 1000 if sent_timestamp_ms else 0.0
        result = run_task(task, self._sources, self._queue, remaining_ms,
                          age_seconds=age, max_age_seconds=self._max_age)
        if result.stale:
            logger.info("stale shard task dropped", extra={"kind": task.kind, "shard": task.shard, "age_s": round(age)})
        for name, value in result.summary.as_dict().items():
            summary[name] += value
        summary["stale"] += int(result.stale)
        summary["continued"] += int(result.continued)
