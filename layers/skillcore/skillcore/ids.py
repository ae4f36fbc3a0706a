"""Opaque identifiers.

`new_id` mints ULIDs from the injected clock. They are monotonic within a process: two ids minted in the
same millisecond still sort in minting order (the audit's "decision, then result" relies on it).
"""

from __future__ import annotations

import hashlib
import threading
from datetime import datetime

from ulid import ULID

_lock = threading.Lock()
_last = 0


def new_id(now: datetime) -> str:
    global _last
    candidate = int(ULID.from_datetime(now))
    with _lock:
        if candidate <= _last and (candidate >> 80) == (_last >> 80):
            candidate = _last + 1
        _last = max(_last, candidate)
    return str(ULID.from_int(candidate))


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def stable_id(*parts: str) -> str:
    """A deterministic 26-character id for a natural key (same parts, same id)."""
    digest = int.from_bytes(hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()[:16], "big") >> 2
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[digest & 31])
        digest >>= 5
    return "".join(reversed(chars))
