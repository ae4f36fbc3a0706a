"""A module a route group's handlers use, imported by the first request that reads one of its names.

A function instance serves whichever route comes first: of the instances a page's first load starts at once, one
answers GET /rpc/me, another GET /rpc/agents. What a route only calls (a feature's service and stores, the skills
registry behind them) is loaded by the first request that calls it, so a cold start loads the routes' contracts
(views, request names, documented errors) and not every feature behind them. The import stays visible to mypy
and to the house rules (tests/unit/test_import_boundaries.py), which read the TYPE_CHECKING form:

    if TYPE_CHECKING:
        from skillcore.automation import service as automation
    else:
        automation = lazy.module("skillcore.automation.service")

Not importlib.util.LazyLoader, which runs the module's code inside whichever attribute read comes first and swaps
the module's class in place: this stand-in only calls `importlib.import_module`, so two first reads at once (the
local stack serves requests from threads of one process) meet the interpreter's import lock, as any import does.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module `name`; the first attribute read imports it."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r}, {state}>"


def module(name: str) -> Any:
    """A stand-in for `import name`, typed Any: pair it with the TYPE_CHECKING import of the same module."""
    return LazyModule(name)


class LazyValue:
    """Stands for what `build()` returns; the first attribute read builds it, once (a lock: two first requests
    at once on the local stack's threads get the same value)."""

    __slots__ = ("_build", "_value", "_lock")

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build: Callable[[], Any] | None = build
        self._value: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, attribute: str) -> Any:
        if self._build is not None:
            with self._lock:
                if self._build is not None:
                    self._value = self._build()
                    self._build = None
        return getattr(self._value, attribute)


def value(build: Callable[[], Any]) -> Any:
    """A stand-in for `build()`, built by the first attribute read: a route group's collaborators
    (skillcore/bootstrap.py), which its handlers read and its registration does not."""
    return LazyValue(build)
