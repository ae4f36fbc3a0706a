"""`make bench` section: the capability catalog, a protocol render and a create, over real HTTP on a LocalStack
(gateway + JWT check + RpcFunction in process, DynamoDB Local).

One user with 10 active `user:` capabilities (each: a platform step and a local-tool step, a binding and an
unused extra one, so narrowing has something to leave out). Measured on one keep-alive connection after a
warm-up: `GET /rpc/capabilities`, `GET /rpc/capabilities/protocol` (a `user:` capability for its host
profile) and `POST /rpc/user-capabilities` (a new name each time, over several users: 50 per user at most).
DynamoDB requests per call are counted on the handler's client (botocore events), with their operations.
"""

from __future__ import annotations

import sys
import time
from typing import Any
from urllib.parse import urlencode

from scripts.bench_common import (
    Report,
    RequestCounter,
    SharedDynamo,
    describe_operations,
    env_scope,
    percentile,
)
from scripts.bench_latency import Http

SECTION = "capabilities"
SECRET = "bench-secret-of-at-least-thirty-two-bytes"
ACTIVE = 10
PER_USER = 40  # creates per user, under the quota of 50 with the active ones
TARGETS = {"catalog": 2, "protocol": 2, "create": 1}  # DynamoDB requests per call
P95_TARGET_MS = 100.0
SCHEMA = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 500}}, "required": ["text"]}


def capability(name: str, platform_id: str) -> dict[str, Any]:
    def binding(binding_name: str) -> dict[str, Any]:
        return {"name": binding_name, "hostProfile": "claude-code", "mcpServerId": "obsidian",
                "mcpToolName": "append_note", "inputSchema": SCHEMA}

    return {
        "name": name, "displayName": "晚间笔记", "whenToUse": ["下班了", "整理一下今天"],
        "workflow": {
            "objective": "每天下班前把今天的要点记到本地笔记里",
            "steps": [
                {"kind": "platformCapability", "capabilityId": platform_id, "instruction": "回想今天聊过的工作"},
                {"kind": "localTool", "toolName": "notes", "hostProfile": "claude-code", "instruction": "把要点记下来"},
            ],
            "completionCriteria": "笔记里有今天的要点",
        },
        "platformCapabilityIds": [platform_id],
        "toolBindings": [binding("notes"), binding("spare")],
    }


def run(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    from skillcore.skills.builtin import SKILLS
    from skillcore_local.jwt_local import issue_token
    from skillcore_local.stack import LocalStack

    calls = 50 if quick else 200
    warmup = 10 if quick else 20
    report.heading(f"Capability catalog, protocol and create over HTTP on a LocalStack: {calls} calls each after"
                   f" {warmup} warm-up calls")
    platform_id = SKILLS.protocols()[0].capability_id
    with env_scope({"POWERTOOLS_LOG_LEVEL": "WARNING", "SKILLS_MODEL": "offline"}):
        local = LocalStack(port=0, ddb_endpoint=dynamo.endpoint, table_prefix="capb-", scan_interval=0,
                           jwt_secret=SECRET, access_log=False)
        try:
            local.start()
            owner = Http(local.url, issue_token("bench-cap-owner", secret=SECRET))
            for i in range(ACTIVE):
                status, created = owner.call("POST", "/rpc/user-capabilities", capability(f"routine_{i:02d}", platform_id))
                if status != 201:
                    raise RuntimeError(f"create answered {status}: {created}")
                path = f"/rpc/user-capabilities/{created['userCapabilityId']}/activate"
                status, answer = owner.call("POST", path, {"expectedVersion": created["version"]})
                if status != 200:
                    raise RuntimeError(f"activate answered {status}: {answer}")
            local.registry.handler("RpcFunction")
            module = sys.modules["skillcore_local_fn_RpcFunction"]
            counter = RequestCounter()
            counter.attach(module.db.client)
            protocol_path = "/rpc/capabilities/protocol?" + urlencode(
                {"capabilityId": "user:routine_03", "hostProfile": "claude-code"})
            creators = [Http(local.url, issue_token(f"bench-cap-creator-{u}", secret=SECRET))
                        for u in range((calls + warmup) // PER_USER + 1)]
            made = 0

            def create() -> tuple[int, Any]:
                nonlocal made
                who = creators[made // PER_USER]
                made += 1
                return who.call("POST", "/rpc/user-capabilities", capability(f"made_{made:05d}", platform_id))

            operations = {
                "catalog": (lambda: owner.call("GET", "/rpc/capabilities"), 200),
                "protocol": (lambda: owner.call("GET", protocol_path), 200),
                "create": (create, 201),
            }
            rows = []
            for name, (operation, expected) in operations.items():
                for _ in range(warmup):
                    operation()
                seconds: list[float] = []
                requests: list[int] = []
                ops: list[str] = []
                for _ in range(calls):
                    mark = counter.mark()
                    started = time.perf_counter()
                    status, answer = operation()
                    seconds.append(time.perf_counter() - started)
                    if status != expected:
                        raise RuntimeError(f"{name} answered {status}: {str(answer)[:200]}")
                    done = counter.since(mark)
                    requests.append(len(done))
                    ops = done
                p50, p95 = percentile(seconds, 50) * 1000, percentile(seconds, 95) * 1000
                most = max(requests)
                met_requests = report.verdict(SECTION, f"DynamoDB requests per {name}", str(most),
                                              f"<= {TARGETS[name]}", most <= TARGETS[name])
                met_p95 = report.verdict(SECTION, f"p95 {name} (ms)", f"{p95:.1f}", f"<= {P95_TARGET_MS:.0f}",
                                         p95 <= P95_TARGET_MS)
                rows.append((name, f"{min(requests)}-{most}", describe_operations(ops), f"{p50:.1f}", f"{p95:.1f}",
                             f"{max(seconds) * 1000:.1f}", f"{met_requests}; {met_p95}"))
            report.table(["call", "requests", "DynamoDB operations (last call)", "p50 ms", "p95 ms", "max ms",
                          "verdict"], rows, align="lrlrrrl")
            scans = "Scan" in counter.operations
            report.line("  Scan on these paths: " + ("YES" if scans else "none") + "; " + report.verdict(
                SECTION, "Scan on capability paths", "yes" if scans else "none", "none", not scans))
            if counter.retries:
                report.line(f"  note: botocore retried {counter.retries} request(s) during this section")
        finally:
            local.stop()
