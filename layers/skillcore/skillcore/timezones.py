"""IANA time zone helpers.

zoneinfo reads the system's zone database before the `tzdata` package; the search path is emptied here so
that only the packaged data is used, and Lambda, laptops and CI compute the same schedules.
"""

from __future__ import annotations

import zoneinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

zoneinfo.reset_tzpath(to=())


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
