"""Section 1: cold import of each function's handler module, in a fresh interpreter per measurement.

Each sample is a new `python -I` process (the repo's .venv) with the handler environment as deployed:
table names, SKILLS_MODEL=bedrock (the template's default, so the chat and scan functions create their
Bedrock Runtime client at init, which needs no network), dummy AWS credentials and region, no local
endpoint. The process puts
the function's code directory and the layer on sys.path the way Lambda does (/var/task, /opt/python),
then times from just before the import of `app.py` (loaded by path) to the module being ready. The
baseline is a bare handler that imports aws_lambda_powertools' Logger and boto3 and creates a DynamoDB
client, measured the same way. One warm-up run per module first, so bytecode compilation is not counted.

The ratio is taken in pairs: each round imports, for each function, the bare handler and then the
function back to back, and the verdict is the median over rounds of function / bare. A shared or throttled machine changes speed
over seconds (the bare handler alone was seen to vary from 245 to 372 ms within one run); a ratio of two
medians taken over different moments mixes those states, a ratio within a pair mostly does not.
A reference handler (the bare one plus pydantic and one model) shows what pydantic's import alone adds.
A `-X importtime` run per module then says where the time goes, by top-level package.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.bench_common import LAYER_DIR, ROOT, VENV_PYTHON, Report, median

SECTION = "cold import"
TARGET_RATIO = 1.3
# McpFunction is measured against a bare MCP server with the same SDK (section mcp, scripts/bench_mcp.py).
FUNCTIONS = ("RpcFunction", "ChatTurnFunction", "ScanFunction", "WorkerFunction", "HostedFunction", "CatalogFunction")
HEAVY = ("boto3", "pydantic", "aws_lambda_powertools.logging", "aws_lambda_powertools.event_handler", "asyncio")

BARE_HANDLER = '''"""A bare handler: Powertools Logger, boto3, one DynamoDB client."""
import boto3
from aws_lambda_powertools import Logger

logger = Logger()
client = boto3.client("dynamodb")


def lambda_handler(event, context):
    return {"statusCode": 200}
'''

# The same plus what any pydantic model costs at import: the floor under every function's ratio.
PYDANTIC_HANDLER = BARE_HANDLER + '''
from pydantic import BaseModel, ConfigDict, Field


class Body(BaseModel):
    model_config = ConfigDict(defer_build=True)

    text: str = Field(min_length=1)
'''

PROBE = r"""
import sys, time
import importlib.util
code_dir, layer_dir, path = sys.argv[1], sys.argv[2], sys.argv[3]
if sys.argv[4:] == ["gc-running"]:  # for comparison only: the handler's GC pause made a no-op
    import gc
    gc.disable = gc.freeze = lambda: None
sys.path[:0] = [code_dir, layer_dir]
cpu_started = time.process_time()
started = time.perf_counter()
spec = importlib.util.spec_from_file_location("app", path)
module = importlib.util.module_from_spec(spec)
sys.modules["app"] = module
spec.loader.exec_module(module)
ready = time.perf_counter()
cpu = time.process_time() - cpu_started
assert callable(getattr(module, "lambda_handler", None))
print("BENCH", (ready - started) * 1000, cpu * 1000, len(sys.modules))
"""


def python() -> str:
    return str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


def handler_env(home: str) -> dict[str, str]:
    from skillcore_local.invoke import function_env
    from skillcore_local.template import table_env

    env = function_env({name: logical for name, logical in table_env().items()}, "http://127.0.0.1:8000", base={})
    for local_only in ("SKILLS_DYNAMODB_ENDPOINT", "SKILLS_LOCAL"):
        env.pop(local_only, None)
    env["SKILLS_MODEL"] = "bedrock"
    # The functions that call hosted endpoints get the template's KMS key (a per-function variable, not a Global):
    # without one they refuse to start outside the local stack. A dummy id: the KMS client is made at init, unused.
    env["SKILLS_HOSTED_KEY_ID"] = "alias/bench-hosted-secrets"
    env.update({"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8",
                "AWS_LAMBDA_FUNCTION_NAME": "bench", "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12"})
    return env


def handler_file(logical_id: str) -> tuple[Path, Path]:
    from skillcore_local.invoke import function_specs

    spec = function_specs()[logical_id]
    return spec.code_dir, spec.module_file


def sample(
    code_dir: Path, path: Path, env: dict[str, str], *, importtime: bool = False, gc_running: bool = False
) -> tuple[float, float, int, str]:
    """(wall ms, CPU ms, modules loaded, stderr) of one import in a new interpreter."""
    command = [python(), "-I", *(["-X", "importtime"] if importtime else []), "-c", PROBE,
               str(code_dir), str(LAYER_DIR), str(path), *(["gc-running"] if gc_running else [])]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    if done.returncode != 0:
        raise RuntimeError(f"importing {path} failed:\n{done.stderr[-3000:]}")
    line = next(line for line in done.stdout.splitlines() if line.startswith("BENCH "))
    _, millis, cpu, modules = line.split()
    return float(millis), float(cpu), int(modules), done.stderr


def paired_ratio(function: list[float], bare: list[float]) -> float:
    """Median over rounds of function / bare, each pair measured back to back."""
    return median([f / b for f, b in zip(function, bare, strict=True)])


@dataclass(frozen=True)
class Imported:
    self_ms: float
    cumulative_ms: float
    depth: int
    name: str


def parse_importtime(log: str) -> list[Imported]:
    """The lines of a `-X importtime` log, in the order Python wrote them (a module after its imports)."""
    rows = []
    for line in log.splitlines():
        found = re.match(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( *)(\S+)", line)
        if found:
            rows.append(Imported(int(found.group(1)) / 1000, int(found.group(2)) / 1000,
                                 (len(found.group(3)) - 1) // 2, found.group(4)))
    return rows


def by_package(rows: list[Imported]) -> dict[str, float]:
    """Self time (ms) per top-level package."""
    totals: dict[str, float] = defaultdict(float)
    for row in rows:
        totals[row.name.split(".")[0]] += row.self_ms
    return dict(totals)


def run(report: Report, *, quick: bool) -> dict[str, Any]:
    runs = 5 if quick else 15
    report.heading(f"1. Cold import: handler module import-to-ready in a fresh interpreter (median of {runs})")
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        env = handler_env(tmp)
        bare_dir = Path(tmp) / "bare"
        bare_dir.mkdir()
        (bare_dir / "app.py").write_text(BARE_HANDLER, encoding="utf-8")
        targets: dict[str, tuple[Path, Path]] = {"bare handler": (bare_dir, bare_dir / "app.py")}
        for logical_id in FUNCTIONS:
            targets[logical_id] = handler_file(logical_id)
        floor_dir = Path(tmp) / "pydantic"
        floor_dir.mkdir()
        (floor_dir / "app.py").write_text(PYDANTIC_HANDLER, encoding="utf-8")
        floor_ratio: list[float] = []
        report.line(f"  interpreter {python()} -I; env: table names, SKILLS_MODEL={env['SKILLS_MODEL']},"
                    f" AWS_REGION={env['AWS_REGION']}, dummy credentials")
        for code_dir, path in targets.values():  # warm-up: bytecode caches
            sample(code_dir, path, env)
        samples: dict[str, list[float]] = {name: [] for name in targets}
        cpu: dict[str, list[float]] = {name: [] for name in targets}
        # Each round and function: the bare handler, the function as shipped, and the function with its
        # init-time GC pause made a no-op, back to back. Ratios and differences are taken within a triplet.
        pair_bare: dict[str, list[float]] = {name: [] for name in FUNCTIONS}
        pair_bare_cpu: dict[str, list[float]] = {name: [] for name in FUNCTIONS}
        running: dict[str, list[float]] = {name: [] for name in FUNCTIONS}
        modules: dict[str, int] = {}
        bare_code, bare_path = targets["bare handler"]
        for round_number in range(runs):
            for name in FUNCTIONS:
                code_dir, path = targets[name]
                bare_ms, bare_cpu_ms, modules["bare handler"], _ = sample(bare_code, bare_path, env)
                if round_number % 2:  # alternate which variant comes second
                    running[name].append(sample(code_dir, path, env, gc_running=True)[0])
                millis, cpu_ms, modules[name], _ = sample(code_dir, path, env)
                if not round_number % 2:
                    running[name].append(sample(code_dir, path, env, gc_running=True)[0])
                for store, value in ((samples["bare handler"], bare_ms), (cpu["bare handler"], bare_cpu_ms),
                                     (pair_bare[name], bare_ms), (pair_bare_cpu[name], bare_cpu_ms),
                                     (samples[name], millis), (cpu[name], cpu_ms)):
                    store.append(value)
            bare_ms = sample(bare_code, bare_path, env)[0]
            floor_ratio.append(sample(floor_dir, floor_dir / "app.py", env)[0] / bare_ms)
        logs = {name: parse_importtime(sample(code_dir, path, env, importtime=True)[3])
                for name, (code_dir, path) in targets.items()}
        packages = {name: by_package(rows) for name, rows in logs.items()}

    ratios = {name: paired_ratio(samples[name], pair_bare[name]) for name in FUNCTIONS}
    rows = []
    worst = max(ratios.values())
    for name in targets:
        baseline = name == "bare handler"
        ratio = ratios.get(name, 1.0)
        rows.append((name, f"{median(samples[name]):.0f}", f"{min(samples[name]):.0f}", f"{max(samples[name]):.0f}",
                     f"{median(cpu[name]):.0f}", modules[name],
                     "-" if baseline else f"{ratio:.2f}",
                     "-" if baseline else f"{paired_ratio(cpu[name], pair_bare_cpu[name]):.2f}",
                     "-" if baseline else f"{median(samples[name]) / median(samples['bare handler']):.2f}",
                     "" if baseline else ("ok" if ratio <= TARGET_RATIO else "MISSED")))
    report.table(["module", "median ms", "min ms", "max ms", "CPU ms (median)", "modules", "ratio to bare",
                  "CPU ratio", "ratio of medians", f"target <= {TARGET_RATIO}"], rows)
    report.line("  (ratio to bare: median over rounds of function / the bare handler measured just before it, the verdict;"
                " the CPU-time ratio is the same over process CPU time; the ratio of the two medians is shown"
                " for comparison)")

    report.line("  the handlers pause the cyclic garbage collector during init (skillcore/init_phase.py); measured in the"
                " same rounds with the pause made a no-op:")
    for name in FUNCTIONS:
        saved = median([r - m for r, m in zip(running[name], samples[name], strict=True)])
        report.line(f"    {name}: ratio {paired_ratio(running[name], pair_bare[name]):.2f} without the pause;"
                    f" the pause saves {saved:.0f} ms (median of the per-round differences)")
    report.line(f"  reference: the bare handler plus pydantic and one model has ratio {median(floor_ratio):.2f} (same"
                " pairing): what pydantic's import adds to a handler made the usual way (the functions that use pydantic"
                " pause the collector during init and skip botocore's listing of every service, skillcore/db/aws.py,"
                " so they can come in under it)")
    report.line()
    report.line("  where the import time goes (-X importtime, one run each, which itself slows imports down):")
    report.line("  first import of the heavy packages, cumulative ms (includes whatever they import first):")
    for name in targets:
        firsts: dict[str, float] = {}
        for row in logs[name]:
            if row.name in HEAVY:
                firsts[row.name] = max(firsts.get(row.name, 0.0), row.cumulative_ms)
        own = sum(r.self_ms for r in logs[name] if r.name.split(".")[0] == "skillcore")
        report.line(f"    {name}: " + ", ".join(f"{n} {firsts[n]:.0f}" for n in HEAVY if n in firsts)
                    + (f"; skillcore's own modules (self) {own:.0f}" if own else ""))
    report.line("  self ms by top-level package, extra over the bare handler (> 3 ms):")
    base_packages = packages["bare handler"]
    for name in FUNCTIONS:
        extra = {pkg: ms - base_packages.get(pkg, 0.0) for pkg, ms in packages[name].items()}
        big = sorted(((p, v) for p, v in extra.items() if v > 3), key=lambda kv: -kv[1])[:12]
        report.line(f"    {name}: " + (", ".join(f"{p} +{v:.0f}" for p, v in big) or "nothing above 3 ms"))
    worst_name = max(FUNCTIONS, key=lambda n: median(samples[n]))
    top_self = sorted(logs[worst_name], key=lambda r: -r.self_ms)[:12]
    report.line(f"  largest single modules by self ms in {worst_name} (pydantic model classes are built in the"
                " module that defines them):")
    report.line("    " + ", ".join(f"{r.name} {r.self_ms:.0f}" for r in top_self))
    report.line()
    for name in FUNCTIONS:
        ratio = ratios[name]
        report.verdict(SECTION, f"{name} import / bare handler", f"{ratio:.2f}", f"<= {TARGET_RATIO}",
                       ratio <= TARGET_RATIO)
    report.line(f"  worst ratio {worst:.2f} (target <= {TARGET_RATIO}): "
                + ("target met" if worst <= TARGET_RATIO else "TARGET MISSED"))
    return {"samples": samples, "packages": packages}


def _debug() -> None:  # pragma: no cover - python -m scripts.bench_cold prints raw samples
    report = Report()
    print(json.dumps(run(report, quick=True)["samples"], indent=1))


if __name__ == "__main__":
    _debug()
