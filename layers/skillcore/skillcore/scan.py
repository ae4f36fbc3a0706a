"""The scan's contract: its "now" is the scheduled event's `time`, and it answers a summary of counts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

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


def empty_summary() -> dict[str, int]:
    return dict.fromkeys(SUMMARY_KEYS, 0)
