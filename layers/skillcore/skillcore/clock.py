"""Time helpers. Services receive `now` from the edge; nothing below calls datetime.now() itself."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def to_api_time(value: datetime) -> str:
    """The API's time format: UTC, seconds, `Z` suffix (`2026-12-02T02:00:00Z`)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def to_sort_time(value: datetime) -> str:
    """Millisecond precision for sort keys, so items written in the same second keep their order."""
    utc = value.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_time(value: str) -> datetime:
    """Parses a stored or API time; a naive value is refused because the contract demands an offset."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError("time must carry an offset")
    return parsed.astimezone(UTC)
