"""`make bench` section `packages`: the catalog listing over real HTTP on a LocalStack (DynamoDB requests and ms a
page), and the verification of the largest package the format allows (docs/packages.md).

- Catalog: N published skills (each a publisher's release, submitted and approved through the service on the
  stack's own tables), then `GET /rpc/catalog?limit=50` page after page, every page's DynamoDB requests counted
  on CatalogFunction's client. Target: one Query a page, p95 within 100 ms.
- Installs: `POST /rpc/installs` by many users and one user's `GET /rpc/installs` (a page of installs with their
  serving versions), DynamoDB requests and ms each.
- Verification: a signed package at the format's limits (a zip just under MAX_PACKAGE_BYTES, as many files and
  as many uncompressed bytes as the limits let through), opened (limits, SKILL.md, skillcore.json, evals, the
  canonical digest) and its Ed25519 signature verified, as a submission does before anything is stored; the
  release check (defences, permissions, evals on the offline model) is timed apart. The first verification in
  a process imports `cryptography` (a cold submission pays it): reported on its own.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import Any

from scripts.bench_common import (
    Report,
    RequestCounter,
    SharedDynamo,
    describe_operations,
    env_scope,
    percentile,
)
from scripts.bench_latency import Http

SECTION = "packages"
SECRET = "bench-secret-of-at-least-thirty-two-bytes"
PAGE_REQUESTS_TARGET = 1
P95_PAGE_MS = 100.0
VERIFY_P95_MS = 50.0
# An install: the catalog skill and its rollout (2 GetItems), the install and its audit (one transaction), and
# the per-user rate limiter's counter (every mutation); a page of installs: one Query and one BatchGetItem.
INSTALL_REQUESTS_TARGET = 4
INSTALLS_PAGE_REQUESTS_TARGET = 2
P95_INSTALL_MS = 150.0  # four requests, one of them a transaction
WORDS = ("note", "plan", "tidy", "goal", "day", "list", "item", "memo", "task", "step", "done", "next", "记录", "整理")


def largest_files(seed: int = 7) -> dict[str, bytes]:
    """A package's files at the format's limits: the required files, evals at the case limit, and references
    filled with text that compresses about as much as prose, up to the limits on files, bytes and zip size."""
    from skillcore.packages import archive, limits
    from tests import package_support as ps

    rng = random.Random(seed)
    files = ps.files("bench-largest", publisher="bench")
    cases = [{"id": f"case-{i}", "input": f"帮我整理笔记 {i}", "replyContains": ["[skills: bench-largest]"]}
             for i in range(limits.MAX_EVAL_CASES)]
    files["evals/basic.json"] = json.dumps({"cases": cases}, ensure_ascii=False).encode()

    def text(size: int) -> bytes:
        out: list[str] = []
        while sum(len(w) + 1 for w in out) < size:
            out.append(rng.choice(WORDS) + str(rng.randint(0, 99999)))
        return " ".join(out).encode()[:size]

    room = limits.MAX_TOTAL_BYTES - sum(len(b) for b in files.values())
    slots = limits.MAX_FILES - len(files)
    each = min(limits.MAX_FILE_BYTES, room // slots)
    for i in range(slots):
        files[f"references/r{i:02d}.md"] = text(each)
        while len(archive.write_zip("bench-largest", files)) > limits.MAX_PACKAGE_BYTES:
            files[f"references/r{i:02d}.md"] = files[f"references/r{i:02d}.md"][:-512]
            if len(files[f"references/r{i:02d}.md"]) < 512:
                del files[f"references/r{i:02d}.md"]
                return files
    return files


def verification(report: Report, *, quick: bool) -> None:
    from skillcore.packages import archive, checks, signature
    from skillcore.packages.package import open_package
    from skillcore.skills.builtin import SKILLS
    from tests import package_support as ps

    files = largest_files()
    data = archive.write_zip("bench-largest", files)
    keys = ps.KeyPair()
    sig = keys.sign(data)
    report.heading(f"Verifying the largest package: {len(data):,} bytes zipped, {len(files)} files, "
                   f"{sum(len(b) for b in files.values()):,} bytes of files")
    cold = subprocess.run([sys.executable, "-c", (
        "import time; t=time.perf_counter(); "
        "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey; "
        "print((time.perf_counter()-t)*1000)")], capture_output=True, text=True, timeout=60)
    cold_ms = float(cold.stdout.strip() or "nan")

    def verify() -> None:
        package = open_package(data)
        signature.verify(signature.decode(sig), package.digest, keys.raw)

    runs = 30 if quick else 100
    verify()
    seconds: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        verify()
        seconds.append(time.perf_counter() - started)
    manifests = {m.skill_id: m for m in SKILLS.manifests()}
    package = open_package(data)
    check_seconds: list[float] = []
    for _ in range(max(5, runs // 10)):
        started = time.perf_counter()
        result = checks.run(package, manifests=manifests, now=datetime.now(UTC))
        check_seconds.append(time.perf_counter() - started)
    if not result.passed:
        raise RuntimeError("the largest package does not pass its own checks")
    p95 = percentile(seconds, 95) * 1000
    met = report.verdict(SECTION, "p95 verify largest package (ms)", f"{p95:.1f}", f"<= {VERIFY_P95_MS:.0f}",
                         p95 <= VERIFY_P95_MS)
    report.table(["step", "runs", "p50 ms", "p95 ms", "max ms", "verdict"], [
        ("open + signature", str(runs), f"{percentile(seconds, 50) * 1000:.1f}", f"{p95:.1f}",
         f"{max(seconds) * 1000:.1f}", met),
        ("release check (50 evals)", str(len(check_seconds)), f"{percentile(check_seconds, 50) * 1000:.1f}",
         f"{percentile(check_seconds, 95) * 1000:.1f}", f"{max(check_seconds) * 1000:.1f}", "(reported)"),
    ], align="lrrrrl")
    report.line(f"  first import of cryptography's Ed25519 in a fresh process: {cold_ms:.1f} ms "
                "(paid by the first submission of a function instance, never by its cold start)")


def bench_publisher(local: Any) -> tuple[Any, Any]:
    """The catalog service on a running LocalStack's tables and package directory, with the publisher `bench-pub`
    (account `bench-publisher`) registered: (PackageDeps, its KeyPair). Shared by the packages and code-tools benches."""
    from skillcore.db.dynamo import make_db
    from skillcore.packages import service
    from skillcore.packages.blobs import DirectoryBlobs
    from skillcore.packages.models import TrustLevel
    from skillcore.settings import Settings
    from skillcore.skills.builtin import SKILLS
    from tests import package_support as ps

    deps = service.PackageDeps(db=make_db(Settings.from_env(local.env)),
                               blobs=lambda: DirectoryBlobs(local.env["SKILLS_LOCAL_PACKAGE_DIR"]),
                               manifests={m.skill_id: m for m in SKILLS.manifests()})
    keys = ps.KeyPair()
    service.register_publisher(deps, "bench-operator", publisher_id="bench-pub", display_name="Bench",
                               user_id="bench-publisher", trust_level=TrustLevel.COMMUNITY, public_key=keys.pem,
                               now=datetime.now(UTC))
    return deps, keys


def catalog(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    from skillcore.packages import archive, service
    from skillcore_local.jwt_local import issue_token
    from skillcore_local.stack import LocalStack
    from tests import package_support as ps

    skills = 60 if quick else 150
    report.heading(f"Catalog listing over HTTP on a LocalStack: {skills} published skills, pages of 50")
    with env_scope({"POWERTOOLS_LOG_LEVEL": "WARNING", "SKILLS_MODEL": "offline"}):
        local = LocalStack(port=0, ddb_endpoint=dynamo.endpoint, table_prefix="pkgb-", scan_interval=0,
                           jwt_secret=SECRET, access_log=False)
        try:
            local.start()
            deps, keys = bench_publisher(local)
            now = datetime.now(UTC)
            for i in range(skills):
                name = f"bench-skill-{i:04d}"
                data = archive.write_zip(name, ps.files(name, publisher="bench-pub"))
                release = service.submit(deps, "bench-publisher", ps.b64(data), keys.sign(data), now=now)
                service.decide(deps, "bench-operator", release.release_id, approve=True, reason="bench", now=now)
            reader = Http(local.url, issue_token("bench-reader", secret=SECRET))
            local.registry.handler("CatalogFunction")
            module = sys.modules["skillcore_local_fn_CatalogFunction"]
            counter = RequestCounter()
            counter.attach(module.db.client)
            rounds = 5 if quick else 20
            seconds: list[float] = []
            requests: list[int] = []
            ops: list[str] = []
            seen = 0
            for round_ in range(rounds + 1):
                cursor: str | None = None
                seen = 0
                while True:
                    path = "/rpc/catalog?limit=50" + (f"&cursor={cursor}" if cursor else "")
                    mark = counter.mark()
                    started = time.perf_counter()
                    status, page = reader.call("GET", path)
                    elapsed = time.perf_counter() - started
                    if status != 200:
                        raise RuntimeError(f"catalog answered {status}: {str(page)[:200]}")
                    if round_ > 0:  # the first round warms up
                        seconds.append(elapsed)
                        done = counter.since(mark)
                        requests.append(len(done))
                        ops = done
                    seen += len(page["items"])
                    cursor = page["nextCursor"]
                    if cursor is None:
                        break
            if seen != skills:
                raise RuntimeError(f"the catalog listed {seen} skills of {skills}")
            most = max(requests)
            p95 = percentile(seconds, 95) * 1000
            met_requests = report.verdict(SECTION, "DynamoDB requests per catalog page", str(most),
                                          f"<= {PAGE_REQUESTS_TARGET}", most <= PAGE_REQUESTS_TARGET)
            met_p95 = report.verdict(SECTION, "p95 catalog page (ms)", f"{p95:.1f}", f"<= {P95_PAGE_MS:.0f}",
                                     p95 <= P95_PAGE_MS)
            report.table(["call", "pages", "requests", "DynamoDB operations (last page)", "p50 ms", "p95 ms", "verdict"], [
                ("GET /rpc/catalog?limit=50", str(len(seconds)), f"{min(requests)}-{most}", describe_operations(ops),
                 f"{percentile(seconds, 50) * 1000:.1f}", f"{p95:.1f}", f"{met_requests}; {met_p95}")],
                align="lrrlrrl")
            installs(report, local, counter, skills=skills, quick=quick)
            scans = "Scan" in counter.operations
            report.line("  Scan on this path: " + ("YES" if scans else "none"))
        finally:
            local.stop()


def installs(report: Report, local: object, counter: RequestCounter, *, skills: int, quick: bool) -> None:
    """Installs over HTTP on the same stack: `POST /rpc/installs` by many users (each a new install), then one
    user's `GET /rpc/installs` with a page of installs (each with its serving version)."""
    from skillcore_local.jwt_local import issue_token

    url = local.url  # type: ignore[attr-defined]
    users = 20 if quick else 60
    per_user = 10
    report.heading(f"Installs over HTTP: {users} users install a skill each; one user lists {per_user} installs")
    install_s: list[float] = []
    install_requests: list[int] = []
    install_ops: list[str] = []
    for i in range(users):
        person = Http(url, issue_token(f"bench-installer-{i:04d}", secret=SECRET))
        mark = counter.mark()
        started = time.perf_counter()
        status, body = person.call("POST", "/rpc/installs", {"skillId": f"bench-skill-{i % skills:04d}"})
        elapsed = time.perf_counter() - started
        if status != 201:
            raise RuntimeError(f"install answered {status}: {str(body)[:200]}")
        if i > 0:  # the first warms the install path up
            install_s.append(elapsed)
            install_ops = counter.since(mark)
            install_requests.append(len(install_ops))
    lister = Http(url, issue_token("bench-lister", secret=SECRET))
    for i in range(per_user):
        status, body = lister.call("POST", "/rpc/installs", {"skillId": f"bench-skill-{i:04d}"})
        if status != 201:
            raise RuntimeError(f"install answered {status}: {str(body)[:200]}")
    list_s: list[float] = []
    list_requests: list[int] = []
    list_ops: list[str] = []
    for round_ in range(11 if quick else 31):
        mark = counter.mark()
        started = time.perf_counter()
        status, page = lister.call("GET", "/rpc/installs?limit=50")
        elapsed = time.perf_counter() - started
        if status != 200 or len(page["items"]) != per_user:
            raise RuntimeError(f"the installs listing answered {status}: {str(page)[:200]}")
        if round_ > 0:
            list_s.append(elapsed)
            list_ops = counter.since(mark)
            list_requests.append(len(list_ops))
    install_most, list_most = max(install_requests), max(list_requests)
    install_p95, list_p95 = percentile(install_s, 95) * 1000, percentile(list_s, 95) * 1000
    met_install = report.verdict(SECTION, "DynamoDB requests per install", str(install_most),
                                 f"<= {INSTALL_REQUESTS_TARGET}", install_most <= INSTALL_REQUESTS_TARGET)
    met_list = report.verdict(SECTION, "DynamoDB requests per installs page", str(list_most),
                              f"<= {INSTALLS_PAGE_REQUESTS_TARGET}", list_most <= INSTALLS_PAGE_REQUESTS_TARGET)
    met_p95 = report.verdict(SECTION, "p95 install (ms)", f"{install_p95:.1f}", f"<= {P95_INSTALL_MS:.0f}",
                             install_p95 <= P95_INSTALL_MS)
    report.table(["call", "calls", "requests", "DynamoDB operations (last call)", "p50 ms", "p95 ms", "verdict"], [
        ("POST /rpc/installs", str(len(install_s)), f"{min(install_requests)}-{install_most}",
         describe_operations(install_ops), f"{percentile(install_s, 50) * 1000:.1f}", f"{install_p95:.1f}",
         f"{met_install}; {met_p95}"),
        (f"GET /rpc/installs ({per_user} installs)", str(len(list_s)), f"{min(list_requests)}-{list_most}",
         describe_operations(list_ops), f"{percentile(list_s, 50) * 1000:.1f}", f"{list_p95:.1f}", met_list),
    ], align="lrrlrrl")


def run(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    verification(report, quick=quick)
    catalog(report, dynamo, quick=quick)
