"""The process's one wasmtime Engine, and the ticker that gives it wall-clock time.

wasmtime is imported here, inside `engine()`, on the first code tool call of a process: no function that never
runs code pays for its import (tests/integration/test_lazy_imports.py; `make bench`'s sandbox section measures it).

Configuration (the same for compiling, precompiling and running, or a precompiled module would not load):
fuel on (an instruction budget per call), epoch interruption on (wall-clock time), no WASI ever, no threads,
shared memory, multi-memory, memory64 or GC proposals, and a 512 KiB wasm stack (deep recursion traps with
`stack_overflow` long before the host thread's own stack is in danger).

Time: one shared engine and one ticker thread, rather than a timer per call. `Engine.increment_epoch` moves the
epoch of every store of the engine at once, so per-call timers on a shared engine would cut each other's calls
short; an engine per call would compile every module again. The ticker advances the epoch every `TICK_SECONDS`
while at least one call runs and sleeps otherwise (a frozen or idle Lambda sandbox costs nothing); a call's
deadline is `ticks_for(timeout_ms)` ticks after the epoch it starts at, so it ends between its timeout and one
tick after it.
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from wasmtime import Engine

TICK_SECONDS: Final = 0.005
WASM_STACK_BYTES: Final = 512 * 1024

_lock = threading.Lock()
_engine: Engine | None = None
_ticker: _Ticker | None = None


def ticks_for(timeout_ms: int) -> int:
    """Ticks until a call's deadline: one more than its timeout holds, because the first tick after the call
    starts may come at once (the ticker's phase is not the call's)."""
    return max(1, math.ceil(timeout_ms / 1000 / TICK_SECONDS)) + 1


class _Ticker:
    """Increments the engine's epoch every TICK_SECONDS while `running` calls are under way."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._running = 0
        self._wake = threading.Condition()
        threading.Thread(target=self._loop, name="wasm-epoch", daemon=True).start()

    def _loop(self) -> None:
        while True:
            with self._wake:
                while self._running == 0:
                    self._wake.wait()
            time.sleep(TICK_SECONDS)  # a plain sleep: a call entering must not shorten another's tick
            self._engine.increment_epoch()

    def enter(self) -> None:
        with self._wake:
            self._running += 1
            self._wake.notify_all()

    def leave(self) -> None:
        with self._wake:
            self._running -= 1


def engine() -> Engine:
    """The shared engine (made, with its ticker, on first use)."""
    global _engine, _ticker
    if _engine is None:
        with _lock:
            if _engine is None:
                from wasmtime import Config, Engine

                config = Config()
                config.consume_fuel = True
                config.epoch_interruption = True
                config.max_wasm_stack = WASM_STACK_BYTES
                config.wasm_threads = False
                config.shared_memory = False
                config.wasm_multi_memory = False
                config.wasm_memory64 = False
                config.wasm_gc = False
                config.wasm_component_model = False
                config.parallel_compilation = False  # Lambda's vCPUs are few; a compile must not starve calls
                made = Engine(config)
                _ticker = _Ticker(made)
                _engine = made
    return _engine


def ticker() -> _Ticker:
    engine()
    assert _ticker is not None
    return _ticker
