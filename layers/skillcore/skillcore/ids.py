"""Opaque, time-ordered identifiers (ULIDs) minted from the injected clock."""

from __future__ import annotations

from datetime import datetime

from ulid import ULID


def new_id(now: datetime) -> str:
    return str(ULID.from_datetime(now))
