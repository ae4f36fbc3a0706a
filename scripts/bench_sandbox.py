"""`make bench`'s sandbox section: what code tools cost (skillcore/sandbox/).

    python -m scripts.bench --only sandbox

- the runtime's cold import: `import wasmtime` and the shared engine (with its ticker) in a fresh interpreter,
  the cost the first code tool call of a ChatTurnFunction or McpFunction process pays (no other function loads
  it: tests/integration/test_sandbox_imports.py);
- a cold call: the first call of a trivial tool (tests/wasm/echo.wat, the ABI's smallest module) in a new
  process, from the import of the runtime to the output, with the module compiled there and with the module
  precompiled at publish time (sandbox/modules.py `precompile`, loaded by `Module.deserialize`);
- a warm call: the same call again in the same process (the compiled module cached by digest; a fresh Store and
  instance every call), and the same through `CodeTool` (the input and output schemas checked too).
Each cold figure is the median of fresh `python -I` processes; the warm one the median of many calls.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from scripts.bench_cold import python
from scripts.bench_common import LAYER_DIR, ROOT, Report, median, percentile

SECTION = "sandbox"
TARGET_WARM_MS = 2.0          # a trivial tool's call once its module is compiled
TARGET_COLD_PRECOMPILED_MS = 150.0  # the first call in a process, runtime import included, module precompiled

PROBE = r'''
import json, sys, time
sys.path[:0] = [sys.argv[1]]
mode, wasm_path, artifact_path = sys.argv[2], sys.argv[3], sys.argv[4]
wasm = open(wasm_path, "rb").read()
artifact = open(artifact_path, "rb").read() if mode == "precompiled" else None
from skillcore.sandbox.host import HostBridge, HostPorts
from skillcore.sandbox.manifest import decode_manifest
from skillcore.skills.manifest import SkillKind, SkillManifest
tool = decode_manifest({"name": "echo-tool", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}})
skill = SkillManifest(skill_id="bench-tools", version="1.0.0", kind=SkillKind.TOOL, name="Bench", description="Bench.")
ports = HostPorts(user_id="u", agent_id="a", call_id="c", grants=lambda: ())
started = time.perf_counter()
if mode == "import":
    import wasmtime
    imported = time.perf_counter()
    from skillcore.sandbox.engine import engine
    engine()
    done = time.perf_counter()
    print("BENCH", json.dumps({"import_ms": (imported - started) * 1000, "engine_ms": (done - imported) * 1000}))
    raise SystemExit
from skillcore.sandbox import modules, runtime
module = modules.load(wasm, precompiled=artifact)
loaded = time.perf_counter()
out = runtime.invoke(module, tool, {"habit": "run", "days": [1, 2, 3]}, HostBridge(tool, skill, ports))
done = time.perf_counter()
assert out == {"habit": "run", "days": [1, 2, 3]}, out
print("BENCH", json.dumps({"total_ms": (done - started) * 1000, "load_ms": (loaded - started) * 1000}))
'''


def _probe(mode: str, wasm: Path, artifact: Path) -> dict[str, float]:
    done = subprocess.run([python(), "-I", "-c", PROBE, str(LAYER_DIR), mode, str(wasm), str(artifact)],
                          capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    if done.returncode != 0:
        raise RuntimeError(f"the sandbox probe failed:\n{done.stderr[-3000:]}")
    line = next(line for line in done.stdout.splitlines() if line.startswith("BENCH "))
    values: dict[str, float] = json.loads(line.split(" ", 1)[1])
    return values


def _warm(calls: int) -> dict[str, list[float]]:
    from pydantic import BaseModel
    from wasmtime import wat2wasm

    from skillcore.sandbox import modules, runtime
    from skillcore.sandbox.code_tool import CodeTool
    from skillcore.sandbox.host import HostBridge, HostPorts
    from skillcore.sandbox.manifest import decode_manifest
    from skillcore.skills.manifest import SkillKind, SkillManifest

    wasm = bytes(wat2wasm((ROOT / "tests" / "wasm" / "echo.wat").read_text(encoding="utf-8")))
    tool = decode_manifest({"name": "echo-tool", "inputSchema": {"type": "object", "required": ["habit"]},
                            "outputSchema": {"type": "object", "required": ["habit"]}})
    skill = SkillManifest(skill_id="bench-tools", version="1.0.0", kind=SkillKind.TOOL, name="Bench",
                          description="Bench.")
    ports = HostPorts(user_id="u", agent_id="a", call_id="c", grants=lambda: ())
    arguments: dict[str, Any] = {"habit": "run", "days": [1, 2, 3]}
    code_tool = CodeTool(skill, tool, wasm)
    digest = modules.module_digest(wasm)
    times: dict[str, list[float]] = {"invoke": [], "CodeTool": []}
    for round_number in range(calls + 20):
        started = time.perf_counter()
        module = modules.load(wasm, digest=digest)
        runtime.invoke(module, tool, arguments, HostBridge(tool, skill, ports))
        middle = time.perf_counter()
        parsed: BaseModel = code_tool.input_model.model_validate(arguments)
        code_tool.output_model.model_validate(code_tool.execute(parsed, ports))
        done = time.perf_counter()
        if round_number >= 20:  # the first calls warm the caches
            times["invoke"].append((middle - started) * 1000)
            times["CodeTool"].append((done - middle) * 1000)
    return times


def large_module(functions: int) -> bytes:
    """A module of `functions` small arithmetic functions beside the echo ABI: what a compiled tool's size does
    to a compile, against loading its precompiled artifact."""
    from wasmtime import wat2wasm

    echo = (ROOT / "tests" / "wasm" / "echo.wat").read_text(encoding="utf-8").rstrip().removesuffix(")")
    body = "".join(
        f"(func $f{i} (param i32) (result i32) (local i32) (local.set 1 (i32.mul (local.get 0) (i32.const {i + 3})))"
        f" (if (i32.gt_u (local.get 1) (i32.const 1000)) (then (local.set 1 (i32.rem_u (local.get 1) (i32.const 97)))))"
        f" (i32.add (local.get 1) (i32.const {i})))\n" for i in range(functions))
    return bytes(wat2wasm(echo + body + ")"))


def _compile_vs_deserialize(wasm: bytes, rounds: int) -> tuple[float, float]:
    from skillcore.sandbox import modules

    artifact = modules.precompile(wasm)
    compile_ms, load_ms = [], []
    for _ in range(rounds):
        modules.clear_cache()
        started = time.perf_counter()
        modules.load(wasm)
        compile_ms.append((time.perf_counter() - started) * 1000)
        modules.clear_cache()
        started = time.perf_counter()
        modules.load(wasm, precompiled=artifact)
        load_ms.append((time.perf_counter() - started) * 1000)
    return median(compile_ms), median(load_ms)


def run(report: Report, *, quick: bool) -> None:
    from wasmtime import wat2wasm

    from skillcore.sandbox.modules import precompile

    runs = 5 if quick else 15
    calls = 200 if quick else 2000
    report.heading(f"Sandbox: code tools (cold: median of {runs} fresh processes; warm: median of {calls} calls)")
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        wasm = Path(tmp) / "echo.wasm"
        wasm.write_bytes(bytes(wat2wasm((ROOT / "tests" / "wasm" / "echo.wat").read_text(encoding="utf-8"))))
        artifact = Path(tmp) / "echo.cwasm"
        artifact.write_bytes(precompile(wasm.read_bytes()))
        for mode in ("import", "compiled", "precompiled"):  # warm-up: bytecode caches
            _probe(mode, wasm, artifact)
        imports = [_probe("import", wasm, artifact) for _ in range(runs)]
        compiled = [_probe("compiled", wasm, artifact) for _ in range(runs)]
        precompiled = [_probe("precompiled", wasm, artifact) for _ in range(runs)]
        sizes = (wasm.stat().st_size, artifact.stat().st_size)
    warm = _warm(calls)
    big = large_module(2000)
    big_compile, big_load = _compile_vs_deserialize(big, 3 if quick else 7)
    cold_pre = median([p["total_ms"] for p in precompiled])
    warm_ms = median(warm["invoke"])
    report.table(["measure", "median ms", "p95 ms"], [
        ("import wasmtime (fresh interpreter)", f"{median([i['import_ms'] for i in imports]):.1f}", ""),
        ("the shared engine and its ticker", f"{median([i['engine_ms'] for i in imports]):.1f}", ""),
        ("cold call, module compiled in the process", f"{median([c['total_ms'] for c in compiled]):.1f}", ""),
        ("  of which import + compile", f"{median([c['load_ms'] for c in compiled]):.1f}", ""),
        ("cold call, module precompiled at publish", f"{cold_pre:.1f}", ""),
        ("  of which import + deserialize", f"{median([p['load_ms'] for p in precompiled]):.1f}", ""),
        ("warm call (runtime.invoke, module cached)", f"{warm_ms:.3f}", f"{percentile(warm['invoke'], 95):.3f}"),
        ("warm call through CodeTool (schemas checked)", f"{median(warm['CodeTool']):.3f}",
         f"{percentile(warm['CodeTool'], 95):.3f}"),
    ])
    report.line(f"  echo.wasm {sizes[0]} bytes; its precompiled artifact {sizes[1]} bytes")
    report.table(["a module of 2000 functions (in process)", "median ms"], [
        (f"compile ({len(big)} bytes)", f"{big_compile:.1f}"),
        ("load its precompiled artifact (Module.deserialize)", f"{big_load:.1f}"),
    ])
    report.line("  warm call: " + report.verdict(SECTION, "warm call of a trivial tool", f"{warm_ms:.3f} ms",
                                                 f"< {TARGET_WARM_MS} ms", warm_ms < TARGET_WARM_MS))
    report.line("  cold call: " + report.verdict(SECTION, "cold call, precompiled, runtime import included",
                                                 f"{cold_pre:.1f} ms", f"< {TARGET_COLD_PRECOMPILED_MS} ms",
                                                 cold_pre < TARGET_COLD_PRECOMPILED_MS))
