"""The WebAssembly runtime of code tools (skillcore/sandbox/): the ABI, each limit with its own code within its
bound, hostile modules written in WebAssembly text (tests/wasm/), a clean call right after each, no state kept
between calls, and hostile calls in threads beside other users' clean ones."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from skillcore.errors import (
    HostCallDenied,
    SandboxFailure,
    SandboxFuelExhausted,
    SandboxMemoryExceeded,
    SandboxOutputTooLarge,
    SandboxTimeout,
    SandboxTrap,
)
from skillcore.sandbox import modules
from skillcore.sandbox.engine import TICK_SECONDS
from tests.sandbox_support import grant, manifest, memory, ports, run, wasm

CLEAN = {"habit": "run", "days": [1, 2, 3], "note": "跑步"}


def clean_call_works() -> None:
    assert run("echo", arguments=CLEAN) == CLEAN


def timed(name: str, **limits: Any) -> tuple[SandboxFailure, float]:
    started = time.perf_counter()
    with pytest.raises(SandboxFailure) as caught:
        run(name, manifest(**limits))
    return caught.value, time.perf_counter() - started


def test_the_clean_tool_answers_its_input() -> None:
    clean_call_works()
    assert run("echo", arguments={}) == {}


# (module, limits, error class, details reason, seconds the call may take at most)
HOSTILE = [
    ("loop", {"fuel": 1_000_000}, SandboxFuelExhausted, None, 1.0),
    ("spin", {"fuel": 1_000_000_000, "timeout_ms": 50}, SandboxTimeout, None, 1.0),
    ("grow_bomb", {}, SandboxMemoryExceeded, None, 2.0),
    ("grow_spin", {}, SandboxMemoryExceeded, None, 2.0),
    ("big_memory", {}, SandboxMemoryExceeded, "initial_memory", 1.0),
    ("recursion", {}, SandboxTrap, "stack_overflow", 1.0),
    ("huge_output", {}, SandboxOutputTooLarge, None, 1.0),
    ("big_output", {}, SandboxOutputTooLarge, None, 1.0),
    ("trap", {}, SandboxTrap, "integer_division_by_zero", 1.0),
    ("not_json", {}, SandboxTrap, "output_not_json", 1.0),
    ("nested_output", {}, SandboxTrap, "output_not_json", 1.0),
    ("wasi_import", {}, HostCallDenied, "undeclared_import", 1.0),
    ("hosted_import", {}, HostCallDenied, "undeclared_import", 1.0),
]


@pytest.mark.parametrize(("name", "limits", "error", "reason", "bound"), HOSTILE,
                         ids=[f"{h[0]}-{h[2].code}" for h in HOSTILE])
def test_a_hostile_module_is_stopped_with_its_code_and_the_next_call_is_clean(
    name: str, limits: dict[str, Any], error: type[SandboxFailure], reason: str | None, bound: float,
) -> None:
    failure, elapsed = timed(name, **limits)
    assert type(failure) is error
    assert failure.details.get("reason") == reason
    assert failure.details["toolId"] == "test-tool"
    assert elapsed < bound
    clean_call_works()


def test_the_timeout_ends_the_call_between_its_limit_and_a_few_ticks_after() -> None:
    failure, elapsed = timed("spin", fuel=1_000_000_000, timeout_ms=60)
    assert isinstance(failure, SandboxTimeout) and failure.details["limit"] == 60
    assert 0.06 <= elapsed < 0.06 + 0.5 + 10 * TICK_SECONDS


def test_fuel_bounds_the_instructions_and_reports_its_limit() -> None:
    failure, elapsed = timed("loop", fuel=5_000_000)
    assert isinstance(failure, SandboxFuelExhausted) and failure.details["limit"] == 5_000_000
    assert elapsed < 0.5


def test_an_output_at_the_limit_is_read_and_one_byte_over_is_refused() -> None:
    arguments = {"pad": "x" * 100}
    size = len('{"pad":"' + "x" * 100 + '"}')
    assert run("echo", manifest(output_bytes=size), arguments) == arguments
    with pytest.raises(SandboxOutputTooLarge):
        run("echo", manifest(output_bytes=size - 1), arguments)


def test_no_state_is_kept_between_calls() -> None:
    # The module increments a global on every call: each call sees a fresh instance, so it always answers 1.
    assert [run("counter")["n"] for _ in range(3)] == [1, 1, 1]


def test_an_undeclared_host_function_fails_before_instantiation_even_when_another_is_declared() -> None:
    tool = manifest(host_functions=("log",))
    with pytest.raises(HostCallDenied) as caught:
        run("hosted_import", tool)
    assert caught.value.details["reason"] == "undeclared_import"


def test_a_module_that_is_not_webassembly_is_a_trap() -> None:
    with pytest.raises(SandboxTrap) as caught:
        modules.load(b"(module)")  # the text format is never taken as a module
    assert caught.value.details["reason"] == "invalid_module"
    with pytest.raises(SandboxTrap):
        modules.load(b"\0asm\x01\0\0\0garbage")


def test_a_module_without_the_abi_exports_is_a_trap() -> None:
    from wasmtime import wat2wasm

    from skillcore.sandbox import runtime
    from skillcore.sandbox.host import HostBridge
    from tests.sandbox_support import SKILL

    module = modules.load(bytes(wat2wasm('(module (memory (export "memory") 1))')))
    tool = manifest()
    with pytest.raises(SandboxTrap) as caught:
        runtime.invoke(module, tool, {}, HostBridge(tool, SKILL, ports()))
    assert caught.value.details["reason"] == "abi_exports"


def test_hostile_calls_in_threads_never_affect_other_users_clean_calls() -> None:
    hostile = [("spin", {"fuel": 1_000_000_000, "timeout_ms": 1500}, SandboxTimeout),
               ("grow_bomb", {}, SandboxMemoryExceeded), ("recursion", {}, SandboxTrap),
               ("loop", {"fuel": 50_000_000}, SandboxFuelExhausted), ("big_output", {}, SandboxOutputTooLarge)]
    clean_ends: list[float] = []
    spin_ends: list[float] = []
    lock = threading.Lock()

    def hostile_call(index: int) -> type[SandboxFailure] | None:
        name, limits, _ = hostile[index % len(hostile)]
        try:
            run(name, manifest(**limits))
        except SandboxFailure as exc:
            return type(exc)
        finally:
            if name == "spin":
                with lock:
                    spin_ends.append(time.perf_counter())
        return None

    def clean_call(index: int) -> dict[str, Any]:
        arguments = {"user": f"other-{index}", "n": index}
        result = run("echo", arguments=arguments)
        with lock:
            clean_ends.append(time.perf_counter())
        return result

    clean_call(-1)  # compiled and cached before the race
    clean_ends.clear()
    with ThreadPoolExecutor(max_workers=6) as pool:
        bad = [pool.submit(hostile_call, i) for i in range(10)]
        good = [pool.submit(clean_call, i) for i in range(40)]
        results = [f.result(timeout=30) for f in good]
        failures = [f.result(timeout=30) for f in bad]
    assert results == [{"user": f"other-{i}", "n": i} for i in range(40)]
    # A spinner ends by its fuel (about half a second of branches) or its time, whichever comes first.
    expected = [hostile[i % len(hostile)][2] for i in range(10)]
    assert [f if f is not SandboxFuelExhausted or e is not SandboxTimeout else e
            for f, e in zip(failures, expected, strict=True)] == expected
    # Every clean call finished while the spinning neighbours were still running: none waited for one to end.
    assert len(spin_ends) == 2 and max(clean_ends) < min(spin_ends)


def test_compiled_modules_are_cached_by_digest() -> None:
    code = wasm("echo")
    digest = modules.module_digest(code)
    modules.clear_cache()
    assert not modules.cached(digest)
    first = modules.load(code)
    assert modules.cached(digest)
    assert modules.load(code) is first


def test_a_precompiled_artifact_loads_without_compiling_and_answers_the_same() -> None:
    code = wasm("echo")
    artifact = modules.precompile(code)
    assert artifact.startswith(modules.MAGIC)
    modules.clear_cache()
    compiled: list[bytes] = []
    original = modules._compile
    try:
        modules._compile = lambda wasm: compiled.append(wasm) or original(wasm)  # type: ignore[assignment]
        module = modules.load(code, precompiled=artifact)
    finally:
        modules._compile = original  # type: ignore[assignment]
    assert compiled == []
    from skillcore.sandbox import runtime
    from skillcore.sandbox.host import HostBridge
    from tests.sandbox_support import SKILL

    tool = manifest()
    assert runtime.invoke(module, tool, CLEAN, HostBridge(tool, SKILL, ports())) == CLEAN


def test_an_artifact_of_another_module_or_a_tampered_header_is_not_used() -> None:
    echo, counter = wasm("echo"), wasm("counter")
    artifact = modules.precompile(counter)
    modules.clear_cache()
    module = modules.load(echo, precompiled=artifact)  # another module's artifact: compiled from the bytes
    assert {e.name for e in module.exports} == {"memory", "alloc", "run"}
    assert modules._deserialize(modules.module_digest(echo), artifact) is None
    tampered = artifact[:len(modules.MAGIC) + 32] + bytes(16) + artifact[len(modules.MAGIC) + 48:]
    assert modules._deserialize(modules.module_digest(counter), tampered) is None
    assert modules._deserialize(modules.module_digest(counter), artifact) is not None


def test_memory_search_through_the_bridge_answers_json() -> None:
    tool = manifest(host_functions=("memory.search",))
    host = ports(grants=(grant(),), memories=[memory("I like hiking"), memory("cats", memory_id="m2")])
    assert run("memory_search", tool, host=host) == {
        "memories": [{"id": "m1", "title": "I like hiking", "content": "I like hiking", "importance": 3}]}


def test_code_tool_inputs_must_be_json_within_the_size_limit() -> None:
    from pydantic import ValidationError

    from skillcore.sandbox.code_tool import CodeTool
    from skillcore.sandbox.manifest import MAX_INPUT_BYTES
    from tests.sandbox_support import SKILL

    tool = CodeTool(SKILL, manifest(), wasm("echo"))
    assert tool.input_model.model_validate({"a": [1.5]}).model_dump() == {"a": [1.5]}
    for bad in ({"a": float("nan")}, {"a": float("inf")}, {"a": "x" * MAX_INPUT_BYTES}):
        with pytest.raises(ValidationError):
            tool.input_model.model_validate(bad)
