"""IANA time zone helpers (zoneinfo with the tzdata package, so Lambda and laptops agree)."""

from __future__ import annotations

from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


@lru_cache(maxsize=512)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def valid_timezone(name: str) -> bool:
    if not name or len(name) > 64 or name.startswith(("/", ".")) or ".." in name:
        return False
    try:
        zone(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True
