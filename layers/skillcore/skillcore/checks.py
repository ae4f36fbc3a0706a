"""Field checks shared by the Structs that carry rules (manifests, audit events, memories, schedules,
automation configs, settings). Each answers whether a value is acceptable; the caller raises with the
field's name, so the message says what was wrong where."""

from __future__ import annotations

import re
from datetime import datetime


def matches(value: object, pattern: str | re.Pattern[str]) -> bool:
    """A string the whole pattern matches (fullmatch: no trailing newline slips through, unlike `$`)."""
    return isinstance(value, str) and re.fullmatch(pattern, value) is not None


def text(value: object, longest: int) -> bool:
    """A string of 1 to `longest` characters."""
    return isinstance(value, str) and 1 <= len(value) <= longest


def integer(value: object, lowest: int, highest: int | None = None) -> bool:
    """Exactly an int (not a bool or "3") from `lowest` to `highest`, inclusive; no upper bound if None."""
    return type(value) is int and value >= lowest and (highest is None or value <= highest)


def aware(value: object, *, optional: bool = False) -> bool:
    """A timezone-aware datetime (stored times are instants; a naive one has no meaning), or None if optional."""
    if value is None:
        return optional
    return isinstance(value, datetime) and value.utcoffset() is not None


def instance(value: object, kind: type | tuple[type, ...], *, optional: bool = False) -> bool:
    """Exactly an instance of `kind` (an enum member, not its string), or None if optional."""
    return (optional and value is None) or isinstance(value, kind)
