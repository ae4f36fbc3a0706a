"""Opaque identifiers.

`new_id` mints ULIDs (https://github.com/ulid/spec: a 48-bit millisecond timestamp, then 80 random bits,
as 26 Crockford base32 characters) from the injected clock. They are monotonic within a process: two ids
minted in the same millisecond still sort in minting order (the audit's "decision, then result" relies on
it). The layout is a dozen lines; minting here rather than through a ULID package saves a cold start the
package's import, which reads installed-package metadata (~3 ms). Tests check the ids against python-ulid.
"""

from __future__ import annotations

import hashlib
import os
import threading
from datetime import datetime

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_RANDOM_MASK = (1 << _RANDOM_BITS) - 1

_lock = threading.Lock()
_previous = 0  # the last id minted in this process


def _encode(value: int) -> str:
    """128 bits as 26 Crockford base32 characters (the first carries only 3 bits)."""
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(now: datetime) -> str:
    """Within the millisecond of the previous id, the previous id plus one; otherwise fresh randomness.

    Compared with the previous id only (not the largest ever minted), like the reference implementation's
    monotonic policy: a clock that is injected or steps back still gets ordered ids within its millisecond.
    """
    return new_ids(now, 1)[0]


def new_ids(now: datetime, count: int) -> list[str]:
    """`count` ids in minting order, minted together: no other thread's id can fall between them, so they sort
    in this order even when other threads mint ids for other milliseconds meanwhile (new_id alone orders ids
    only within the millisecond of the previous one)."""
    global _previous
    millis = int(now.timestamp() * 1000)
    minted = []
    with _lock:
        for _ in range(count):
            if millis == _previous >> _RANDOM_BITS and _previous & _RANDOM_MASK != _RANDOM_MASK:
                candidate = _previous + 1
            else:
                candidate = (millis << _RANDOM_BITS) | int.from_bytes(os.urandom(_RANDOM_BITS // 8), "big")
            _previous = candidate
            minted.append(_encode(candidate))
    return minted


def stable_id(*parts: str) -> str:
    """A deterministic 26-character id for a natural key (same parts, same id)."""
    return _encode(int.from_bytes(hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()[:16], "big") >> 2)
