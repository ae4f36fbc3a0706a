"""The scan's contract: its "now" is the scheduled event's `time`, and it answers a summary of counts.

Deployed, the scan dispatches (`dispatch_scan`: one queue message per shard with due work) and
WorkerFunction works each message (`ShardWork`); the counts of API.md section 3 are then the sum of the
workers' summaries, which is what the local stack's `POST /_local/scan` answers after draining the queue.
`run_scan` is the same work in one call (every shard in turn), for the bench and the in-process tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from skillcore.automation.runner import AutomationRunner
from skillcore.background.worker import SAFETY_MARGIN_MS, Worker
from skillcore.clock import parse_time
from skillcore.db.dynamo import Db
from skillcore.db.records import ScanFailures
from skillcore.observability import logger
from skillcore.work.dispatch import ShardTask, dispatch, run_task
from skillcore.work.sqs_queue import WorkQueue

# API.md section 3's fields, then `errors`: the items (background jobs, automation jobs) this scan skipped
# because they could not be read or handled; each is logged with its type and id (see skillcore/db/records.py).
SUMMARY_KEYS = ("recovered", "claimed", "succeeded", "retried", "failed", "cancelled", "automationRuns", "errors")


def scan_time(event: dict[str, Any]) -> datetime:
    raw = event.get("time")
    if isinstance(raw, str):
        try:
            return parse_time(raw)
        except ValueError:
            pass
    return datetime.now(UTC)


def run_scan(
    worker: Worker, automations: AutomationRunner, now: datetime, remaining_ms: Callable[[], int]
) -> dict[str, int]:
    """Background jobs first (their time was promised to the minute), then automation slots. One item's
    failure is isolated where it happens; the scan always reaches the automation slots."""
    summary = dict.fromkeys(SUMMARY_KEYS, 0)
    failures = ScanFailures()
    summary.update(worker.scan(now, remaining_ms, failures).as_dict())
    summary["automationRuns"] = automations.scan(now, remaining_ms, margin_ms=SAFETY_MARGIN_MS, failures=failures)
    summary["errors"] = failures.count
    return summary


def dispatch_scan(db: Db, queue: WorkQueue, now: datetime) -> dict[str, int]:
    sent = dispatch(db, queue, now)
    return {"shards": sent.shards, "messages": sent.messages, "background": sent.background,
            "automation": sent.automation}


class ShardWork:
    """A WorkerFunction's shard tasks; each invocation sums its tasks' counts in its own `new_summary()`."""

    def __init__(self, worker: Worker, automations: AutomationRunner, queue: WorkQueue, *,
                 max_age_seconds: float, wall_clock: Callable[[], float] = time.time):
        self._worker = worker
        self._automations = automations
        self._queue = queue
        self._max_age = max_age_seconds
        self._wall = wall_clock

    @staticmethod
    def new_summary() -> dict[str, int]:
        return dict.fromkeys((*SUMMARY_KEYS, "stale", "continued"), 0)

    def handle(self, body: str, sent_timestamp_ms: str | int | None, remaining_ms: Callable[[], int],
               summary: dict[str, int]) -> None:
        """Runs one message; raises for a body that is not a shard task (the batch reports it as failed)."""
        task = ShardTask.decode(body)
        age = self._wall() - int(sent_timestamp_ms) / 1000 if sent_timestamp_ms else 0.0
        result = run_task(task, self._worker, self._automations, self._queue, remaining_ms,
                          age_seconds=age, max_age_seconds=self._max_age)
        if result.stale:
            logger.info("stale shard task dropped", extra={"kind": task.kind, "shard": task.shard, "age_s": round(age)})
        for name, value in result.summary.as_dict().items():
            summary[name] += value
        summary["automationRuns"] += result.automation_runs
        summary["errors"] += result.errors
        summary["stale"] += int(result.stale)
        summary["continued"] += int(result.continued)
