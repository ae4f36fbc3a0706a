"""The scan's contract: its "now" is the scheduled event's `time`, and it answers a summary of counts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from skillcore.background.worker import Worker
from skillcore.clock import parse_time

SUMMARY_KEYS = ("recovered", "claimed", "succeeded", "retried", "failed", "cancelled", "automationRuns")


def scan_time(event: dict[str, Any]) -> datetime:
    raw = event.get("time")
    if isinstance(raw, str):
        try:
            return parse_time(raw)
        except ValueError:
            pass
    return datetime.now(UTC)


def run_scan(worker: Worker, now: datetime, remaining_ms: Callable[[], int]) -> dict[str, int]:
    summary = dict.fromkeys(SUMMARY_KEYS, 0)
    summary.update(worker.scan(now, remaining_ms).as_dict())
    return summary
