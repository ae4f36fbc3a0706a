"""The scan's contract: its "now" is the scheduled event's `time`, and it answers a summary of counts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from skillcore.automation.runner import AutomationRunner
from skillcore.background.worker import SAFETY_MARGIN_MS, Worker
from skillcore.clock import parse_time
from skillcore.records import ScanFailures

# API.md section 3's fields, then `errors`: the items (background jobs, automation jobs) this scan skipped
# because they could not be read or handled; each is logged with its type and id (see skillcore/records.py).
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
