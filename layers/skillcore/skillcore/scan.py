"""The scan's contract: its "now" is the scheduled event's `time`, and it answers a summary of counts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from skillcore.automation.runner import AutomationRunner
from skillcore.background.worker import SAFETY_MARGIN_MS, Worker
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


def run_scan(
    worker: Worker, automations: AutomationRunner, now: datetime, remaining_ms: Callable[[], int]
) -> dict[str, int]:
    """Background jobs first (their time was promised to the minute), then automation slots."""
    summary = dict.fromkeys(SUMMARY_KEYS, 0)
    summary.update(worker.scan(now, remaining_ms).as_dict())
    summary["automationRuns"] = automations.scan(now, remaining_ms, margin_ms=SAFETY_MARGIN_MS)
    return summary
