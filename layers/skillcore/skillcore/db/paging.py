"""Paging of lists that live in memory (the skills catalog), with the same contract as the stored lists:
`limit` 1..100, an opaque cursor that is checked, a bad cursor is a 422 `validation_error` on `cursor`."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import TypeVar

from skillcore.errors import invalid_cursor

T = TypeVar("T")

_PREFIX = "after:"


def encode(key: str) -> str:
    return base64.urlsafe_b64encode((_PREFIX + key).encode()).decode().rstrip("=")


def decode(cursor: str) -> str:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
    except (binascii.Error, ValueError) as error:
        raise invalid_cursor() from error
    if not text.startswith(_PREFIX) or len(text) == len(_PREFIX):
        raise invalid_cursor()
    return text[len(_PREFIX):]


def page(items: Sequence[T], key: Callable[[T], str], *, limit: int, cursor: str | None) -> tuple[list[T], str | None]:
    """The `limit` items after the cursor's key, and the cursor of the next page (None on the last).

    The cursor names the last key served; a key that is not in the list (forged, or of another list) is refused
    rather than restarting from the top, which would serve the same items twice."""
    start = 0
    if cursor:
        after = decode(cursor)
        keys = [key(item) for item in items]
        if after not in keys:
            raise invalid_cursor()
        start = keys.index(after) + 1
    chunk = list(items[start:start + limit])
    more = start + limit < len(items)
    return chunk, encode(key(chunk[-1])) if more and chunk else None
