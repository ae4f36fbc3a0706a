"""Stored items that cannot be turned back into their domain record, and what the scan does about them.

A record checks itself on construction (its `__post_init__`), and every store builds its items from a
record, so our own code cannot write an item its reader rejects. An item written some other way (by hand,
by an older version, by a restore) may still fail to read. `read_record` turns that failure into one typed
error that names the record type and the item id and nothing else: the exception's own text may quote the
item (a ValueError about a field, a KeyError naming it), so only its type travels.

The scan meets such an item among other users' due work. `ScanFailures` is how it isolates it: the item is
counted and logged (type, id, error type) and the scan goes on with the next one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from skillcore.observability import logger

R = TypeVar("R")

# What building a record from a malformed item raises: a missing attribute, a bad value or type, a bad enum.
READ_ERRORS = (KeyError, ValueError, TypeError, AttributeError)


class UnreadableRecord(Exception):
    """An item that does not make a valid record. Its message holds the type, the id and the error type."""

    def __init__(self, kind: str, item_id: str, error_type: str) -> None:
        super().__init__(f"unreadable {kind} {item_id}: {error_type}")
        self.kind = kind
        self.item_id = item_id
        self.error_type = error_type


def item_id_of(item: dict[str, Any] | None) -> str:
    pk = (item or {}).get("pk")
    if isinstance(pk, dict):  # a raw attribute value
        pk = pk.get("S")
    return pk if isinstance(pk, str) and pk else "?"


def read_record(kind: str, item: dict[str, Any], build: Callable[[dict[str, Any]], R]) -> R:
    try:
        return build(item)
    except READ_ERRORS as error:
        raise UnreadableRecord(kind, item_id_of(item), type(error).__name__) from None


class ScanFailures:
    """The items one scan could not handle. Each is logged once, with ids and types only, and counted; an
    unreadable one is also taken out of the scan's indexes (`quarantine`), so no later batch meets it again."""

    def __init__(self) -> None:
        self.count = 0
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()  # a worker runs several items of a shard at once (skillcore/work/fanout.py)

    def record(self, kind: str, item_id: str, error: BaseException,
               quarantine: Callable[[str], None] | None = None) -> bool:
        """Logs and counts the failure; False if this scan had already met the item (the index lags)."""
        with self._lock:
            if (kind, item_id) in self._seen:
                return False
            self._seen.add((kind, item_id))
            self.count += 1
        error_type = error.error_type if isinstance(error, UnreadableRecord) else type(error).__name__
        # No exc_info: a traceback carries the exception's text, which may quote the item.
        logger.error("scan skipped an item", extra={"item_type": kind, "item_id": item_id, "error_type": error_type})
        if quarantine is not None and isinstance(error, UnreadableRecord) and item_id != "?":
            try:
                quarantine(item_id)
            except Exception as failure:  # noqa: BLE001 - the next scan tries again; this one goes on
                logger.error("quarantine failed", extra={"item_type": kind, "item_id": item_id,
                                                         "error_type": type(failure).__name__})
        return True


def readable(kind: str, items: list[dict[str, Any]], build: Callable[[dict[str, Any]], R]) -> list[R]:
    """The records of a page of items; an unreadable item is left out and logged (type and id), so one bad
    item does not make a user's whole list fail. A single-item read (`get`) raises instead: a 500 `internal`."""
    records: list[R] = []
    for item in items:
        try:
            records.append(read_record(kind, item, build))
        except UnreadableRecord as error:
            logger.error("list skipped an unreadable item",
                         extra={"item_type": kind, "item_id": error.item_id, "error_type": error.error_type})
    return records
