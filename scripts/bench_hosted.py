"""Section hosted: what the hosted-endpoint proxy adds to a tools/call, and the DynamoDB requests per call.

The endpoint is tests/hosted_server.py's real MCP server (the official SDK over HTTPS on a loopback address,
port 443), in a process of its own: a remote endpoint shares no interpreter (and no GIL) with the proxy. Four ways
to call its `add` tool, sampled interleaved (one of each per round) so that the machine's load drifts over all
of them alike:

- egress: `egress.mcp_session.call_tool` alone (the same client over the checked, pinned transport), no
  DynamoDB, no key;
- direct: the official MCP client (`mcp.Client` over `streamable_http_client`, a fresh connection, initialize
  and tools/call, the same messages as the proxy sends for each call), straight to the server's address;
- service: `hosted/calls.py`'s `call()` in process, against DynamoDB Local: the grant/endpoint/record read, the
  key file's unwrap, the schema check, the claim (written while the session opens), the egress checks (URL,
  resolution, address, pinned TLS transport) and the completion with its audit;
- gateway: `POST /rpc/hosted-endpoints/{endpointId}/calls` through the local stack (HTTP, JWT, HostedFunction).

Added latency = proxied - direct, per percentile of each series (p50 and p95 of the same run). Target: at most
10 ms added at p50 by the service. The DynamoDB requests are counted on the service's client (botocore's
before-call), per call and by operation.

Then the hostile-server timings (`hostile`): tests/hostile_server.py's server (real TLS, in this process) misbehaves
at initialize, tools/list or tools/call (a priming event with a 600 s `retry` then close, a trickle, endless
comments, an endless chunked body, one huge line, a stalled TLS handshake); each exchange through
`egress.mcp_session` is timed against its deadline (HOSTILE_DEADLINE_SECONDS). Target: every one answers within
the deadline + 1 s, with its precise reason.
"""

from __future__ import annotations

import contextlib
import ssl
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scripts.bench_common import (
    ROOT,
    Report,
    RequestCounter,
    SharedDynamo,
    describe_operations,
    env_scope,
    percentile,
)

SECTION = "hosted"
ADDED_P50_TARGET_MS = 10.0
HOSTILE_DEADLINE_SECONDS = 2.0
HOSTILE_SLACK_SECONDS = 1.0


def _direct_call(url: str, context: ssl.SSLContext) -> Any:
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from skillcore.egress.mcp_session import send_tools_call

    # The same three messages as the proxy's: initialize, its notification, tools/call (Client.call_tool would
    # list the tools first on a fresh session, a round trip the proxy does not make).
    async def flow() -> Any:
        async with httpx2.AsyncClient(verify=context, timeout=30, trust_env=False) as http, \
                Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            return await send_tools_call(client, "add", {"a": 1, "b": 2})

    return anyio.run(flow)


def run(report: Report, dynamo: SharedDynamo, *, quick: bool, dynamodb_delay_ms: float = 0.0) -> dict[str, Any]:
    from skillcore.db.dynamo import Db
    from skillcore.egress.settings import EgressSettings
    from skillcore.hosted import calls, secrets
    from skillcore.hosted import service as hosted
    from skillcore.policy import grant_store
    from skillcore.policy.grants import GrantScope
    from skillcore.settings import Settings
    from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS
    from skillcore_local.jwt_local import issue_token
    from skillcore_local.stack import LocalStack

    rounds = 40 if quick else 200
    warmup = 5
    delay = dynamodb_delay_ms / 1000
    report.heading(f"Hosted. A proxied tools/call against a direct official-client call ({rounds} rounds, interleaved)"
                   + (f", every DynamoDB request {dynamodb_delay_ms:g} ms later" if delay else ""))
    with tempfile.TemporaryDirectory(prefix="bench-hosted-") as tmp:
        server = _ServerProcess(Path(tmp))
        try:
            egress_env = {**server.settings_env(), "SKILLS_LOCAL": "1"}
            tables = dynamo.fresh_tables("hosted")
            env = {**dynamo.function_env(tables), **egress_env}
            settings = Settings.from_env(env)
            counter = RequestCounter(delay_seconds=delay)
            db = Db(client=counter.attach(dynamo.client()), tables=settings.tables)
            deps = hosted.HostedDeps(db=db, keys=secrets.LocalKeyFile(Path(tmp) / "key"),
                                     egress=EgressSettings.from_env(egress_env), skill=HOSTED_WORKFLOWS)
            user, now = f"bench-{uuid.uuid4().hex[:8]}", datetime.now(UTC)
            grant_store.set_grant(db, user_id=user, skill_id=HOSTED_WORKFLOWS.skill_id,
                                  skill_version=HOSTED_WORKFLOWS.version, code="hosted_workflow:invoke",
                                  scope=GrantScope.user(), granted=True, grant_id=uuid.uuid4().hex, now=now)
            endpoint = hosted.register(deps, user, name="bench_flow", display_name="Bench", url=server.url(),
                                       token="bench-token", now=now)
            hosted.update(deps, user, endpoint.endpoint_id, expected_version=1, display_name=None, status=None,
                          tools=[hosted.ToolChange(name="add", requires_approval=False)], now=now)

            context = ssl.create_default_context(cafile=str(server.ca_file))
            context.check_hostname = False  # the direct client dials the address; the CA is still checked
            direct_url = f"https://{server.address}/mcp"

            # The stack's functions read the environment when first invoked: it stays applied until the stop.
            scope = env_scope({**egress_env, "POWERTOOLS_LOG_LEVEL": "WARNING"})
            scope.__enter__()
            local = LocalStack(port=0, ddb_endpoint=dynamo.endpoint, data_dir=Path(tmp) / "data",
                               scan_interval=0, jwt_secret="bench-secret", table_prefix="hostedgw-",
                               access_log=False)
            # the stack's functions create their clients when first invoked (here): with a delay, theirs wait too
            with RequestCounter(delay_seconds=delay).every_new_client() if delay else contextlib.nullcontext():
                local.start()
                gateway_user = f"bench-gw-{uuid.uuid4().hex[:6]}"
                token = issue_token(gateway_user, secret="bench-secret")
                gateway_endpoint = _gateway_setup(local.url, token, server.url())
            try:

                def direct() -> None:
                    result = _direct_call(direct_url, context)
                    assert not result.is_error

                index = iter(range(10**9))

                def service() -> None:
                    result = calls.call(deps, user, endpoint.endpoint_id, tool_name="add", arguments={"a": 1, "b": 2},
                                        client_call_id=f"b{next(index)}", approval_id=None, now=datetime.now(UTC))
                    assert not result.is_error and result.content == "3", result

                def gateway() -> None:
                    status, body = _post(local.url, token, f"/rpc/hosted-endpoints/{gateway_endpoint}/calls",
                                         {"toolName": "add", "arguments": {"a": 1, "b": 2},
                                          "clientCallId": f"g{next(index)}"})
                    assert status == 200 and body["content"] == "3", (status, body)

                from skillcore.egress import mcp_session

                def egress() -> None:
                    result = mcp_session.call_tool(server.url(), "bench-token", deps.egress, "add", {"a": 1, "b": 2})
                    assert result["content"][0]["text"] == "3", result

                series: dict[str, list[float]] = {"direct": [], "egress": [], "service": [], "gateway": []}
                runners = {"direct": direct, "egress": egress, "service": service, "gateway": gateway}
                dynamo_seconds: list[float] = []
                dynamo_waited: list[float] = []  # the requests the call waited for (not the claim beside the session)
                per_call: list[int] = []
                operations: list[str] = []
                for round_ in range(warmup + rounds):
                    for name, runner in runners.items():
                        mark, spent, waited = counter.mark(), counter.seconds, counter.main_thread_seconds
                        started = time.perf_counter()
                        runner()
                        elapsed = time.perf_counter() - started
                        if round_ >= warmup:
                            series[name].append(elapsed)
                            if name == "service":
                                ops = counter.since(mark)
                                per_call.append(len(ops))
                                operations = ops
                                dynamo_seconds.append(counter.seconds - spent)
                                dynamo_waited.append(counter.main_thread_seconds - waited)
            finally:
                local.stop()
                scope.__exit__(None, None, None)
        finally:
            server.stop()

    def p(name: str, q: float) -> float:
        return percentile(series[name], q) * 1000

    rows = [(name, f"{p(name, 50):.1f}", f"{p(name, 95):.1f}",
             "-" if name == "direct" else f"{p(name, 50) - p('direct', 50):+.1f}",
             "-" if name == "direct" else f"{p(name, 95) - p('direct', 95):+.1f}") for name in series]
    report.table(["path", "p50 ms", "p95 ms", "added p50 ms", "added p95 ms"], rows)
    added_p50 = p("service", 50) - p("direct", 50)
    if delay:  # a what-if: the target is the local stack's, as it is
        report.line(f"  service's added latency at p50: {added_p50:.1f} ms with every DynamoDB request "
                    f"{dynamodb_delay_ms:g} ms later (no verdict: the target is measured without a delay)")
    else:
        verdict = report.verdict(SECTION, "proxy's added latency at p50 (ms)", f"{added_p50:.1f}",
                                 f"<= {ADDED_P50_TARGET_MS:.0f}", added_p50 <= ADDED_P50_TARGET_MS)
        report.line(f"  service's added latency at p50: {added_p50:.1f} ms (target <= {ADDED_P50_TARGET_MS:.0f}): "
                    f"{verdict}")
    report.line(f"  DynamoDB Local's requests per call: p50 {percentile(dynamo_seconds, 50) * 1000:.1f} ms in all, "
                f"{percentile(dynamo_waited, 50) * 1000:.1f} ms on the call's path (the read and the completion; the "
                "claim is written beside the session's opening); 'egress' is mcp_session.call_tool alone (the URL, "
                "resolution and address checks, the pinned transport), without DynamoDB or the key")
    own = added_p50 - percentile(dynamo_waited, 50) * 1000
    report.line(f"  the proxy's own work at p50 (added, less the DynamoDB time on the call's path): {own:.1f} ms, "
                "with any wait for a claim slower than the session's opening")
    report.line(f"  DynamoDB requests per proxied call: min {min(per_call)}, max {max(per_call)} "
                f"({describe_operations([op.split('(')[0] for op in operations])}; last call: {', '.join(operations)})")
    return {"series": series, "requests": per_call, "hostile": hostile(report, quick=quick)}


def hostile(report: Report, *, quick: bool) -> dict[str, tuple[str, float]]:
    """Each hostile behaviour at each step, timed against the exchange's deadline: {"behaviour/step": (reason,
    seconds)}."""
    import threading
    from concurrent.futures import Future

    import mcp.client.streamable_http  # noqa: F401  (a cold import is not the exchange's time: mcp_session does it first)

    from skillcore.egress import mcp_session
    from skillcore.egress.errors import EgressError
    from skillcore.egress.settings import EgressSettings
    from tests.hostile_server import BEHAVIOURS, HostileServer

    deadline = HOSTILE_DEADLINE_SECONDS
    steps = ("initialize", "call") if quick else ("initialize", "list", "call")
    report.heading(f"Hosted. Hostile endpoints: each exchange against its {deadline:g} s deadline")
    found: dict[str, tuple[str, float]] = {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        server = HostileServer(Path(tmp)).start()
        try:
            settings = EgressSettings.from_env({**server.settings_env(), "SKILLS_LOCAL": "1",
                                                "SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS": str(deadline)})
            go: Future[bool] = Future()
            go.set_result(True)
            for behaviour in BEHAVIOURS:
                for step in steps:
                    url = server.url(behaviour, step)
                    sent = threading.Event()
                    started = time.perf_counter()
                    try:
                        if step == "list":
                            mcp_session.list_tools(url, None, settings)
                        else:
                            mcp_session.call_tool(url, None, settings, "echo", {"text": "x"}, ready=go, sent=sent)
                        reason = "answered"
                    except EgressError as error:
                        reason = error.reason
                    elapsed = time.perf_counter() - started
                    found[f"{behaviour}/{step}"] = (reason, elapsed)
                    rows.append((behaviour, step, reason, f"{elapsed:.2f}", f"{elapsed - deadline:+.2f}",
                                 "-" if step == "list" else ("yes" if sent.is_set() else "no")))
        finally:
            server.stop()
    report.table(["behaviour", "misbehaves at", "outcome", "seconds", "vs deadline", "tools/call sent"], rows)
    worst = max(seconds for _, seconds in found.values())
    met = worst <= deadline + HOSTILE_SLACK_SECONDS and all(r != "answered" for r, _ in found.values())
    verdict = report.verdict(SECTION, "hostile endpoint: slowest answer (s)", f"{worst:.2f}",
                             f"<= {deadline + HOSTILE_SLACK_SECONDS:g}", met)
    report.line(f"  slowest answer to a hostile endpoint: {worst:.2f} s for a {deadline:g} s deadline: {verdict} "
                "(timeout: 504 upstream_timeout; too_large: 502 upstream_error)")
    return found


class _ServerProcess:
    """tests/hosted_server.py's server in a process of its own (`python -m tests.hosted_server DIR`): an endpoint
    in the bench's own process would share its GIL, and its work would slow the proxy's threads (the claim runs
    beside the session's opening) as no remote endpoint does. Stopped by closing its standard input."""

    def __init__(self, directory: Path) -> None:
        import subprocess
        import sys

        from tests import hosted_server

        self._module = hosted_server
        self.ca_file = directory / "ca.pem"
        self.process = subprocess.Popen([sys.executable, "-m", "tests.hosted_server", str(directory)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        cwd=ROOT)
        assert self.process.stdout is not None
        self.address = self.process.stdout.readline().strip()
        if not self.address:
            self.stop()
            raise RuntimeError("the test MCP server's process did not start")

    def url(self) -> str:
        return str(self._module.url())

    def settings_env(self) -> dict[str, str]:
        return dict(self._module.settings_env(self.address, self.ca_file))

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(15)
        except Exception:  # noqa: BLE001  (a server that does not stop is killed)
            self.process.kill()


def _post(base: str, token: str, path: str, body: Any) -> tuple[int, Any]:
    import json
    import urllib.request
    from urllib.error import HTTPError

    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the local stack
            return response.status, json.loads(response.read() or b"null")
    except HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _request(base: str, token: str, method: str, path: str, body: Any) -> Any:
    import json
    import urllib.request

    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method=method,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the local stack
        return json.loads(response.read() or b"null")


def _gateway_setup(base: str, token: str, url: str) -> str:
    """The gateway user's grant (PATCH /rpc/skills/permissions) and endpoint, with `add` needing no approval."""
    _request(base, token, "PATCH", "/rpc/skills/permissions", {
        "skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke", "scope": {"type": "user"},
        "granted": True})
    endpoint = _request(base, token, "POST", "/rpc/hosted-endpoints",
                        {"name": "bench_flow", "displayName": "Bench", "url": url, "authToken": "bench-token"})
    _request(base, token, "PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}",
             {"expectedVersion": endpoint["version"], "tools": [{"name": "add", "requiresApproval": False}]})
    return str(endpoint["endpointId"])
