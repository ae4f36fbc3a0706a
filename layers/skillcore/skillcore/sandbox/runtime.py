"""One call of a code tool: a fresh Store and instance, the input in, the output out, every limit enforced.

The ABI (docs/code-skills.md, "The ABI"): the module exports `memory`, `alloc(len: i32) -> i32` and
`run(ptr: i32, len: i32) -> i64`. The host writes the input JSON (UTF-8) into memory from `alloc(len)` and calls
`run(ptr, len)`; `run` answers `out_ptr << 32 | out_len`, the output JSON's place in its memory. Imports: only
the host functions the manifest declares (sandbox/host.py), from module `skillcore`; no WASI, nothing else.

    result = invoke(module, manifest, {"days": [...]}, bridge)   # -> the output object, or a SandboxFailure

Outcomes, each its own error class (skillcore/errors.py):
- an import the manifest does not declare (or of another module, or of another type): `host_call_denied`
  (reason `undeclared_import`), before anything is instantiated;
- fuel exhausted: `sandbox_fuel_exhausted`; the epoch deadline passed: `sandbox_timeout`;
- linear memory: a module whose minimum memory is over the limit fails to instantiate, and `memory.grow` past it
  answers -1 (the WebAssembly rule). A call that then fails (a trap, fuel or time) with its memory within one
  eighth of the limit (`MEMORY_SLACK_SHARE`) ends with `sandbox_memory_exceeded`;
- an output over `limits.outputBytes`: `sandbox_output_too_large` (before it is read);
- any other trap (unreachable, out of bounds, stack overflow, division by zero), missing exports, a bad pointer
  or output that is not a JSON object: `sandbox_trap` with a reason code;
- a host call denied (sandbox/host.py): `host_call_denied`, whatever the module did after.
Nothing survives the call: the Store, the instance and its memory are dropped, so the next call starts fresh.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from skillcore.errors import (
    HostCallDenied,
    SandboxDetails,
    SandboxFailure,
    SandboxFuelExhausted,
    SandboxMemoryExceeded,
    SandboxOutputTooLarge,
    SandboxTimeout,
    SandboxTrap,
)
from skillcore.sandbox.engine import engine, ticker, ticks_for
from skillcore.sandbox.host import HostBridge
from skillcore.sandbox.manifest import MAX_INPUT_BYTES, CodeToolManifest, HostFunction

if TYPE_CHECKING:
    from wasmtime import Module

HOST_MODULE: Final = "skillcore"
MEMORY_SLACK_SHARE: Final = 8  # a failed call within an eighth of the memory limit ran out of memory
MAX_TABLE_ELEMENTS: Final = 10_000


def _details(tool: CodeToolManifest, reason: str | None = None, limit: int | None = None) -> SandboxDetails:
    details = SandboxDetails(toolId=tool.name)
    if reason:
        details["reason"] = reason
    if limit is not None:
        details["limit"] = limit
    return details


def check_imports(module: Module, tool: CodeToolManifest) -> None:
    """Every import must be a declared host function of module `skillcore`, of type (i32, i32) -> i64."""
    from wasmtime import FuncType

    declared = {f.value for f in tool.host_functions}
    for item in module.imports:
        ty = item.type
        ok = (item.module == HOST_MODULE and item.name in declared and isinstance(ty, FuncType)
              and [str(p) for p in ty.params] == ["i32", "i32"] and [str(r) for r in ty.results] == ["i64"])
        if not ok:
            raise HostCallDenied("the module imports something its manifest does not declare",
                                 _details(tool, "undeclared_import"))


def check_exports(module: Module, tool: CodeToolManifest) -> None:
    """The ABI's exports: `memory`, `alloc` (i32) -> i32 and `run` (i32, i32) -> i64."""
    from wasmtime import FuncType, MemoryType

    exports = {e.name: e.type for e in module.exports}
    memory, alloc, run = exports.get("memory"), exports.get("alloc"), exports.get("run")
    ok = (isinstance(memory, MemoryType)
          and isinstance(alloc, FuncType) and [str(p) for p in alloc.params] == ["i32"]
          and [str(r) for r in alloc.results] == ["i32"]
          and isinstance(run, FuncType) and [str(p) for p in run.params] == ["i32", "i32"]
          and [str(r) for r in run.results] == ["i64"])
    if not ok:
        raise SandboxTrap("the module does not export memory, alloc and run", _details(tool, "abi_exports"))


def invoke(module: Module, tool: CodeToolManifest, arguments: dict[str, Any], bridge: HostBridge) -> dict[str, Any]:
    """Runs the tool once on `arguments`; its output object, or raises a SandboxFailure."""
    check_imports(module, tool)
    check_exports(module, tool)
    data = json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode()
    if len(data) > MAX_INPUT_BYTES:
        raise SandboxTrap("the input is too large", _details(tool, "input_too_large", MAX_INPUT_BYTES))
    clock = ticker()
    clock.enter()
    try:
        return _run(module, tool, data, bridge)
    finally:
        clock.leave()


def _run(module: Module, tool: CodeToolManifest, data: bytes, bridge: HostBridge) -> dict[str, Any]:
    from wasmtime import Caller, Func, FuncType, Linker, Memory, Store, Trap, TrapCode, ValType, WasmtimeError

    limits = tool.limits
    store = Store(engine())
    store.set_limits(memory_size=limits.memory_bytes, table_elements=MAX_TABLE_ELEMENTS, instances=1, tables=1,
                     memories=1)
    store.set_fuel(limits.fuel)
    store.set_epoch_deadline(ticks_for(limits.timeout_ms))
    memory: Memory | None = None
    alloc: Func | None = None
    alloc_failed = False
    ended: SandboxFailure | None = None  # a limit reached inside a host call (its time, or fuel in `alloc`)
    deadline = time.monotonic() + limits.timeout_ms / 1000

    def host(function: HostFunction) -> Any:
        def call(caller: Caller, ptr: int, length: int) -> int:
            # Inside a host function the store is reached through `caller` only. Nothing may raise out of here:
            # wasmtime-py keeps a host function's exception in a process-wide slot that another thread's call
            # could pick up, so every failure becomes a state of this call and a stop.
            nonlocal ended

            def stop() -> None:
                Store.set_fuel(caller, 0)  # type: ignore[arg-type]  # the caller's context is the store's

            bridge.stop = stop
            try:
                return answer(caller, function, ptr, length, stop)
            except Exception:  # noqa: BLE001 - see above: the call ends with sandbox_trap (host_error)
                ended = ended or SandboxTrap("the host function failed", _details(tool, "host_error"))
                stop()
                return 0
            finally:
                bridge.stop = lambda: None

        def answer(caller: Caller, function: HostFunction, ptr: int, length: int, stop: Callable[[], None]) -> int:
            nonlocal alloc_failed, ended
            request = _read(caller, memory, ptr, length) if memory is not None else None
            response = bridge.call(function, request if request is not None else b"\xff")
            if time.monotonic() > deadline:  # the host call used the rest of the call's time
                ended = SandboxTimeout(details=_details(tool, None, limits.timeout_ms))
                stop()
                return 0
            if memory is None or alloc is None:
                return 0
            try:
                out = alloc(caller, len(response))
            except Trap as exc:
                if exc.trap_code in (TrapCode.OUT_OF_FUEL, TrapCode.INTERRUPT):
                    ended = _classify(exc, tool, bridge, caller, memory, False)
                    stop()
                    return 0
                out = None
            except WasmtimeError:
                out = None
            if not isinstance(out, int) or out < 0 or out + len(response) > memory.data_len(caller):
                alloc_failed = True
                stop()
                return 0
            memory.write(caller, response, out)
            return (out << 32) | len(response)

        return call

    linker = Linker(engine())
    signature = FuncType([ValType.i32(), ValType.i32()], [ValType.i64()])
    for function in tool.host_functions:
        linker.define_func(HOST_MODULE, function.value, signature, host(function), access_caller=True)

    def failed(exc: BaseException) -> SandboxFailure:
        return ended or _classify(exc, tool, bridge, store, memory, alloc_failed)

    try:
        instance = linker.instantiate(store, module)
    except (Trap, WasmtimeError) as exc:
        if "memory" in str(exc) and "limit" in str(exc):
            raise SandboxMemoryExceeded(details=_details(tool, "initial_memory", limits.memory_bytes)) from None
        raise failed(exc) from None
    exports = instance.exports(store)
    found_memory, found_alloc, run = exports["memory"], exports["alloc"], exports["run"]
    assert isinstance(found_memory, Memory) and isinstance(found_alloc, Func) and isinstance(run, Func)
    memory, alloc = found_memory, found_alloc
    try:
        ptr = alloc(store, len(data))
        if not isinstance(ptr, int) or ptr < 0 or ptr + len(data) > memory.data_len(store):
            raise SandboxTrap("alloc answered a pointer outside memory", _details(tool, "abi_pointer"))
        memory.write(store, data, ptr)
        packed = run(store, ptr, len(data))
    except (Trap, WasmtimeError) as exc:
        raise failed(exc) from None
    if bridge.failure is not None:
        raise bridge.failure
    if ended is not None:
        raise ended
    if alloc_failed:
        raise SandboxTrap("alloc failed during a host call", _details(tool, "abi_alloc"))
    packed = int(packed) & 0xFFFF_FFFF_FFFF_FFFF
    out_ptr, out_len = packed >> 32, packed & 0xFFFF_FFFF
    if out_len > limits.output_bytes:
        raise SandboxOutputTooLarge(details=_details(tool, None, limits.output_bytes))
    output = _read(store, memory, out_ptr, out_len)
    if output is None:
        raise SandboxTrap("the output is outside memory", _details(tool, "abi_pointer"))
    try:
        result = json.loads(output)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nesting deeper than Python's stack
        result = None
    if not isinstance(result, dict):
        raise SandboxTrap("the output is not a JSON object", _details(tool, "output_not_json"))
    return result


def _read(store: Any, memory: Any, ptr: int, length: int) -> bytes | None:
    if ptr < 0 or length < 0 or ptr + length > memory.data_len(store):
        return None
    return bytes(memory.read(store, ptr, ptr + length))


def _classify(exc: BaseException, tool: CodeToolManifest, bridge: HostBridge, store: Any, memory: Any,
              alloc_failed: bool) -> SandboxFailure:
    from wasmtime import Trap, TrapCode

    if bridge.failure is not None:
        return bridge.failure
    limits = tool.limits
    code = exc.trap_code if isinstance(exc, Trap) else None
    if alloc_failed:
        return SandboxTrap("alloc failed during a host call", _details(tool, "abi_alloc"))
    if memory is not None and memory.data_len(store) > limits.memory_bytes - limits.memory_bytes // MEMORY_SLACK_SHARE:
        return SandboxMemoryExceeded(details=_details(tool, None, limits.memory_bytes))
    if code is TrapCode.OUT_OF_FUEL:
        return SandboxFuelExhausted(details=_details(tool, None, limits.fuel))
    if code is TrapCode.INTERRUPT:
        return SandboxTimeout(details=_details(tool, None, limits.timeout_ms))
    reason = code.name.lower() if code is not None else "runtime_error"
    return SandboxTrap(details=_details(tool, reason))
