"""`make bench` section `code_tools`: an installed code tool called from a chat turn, over real HTTP on a LocalStack
(docs/code-skills.md "Installed code tools"), and the precompiled module against a compile.

- The example package (examples/packages/streak-coach/) submitted and approved through the service (the release
  check runs its tool's evals; the approval precompiles its module into the package store), installed for a user.
- The first code tool turn of the function instance (its tool registry and module cache empty: the release read,
  the package and the precompiled module read from the store and checked, the module deserialized) against warm
  turns (everything cached: the installs' Query and the call), p50/p95 over HTTP, and the DynamoDB requests of a
  warm turn counted on ChatTurnFunction's client.
- The example's module and a module of 2000 functions loaded in a fresh process: compiled, or from the artifact
  the service precompiled (what a cold start does with and without it).

Targets: a warm code tool turn within 150 ms at p95 on the development machine; the precompiled load of the large
module at least 20 times faster than its compile.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from scripts.bench_common import (
    Report,
    RequestCounter,
    SharedDynamo,
    describe_operations,
    env_scope,
    percentile,
)
from scripts.bench_latency import Http
from scripts.bench_packages import bench_publisher

SECTION = "code_tools"
SECRET = "bench-secret-of-at-least-thirty-two-bytes"
WARM_P95_MS = 150.0
SPEEDUP = 20.0

_COLD = """
import json, os, sys, time
sys.path[:0] = {paths!r}
os.environ.update({env!r})
event = json.loads(open({event!r}).read())
event["requestContext"]["authorizer"]["jwt"]["claims"]["sub"] = {user!r}
for key in ("rawPath",):
    event[key] = event[key].replace("CONVERSATION_ID", {conversation!r})
event["requestContext"]["http"]["path"] = event["rawPath"]
event["pathParameters"]["conversationId"] = {conversation!r}
from skillcore_local.invoke import FunctionRegistry
registry = FunctionRegistry()
t = time.perf_counter()
registry.handler("ChatTurnFunction")
found = [(time.perf_counter() - t) * 1000]
for i, text in enumerate({texts!r}):
    event["body"] = json.dumps({{"clientMessageId": f"cold-{{os.getpid()}}-{{i}}", "text": text}})
    t = time.perf_counter()
    answer = registry.invoke("ChatTurnFunction", event)
    found.append((time.perf_counter() - t) * 1000)
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["run"]["outcome"] == "succeeded", answer
print(json.dumps(found))
"""

_LOAD = """
import sys, time, json
sys.path[:0] = {paths!r}
wasm = open({wasm!r}, 'rb').read()
artifact = open({artifact!r}, 'rb').read() if {artifact!r} else None
t = time.perf_counter()
from skillcore.sandbox import modules
from skillcore.sandbox.engine import engine
engine()
u = time.perf_counter()
modules.load(wasm, precompiled=artifact)
v = time.perf_counter()
print(json.dumps([(v - t) * 1000, (v - u) * 1000]))
"""


def _load_ms(wasm: Path, artifact: Path | None) -> tuple[float, float]:
    """(the runtime's import and engine plus the load, the load alone) in ms, in a fresh process."""
    root = Path(__file__).resolve().parents[1]
    code = _LOAD.format(paths=[str(root), str(root / "layers" / "skillcore")], wasm=str(wasm),
                        artifact=str(artifact) if artifact else "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    total, alone = json.loads(done.stdout.strip().splitlines()[-1])
    return float(total), float(alone)


TOOL_TURN = '/streak-score {"days": [1, 1, 0, 1, 1, 1]}'


def _cold(env: dict[str, str], user: str, conversation: str, texts: list[str]) -> list[float]:
    """[the handler's import and init, then each turn] in ms, in a new process."""
    root = Path(__file__).resolve().parents[1]
    code = _COLD.format(paths=[str(root), str(root / "layers" / "skillcore")], env=dict(env), user=user,
                        conversation=conversation, event=str(root / "events" / "chat_post_message.json"),
                        texts=texts)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    if done.returncode != 0:
        raise RuntimeError(f"the cold chat turn failed: {done.stderr[-1500:]}")
    return [float(x) for x in json.loads(done.stdout.strip().splitlines()[-1])]


def loads(report: Report, *, quick: bool) -> None:
    from skillcore.sandbox.modules import precompile
    from tests.code_package_support import EXAMPLE, MODULE

    runs = 3 if quick else 7
    big = "(module (memory (export \"memory\") 1)" + "".join(
        f"(func $f{i} (param i32) (result i32) (i32.add (local.get 0) (i32.const {i})))" for i in range(2000)) + \
        "(func (export \"alloc\") (param i32) (result i32) (i32.const 1024))" \
        "(func (export \"run\") (param i32 i32) (result i64) (i64.const 0)))"
    from wasmtime import wat2wasm

    rows = []
    speedups = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, wasm in (("streak-score (example, AssemblyScript)", (EXAMPLE / MODULE).read_bytes()),
                            ("2000 functions", bytes(wat2wasm(big)))):
            module = Path(tmp) / "m.wasm"
            artifact = Path(tmp) / "m.cwasm"
            module.write_bytes(wasm)
            artifact.write_bytes(precompile(wasm))
            compiled = [_load_ms(module, None) for _ in range(runs)]
            loaded = [_load_ms(module, artifact) for _ in range(runs)]
            c, p = percentile([x[1] for x in compiled], 50), percentile([x[1] for x in loaded], 50)
            speedups.append(c / p if p else 0.0)
            rows.append((label, f"{len(wasm):,}", f"{c:.2f}", f"{p:.2f}",
                         f"{percentile([x[0] for x in compiled], 50):.1f}", f"{percentile([x[0] for x in loaded], 50):.1f}"))
    report.heading("A module's first load in a fresh process: compiled, or from the service's precompiled artifact")
    report.table(["module", "bytes", "compile p50 ms", "artifact p50 ms", "with import: compile", "with import: artifact"],
                 rows, align="lrrrrr")
    met = speedups[-1] >= SPEEDUP
    report.line(f"  large module: precompiled {speedups[-1]:.0f}x faster "
                f"({report.verdict(SECTION, 'precompiled load speedup, 2000 functions', f'{speedups[-1]:.0f}x', f'>= {SPEEDUP:.0f}x', met)})")


def chat(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    from skillcore.code_tools import registry
    from skillcore.packages import archive, installs, service
    from skillcore.sandbox import modules
    from skillcore_local.jwt_local import issue_token
    from skillcore_local.stack import LocalStack
    from tests import code_package_support as cps
    from tests import package_support as ps

    report.heading("A code tool from a chat turn over HTTP on a LocalStack (offline model)")
    with env_scope({"POWERTOOLS_LOG_LEVEL": "WARNING", "SKILLS_MODEL": "offline", "SKILLS_RATE_CHAT_PER_MINUTE": "0"}):
        local = LocalStack(port=0, ddb_endpoint=dynamo.endpoint, table_prefix="codeb-", scan_interval=0,
                           jwt_secret=SECRET, access_log=False)
        try:
            local.start()
            deps, keys = bench_publisher(local)
            db, now = deps.db, datetime.now(UTC)
            data = archive.write_zip(cps.SKILL_ID, cps.files(publisher="bench-pub"))
            release = service.submit(deps, "bench-publisher", ps.b64(data), keys.sign(data), now=now)
            service.decide(deps, "bench-operator", release.release_id, approve=True, reason="bench", now=now)
            user = f"bench-coder-{uuid.uuid4().hex[:6]}"
            installs.install(installs.InstallDeps(db=db, canary_percent=10, high_risk_trust_levels=()), user,
                             cps.SKILL_ID, now=now)
            http = Http(local.url, issue_token(user, secret=SECRET))
            status, agent = http.call("POST", "/rpc/agents", {"name": "Mika"})
            conversation = agent["defaultConversationId"]

            def turn() -> float:
                started = time.perf_counter()
                status, body = http.call("POST", f"/rpc/conversations/{conversation}/messages", {
                    "clientMessageId": uuid.uuid4().hex, "text": '/streak-score {"days": [1, 1, 0, 1, 1, 1]}'})
                elapsed = time.perf_counter() - started
                if status != 200 or body["run"]["outcome"] != "succeeded":
                    raise RuntimeError(f"code tool turn answered {status}: {str(body)[:300]}")
                return elapsed

            http.call("POST", f"/rpc/conversations/{conversation}/messages",
                      {"clientMessageId": uuid.uuid4().hex, "text": "hello"})  # the function's own first turn
            local.registry.handler("ChatTurnFunction")
            counter = RequestCounter()
            counter.attach(sys.modules["skillcore_local_fn_ChatTurnFunction"].db.client)
            firsts = []
            for _ in range(3 if quick else 5):
                registry.clear()
                modules.clear_cache()
                firsts.append(turn())
            warm = [turn() for _ in range(20 if quick else 60)]
            mark = counter.mark()
            turn()
            ops = counter.since(mark)
            p95 = percentile(warm, 95) * 1000
            met = report.verdict(SECTION, "p95 warm code tool chat turn (ms)", f"{p95:.1f}", f"<= {WARM_P95_MS:.0f}",
                                 p95 <= WARM_P95_MS)
            report.table(["turn", "runs", "p50 ms", "p95 ms", "verdict"], [
                ("first code tool turn of the instance (registry, package, artifact)", str(len(firsts)),
                 f"{percentile(firsts, 50) * 1000:.1f}", f"{percentile(firsts, 95) * 1000:.1f}", "(reported)"),
                ("warm code tool turn", str(len(warm)), f"{percentile(warm, 50) * 1000:.1f}", f"{p95:.1f}", met),
            ], align="lrrrl")
            report.line(f"  DynamoDB requests of a warm code tool turn: {len(ops)} ({describe_operations(ops)})")
            runs = 2 if quick else 3
            cold = [_cold(local.env, user, conversation, [TOOL_TURN, TOOL_TURN, TOOL_TURN]) for _ in range(runs)]
            plain = [_cold(local.env, user, conversation, ["hello", TOOL_TURN, TOOL_TURN]) for _ in range(runs)]

            def row(label: str, found: list[list[float]], i: int) -> tuple[str, ...]:
                return (label, str(len(found)), f"{percentile([c[i] for c in found], 50):.1f}",
                        f"{max(c[i] for c in found):.1f}")

            report.heading("Code tool turns in a new ChatTurnFunction process (the handler in-process, no HTTP)")
            report.table(["step", "runs", "p50 ms", "max ms"], [
                row("the handler's cold start (import and init)", cold, 0),
                row("its first turn, a code tool turn", cold, 1),
                row("its second turn, the same tool (warm)", cold, 2),
                row("a first turn without a tool, in another new process", plain, 1),
                row("then its first code tool turn (runtime import, release, package, artifact)", plain, 2),
                row("then the next code tool turn (warm)", plain, 3),
            ], align="lrrr")
        finally:
            local.stop()


def run(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    loads(report, quick=quick)
    chat(report, dynamo, quick=quick)

