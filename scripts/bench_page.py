"""Section "page": the Skills page's first load in Debian's Chromium over a LocalStack, from Playwright's
request log (scripts/page_load.py): bytes transferred (uncompressed), API requests before usable, requests to
other origins, and the time to usable (median and p95 of cold loads, each in a fresh browser context)."""

from __future__ import annotations

import os
import shutil
import statistics

from scripts.bench_common import Report, SharedDynamo, env_scope

SECRET = "bench-page-secret-of-at-least-32-bytes"
BUDGET_KB = 150
BUDGET_API_REQUESTS = 6


def _chromium() -> str:
    path = os.environ.get("SKILLS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise RuntimeError("no Chromium: `apt-get install -y chromium fonts-noto-cjk` or set SKILLS_CHROMIUM")
    return path


def run(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    from playwright.sync_api import sync_playwright

    from scripts.page_load import measure_first_load
    from skillcore_local.jwt_local import issue_token
    from skillcore_local.stack import LocalStack

    loads = 5 if quick else 20
    report.heading(f"Skills page: first load in Chromium over a LocalStack, {loads} cold loads")
    with env_scope({"POWERTOOLS_LOG_LEVEL": "WARNING", "SKILLS_MODEL": "offline"}):
        local = LocalStack(port=0, ddb_endpoint=dynamo.endpoint, table_prefix="page-", scan_interval=0,
                           jwt_secret=SECRET, access_log=False)
        local.start()
        base = local.url
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
                try:
                    # The first user is new (its profile is created on the way); the rest return with an agent.
                    first = measure_first_load(browser, local.url, issue_token("bench-page-new", secret=SECRET))
                    token = issue_token("bench-page", secret=SECRET)
                    measure_first_load(browser, local.url, token)  # creates the profile; not counted
                    results = [measure_first_load(browser, local.url, token) for _ in range(loads)]
                finally:
                    browser.close()
        finally:
            local.stop()

    last = results[-1]
    rows = []
    for f in last.fetched:
        rows.append((f.method, f.url.removeprefix(base), str(f.status), f"{f.body_bytes:,}", f"{f.header_bytes:,}"))
    report.table(["method", "path (returning user's load)", "status", "body B", "headers B"], rows,
                 align="llrrr")
    usable = sorted(r.usable_ms for r in results)
    p95 = usable[min(len(usable) - 1, round(0.95 * (len(usable) - 1)))]
    total_kb = max(r.total_bytes for r in [first, *results]) / 1024
    api = max(len(r.api_requests) for r in [first, *results])
    others = sorted({o for r in [first, *results] for o in r.other_origins})
    report.pairs([
        ("requests (new user / returning)", f"{len(first.fetched)} / {len(last.fetched)}"),
        ("API requests before usable (new / returning)", f"{len(first.api_requests)} / {len(last.api_requests)}"),
        ("transferred, bodies + headers (new / returning)",
         f"{first.total_bytes / 1024:.1f} KB / {last.total_bytes / 1024:.1f} KB"),
        ("time to usable, median / p95", f"{statistics.median(usable):.0f} ms / {p95:.0f} ms"),
        ("other origins", ", ".join(others) or "none"),
    ])
    report.verdict("page", "first load transferred (max)", f"{total_kb:.1f} KB", f"<= {BUDGET_KB} KB",
                   total_kb <= BUDGET_KB)
    report.verdict("page", "API requests before usable (max)", str(api), f"<= {BUDGET_API_REQUESTS}",
                   api <= BUDGET_API_REQUESTS)
    report.verdict("page", "requests to other origins", str(len(others)), "0", not others)
