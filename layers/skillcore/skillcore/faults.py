"""Fault points for the local stack and the tests (`POST /_local/faults`).

A fault is armed for the next N executions that pass a named point. In Lambda nothing ever arms one:
the arming route exists only in the local gateway, so `hit()` is a dictionary lookup that finds nothing.
"""

from __future__ import annotations

import threading
from enum import StrEnum


class FaultPoint(StrEnum):
    BACKGROUND_BEFORE_SIDE_EFFECT = "background.before_side_effect"
    BACKGROUND_AFTER_MESSAGE = "background.after_message"
    TOOL_HANDLER = "tool.handler"


class FaultKind(StrEnum):
    TRANSIENT = "transient"  # a retryable error
    CRASH = "crash"          # the worker dies: no status update, the lease must expire
    TIMEOUT = "timeout"      # the tool handler overruns its timeout


class InjectedTransientError(Exception):
    """Raised at a point armed with `transient`: callers treat it as any retryable error."""


class InjectedCrash(BaseException):
    """Raised at a point armed with `crash`. A BaseException so ordinary `except Exception` handlers,
    which would record a failure, do not catch it: like a dead Lambda, nothing more is written."""


_lock = threading.Lock()
_armed: dict[FaultPoint, list[FaultKind]] = {}


def arm(point: FaultPoint | str, times: int, kind: FaultKind | str) -> None:
    with _lock:
        _armed.setdefault(FaultPoint(point), []).extend([FaultKind(kind)] * times)


def clear() -> None:
    with _lock:
        _armed.clear()


def take(point: FaultPoint) -> FaultKind | None:
    """Consumes and returns the next armed fault at `point`, if any."""
    if not _armed:
        return None
    with _lock:
        queue = _armed.get(point)
        if not queue:
            return None
        return queue.pop(0)


def hit(point: FaultPoint) -> FaultKind | None:
    """Raises the armed fault at `point` (transient, crash); returns `timeout` for the caller to act on."""
    kind = take(point)
    if kind is FaultKind.TRANSIENT:
        raise InjectedTransientError(f"injected transient fault at {point.value}")
    if kind is FaultKind.CRASH:
        raise InjectedCrash(f"injected crash at {point.value}")
    return kind
