"""`python -m scripts.bench` (`make bench`): cold imports, DynamoDB requests per operation, chat-turn latency,
memory ranking and the background scheduler, printed as one report with figures and their targets.

    python -m scripts.bench                 every section, full size
    python -m scripts.bench --quick         every section, smaller
    python -m scripts.bench --only requests --only ranking
    python -m scripts.bench --only scheduler --jobs 2000
    python -m scripts.bench --only capabilities
    python -m scripts.bench --only scale --quick          the burst through shard tasks, about 3 minutes
    python -m scripts.bench --only scale --reminders 4000 --slots 400 --workers 1,8,8x4

Sections: cold, mcp (McpFunction against a bare MCP server), requests, latency, ranking, scheduler, automation,
scale (a burst of reminders and automation slots drained through the dispatcher's shard tasks), page (the Skills page's first load), capabilities (catalog, protocol, create over HTTP), hosted (a proxied hosted tool call against a direct one, and its DynamoDB requests), validation (a hosted
call's argument check on the caps' worst case, budget 50 ms), sandbox (code tools: the runtime's cold import, a
trivial tool's cold call, compiled or precompiled, and its warm call), packages (the catalog listing's DynamoDB
requests and ms a page, and the verification of the largest allowed package), code_tools (an installed code
tool from a chat turn over HTTP, its first turn and warm turns, and a module compiled or precompiled). The script asserts
nothing: a missed target is
reported ("TARGET MISSED") and listed at the end; the exit status is non-zero only if a section crashed.
DynamoDB Local (in memory) is started once when a section needs it and is always stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata

from scripts.bench_common import Report, SharedDynamo, dynamodb_local_version, ensure_import_paths

SECTIONS = ("cold", "mcp", "requests", "latency", "ranking", "scheduler", "automation", "scale", "page",
            "capabilities", "hosted", "validation", "sandbox", "packages", "code_tools")


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def _java() -> str:
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "not found (DynamoDB Local cannot run; moto would stand in)"
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[0] if lines else "?"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _code() -> str:
    """The commit measured, and whether the measured code has uncommitted changes (others edit concurrently)."""
    from scripts.bench_common import ROOT

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, timeout=20, cwd=ROOT).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = [line[3:] for line in git("status", "--porcelain", "--", "functions", "layers", "skillcore_local",
                                        "template.yaml").splitlines() if line.strip()]
    if not changed:
        return f"{commit}, no uncommitted changes in functions/, layers/, skillcore_local/, template.yaml"
    return f"{commit} + uncommitted changes: {', '.join(changed)}"


def environment(report: Report, args: argparse.Namespace) -> None:
    from scripts.bench_cold import python

    report.heading("Environment")
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count() or 0
    venv = python()
    venv_version = subprocess.run([venv, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                                  text=True, timeout=30).stdout.strip() if venv != sys.executable else None
    rows = [
        ("date", datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")),
        ("python", f"{sys.version.split()[0]} ({sys.executable})"),
        *([("python for cold imports", f"{venv_version} ({venv})")] if venv_version else []),
        ("platform", f"{platform.platform()} {platform.machine()}"),
        ("cores", f"{os.cpu_count()} (usable by this process: {affinity})"),
        ("load average at start", _load()),
        ("java", _java()),
        ("DynamoDB Local", dynamodb_local_version()),
        ("boto3 / botocore", f"{_version('boto3')} / {_version('botocore')}"),
        ("aws-lambda-powertools", _version("aws-lambda-powertools")),
        ("pydantic", _version("pydantic")),
        ("code", _code()),
        ("mode", ("quick" if args.quick else "full") + f"; sections: {', '.join(args.only)}"),
    ]
    report.pairs(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.bench",
        description="Cold imports, DynamoDB requests per operation, chat-turn latency, memory ranking and the"
        " background scheduler, printed as one report with figures and their targets.",
    )
    parser.add_argument("--quick", action="store_true", help="smaller runs (about a minute and a half)")
    parser.add_argument("--only", action="append", choices=SECTIONS, metavar="SECTION",
                        help=f"run only this section (repeatable): {', '.join(SECTIONS)}")
    parser.add_argument("--jobs", type=int, default=None,
                        help="due jobs per scheduler run (default 5000, --quick 500)")
    parser.add_argument("--reminders", type=int, default=None,
                        help="scale: reminders due at the instant (default 20000, --quick 200)")
    parser.add_argument("--slots", type=int, default=None,
                        help="scale: automation slots due at the instant (default 2000, --quick 20)")
    parser.add_argument("--dynamodb-delay-ms", type=float, default=0.0,
                        help="hosted: every DynamoDB request of the proxied calls waits this long before it is sent,"
                             " a stand-in for a table farther away than DynamoDB Local (figures only, no verdict)")
    parser.add_argument("--workers", default="1,2,4,8,1x4,8x4",
                        help="scale: workers, or workers x items each runs at once, comma-separated"
                             " (default 1,2,4,8,1x4,8x4)")
    args = parser.parse_args(argv)
    args.only = [s for s in SECTIONS if s in (args.only or SECTIONS)]
    ensure_import_paths()

    report = Report()
    began = time.perf_counter()
    environment(report, args)
    dynamo = SharedDynamo()
    timings: list[tuple[str, float, str]] = []
    crashed: list[str] = []

    def cold() -> None:
        from scripts import bench_cold

        bench_cold.run(report, quick=args.quick)

    def mcp() -> None:
        from scripts import bench_mcp

        bench_mcp.run(report, quick=args.quick)

    def requests() -> None:
        from scripts import bench_requests

        bench_requests.run(report, dynamo, quick=args.quick)

    def latency() -> None:
        from scripts import bench_latency

        bench_latency.run(report, dynamo, quick=args.quick)

    def ranking() -> None:
        from scripts import bench_ranking

        bench_ranking.run(report, quick=args.quick)

    def scheduler() -> None:
        from scripts import bench_scheduler

        bench_scheduler.run(report, dynamo, quick=args.quick, jobs=args.jobs)

    def automation() -> None:
        from scripts import bench_automation

        bench_automation.run(report, dynamo, quick=args.quick)

    def scale() -> None:
        from scripts import bench_scale

        bench_scale.run(report, dynamo, quick=args.quick, reminders=args.reminders, slots=args.slots,
                        configs=bench_scale.parse_configs(args.workers))

    def capabilities() -> None:
        from scripts import bench_capabilities

        bench_capabilities.run(report, dynamo, quick=args.quick)

    def page() -> None:
        from scripts import bench_page

        bench_page.run(report, dynamo, quick=args.quick)

    def hosted() -> None:
        from scripts import bench_hosted

        bench_hosted.run(report, dynamo, quick=args.quick, dynamodb_delay_ms=args.dynamodb_delay_ms)

    def packages() -> None:
        from scripts import bench_packages

        bench_packages.run(report, dynamo, quick=args.quick)

    def validation() -> None:
        from scripts import bench_validation

        bench_validation.run(report, quick=args.quick)

    def code_tools() -> None:
        from scripts import bench_code_tools

        bench_code_tools.run(report, dynamo, quick=args.quick)

    def sandbox() -> None:
        from scripts import bench_sandbox

        bench_sandbox.run(report, quick=args.quick)

    runners: dict[str, Callable[[], None]] = {
        "cold": cold, "mcp": mcp, "requests": requests, "latency": latency, "ranking": ranking, "scheduler": scheduler,
        "automation": automation, "scale": scale, "page": page, "capabilities": capabilities,
        "hosted": hosted, "validation": validation, "sandbox": sandbox, "packages": packages,
        "code_tools": code_tools,
    }
    try:
        for name in args.only:
            started = time.perf_counter()
            try:
                runners[name]()
            except KeyboardInterrupt:
                raise
            except Exception:  # noqa: BLE001 - one broken section must not hide the others
                crashed.append(name)
                report.line(f"\n  SECTION {name} CRASHED:")
                report.line("  " + traceback.format_exc().replace("\n", "\n  "))
            elapsed = time.perf_counter() - started
            timings.append((name, elapsed, _load()))
            report.line(f"  [{name}: {elapsed:.1f} s; load average {_load()}]")
    finally:
        dynamo.close()

    report.summary()
    report.heading("Run")
    report.table(["section", "seconds", "load average after"],
                 [(n, f"{s:.1f}", load) for n, s, load in timings] + [("total", f"{time.perf_counter() - began:.1f}", _load())])
    if crashed:
        report.line(f"  crashed sections: {', '.join(crashed)}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
