"""Section 3: chat-turn latency over real HTTP on a LocalStack (gateway + JWT check + ChatTurnFunction in
process, DynamoDB Local, offline model).

One user, one agent; plain turns with distinct clientMessageIds on one keep-alive connection, after a
warm-up. Each turn is also split into the handler's own time (the handler is wrapped) and the time spent
in DynamoDB calls (botocore events on the handler's client), so the rest is the gateway and HTTP.
"""

from __future__ import annotations

import http.client
import json
import sys
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scripts.bench_common import Report, RequestCounter, SharedDynamo, env_scope, percentile

SECTION = "latency"
SECRET = "bench-secret-of-at-least-thirty-two-bytes"
USER = "bench-latency-user"


class Http:
    """HTTP/1.1 to the gateway: one kept-alive connection, or (keep_alive=False) a new one per request."""

    def __init__(self, url: str, token: str, *, keep_alive: bool = True):
        target = urlsplit(url)
        self.host, self.port = target.hostname or "127.0.0.1", target.port
        self.token = token
        self.keep_alive = keep_alive
        self.connection: http.client.HTTPConnection | None = None

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        if not self.keep_alive:
            headers["Connection"] = "close"
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.connection.request(method, path, body=payload, headers=headers)
                response = self.connection.getresponse()
                raw = response.read()
                if not self.keep_alive or response.getheader("Connection", "").lower() == "close":
                    self.close()
                return response.status, (json.loads(raw) if raw else None)
            except (http.client.HTTPException, ConnectionError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


@dataclass
class Turn:
    total: float
    handler: float
    ddb: float
    requests: int


def _stats(values: list[float]) -> tuple[str, ...]:
    return tuple(f"{v * 1000:.1f}" for v in (
        percentile(values, 50), percentile(values, 95), percentile(values, 99), max(values), sum(values) / len(values),
    ))


def _rows(label: str, turns: list[Turn]) -> list[tuple[str, ...]]:
    return [
        (f"{label}: HTTP round trip", *_stats([t.total for t in turns])),
        ("  handler (in-process)", *_stats([t.handler for t in turns])),
        ("    DynamoDB calls", *_stats([t.ddb for t in turns])),
        ("    handler outside DynamoDB", *_stats([t.handler - t.ddb for t in turns])),
        ("  gateway + HTTP + JWT check", *_stats([t.total - t.handler for t in turns])),
    ]


def run(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    from skillcore_local import http_server
    from skillcore_local.jwt_local import issue_token
    from skillcore_local.stack import LocalStack

    turns = 50 if quick else 200
    warmup = 10 if quick else 20
    fresh_turns = 25 if quick else 100
    diagnostic = 20 if quick else 50
    report.heading(f"3. Chat-turn latency over HTTP on a LocalStack: {turns} plain turns after {warmup} warm-up turns")
    endpoint = dynamo.endpoint
    results: dict[str, list[Turn]] = {}
    # The handlers' INFO lines would go to this report's stdout; WARNING keeps them quiet.
    with env_scope({"POWERTOOLS_LOG_LEVEL": "WARNING", "SKILLS_MODEL": "offline"}):
        local = LocalStack(port=0, ddb_endpoint=endpoint, table_prefix="lat-", scan_interval=0, jwt_secret=SECRET,
                           access_log=False)
        try:
            local.start()
            token = issue_token(USER, secret=SECRET)
            kept, fresh = Http(local.url, token), Http(local.url, token, keep_alive=False)
            status, agent = kept.call("POST", "/rpc/agents", {"name": "Mika", "persona": "A calm, curious friend."})
            if status != 201:
                raise RuntimeError(f"POST /rpc/agents answered {status}: {agent}")
            path = f"/rpc/conversations/{agent['defaultConversationId']}/messages"

            def turn(client: Http, cid: str, text: str) -> float:
                started = time.perf_counter()
                status, body = client.call("POST", path, {"clientMessageId": cid, "text": text})
                elapsed = time.perf_counter() - started
                if status != 200 or body.get("run", {}).get("kind") != "plain":
                    raise RuntimeError(f"turn {cid} answered {status}: {json.dumps(body)[:300]}")
                return elapsed

            first = turn(kept, "warm-0", "Hello! How are you today?")  # loads ChatTurnFunction's app.py
            for i in range(1, warmup):
                turn(kept if i % 2 else fresh, f"warm-{i}", f"Hello again, message {i}")

            registry = local.registry
            real = registry.handler("ChatTurnFunction")
            module = sys.modules["skillcore_local_fn_ChatTurnFunction"]
            counter = RequestCounter()
            counter.attach(module.db.client)
            handler_seconds: list[float] = []

            def timed(event: dict[str, Any], context: Any) -> Any:
                started = time.perf_counter()
                try:
                    return real(event, context)
                finally:
                    handler_seconds.append(time.perf_counter() - started)

            def measured(client: Http, cid: str, text: str) -> Turn:
                before_seconds, before_calls = counter.seconds, counter.total
                total = turn(client, cid, text)
                return Turn(total, handler_seconds[-1], counter.seconds - before_seconds, counter.total - before_calls)

            with registry.override("ChatTurnFunction", timed):
                # Back-to-back turns on one kept-alive connection (how a client library talks to an API).
                results["keep-alive"] = [measured(kept, f"lat-k-{i}", f"Tell me something nice, #{i}")
                                         for i in range(turns)]
                results["new connection per turn"] = [measured(fresh, f"lat-n-{i}", f"Tell me something nice, #{i}")
                                                      for i in range(fresh_turns)]
                # Diagnostic: the same keep-alive turns with Nagle's algorithm off on the gateway's sockets
                # (a class attribute of socketserver's StreamRequestHandler, set here in this process only).
                handler_class = http_server.RequestHandler
                saved = handler_class.__dict__.get("disable_nagle_algorithm")
                handler_class.disable_nagle_algorithm = True
                try:
                    nodelay = Http(local.url, token)
                    results["keep-alive, gateway TCP_NODELAY (diagnostic)"] = [
                        measured(nodelay, f"lat-d-{i}", f"Tell me something nice, #{i}") for i in range(diagnostic)
                    ]
                    nodelay.close()
                finally:
                    if saved is None:
                        del handler_class.disable_nagle_algorithm
                    else:
                        handler_class.disable_nagle_algorithm = saved
            kept.close()
        finally:
            local.stop()

    requests = [t.requests for ts in results.values() for t in ts]
    report.line(f"  first turn after the stack started (loads app.py in this process; layer modules an earlier"
                f" section imported are not loaded again): {first * 1000:.0f} ms")
    report.line(f"  DynamoDB requests per turn: {min(requests)}-{max(requests)}; botocore retries: {counter.retries}")
    rows: list[tuple[str, ...]] = []
    for name, measured_turns in results.items():
        rows += _rows(f"{name} ({len(measured_turns)})", measured_turns)
    report.table(["per turn (ms)", "p50", "p95", "p99", "max", "mean"], rows)
    total_turns = sum(len(ts) for ts in results.values())
    ops = {name: n / total_turns for name, n in counter.operations.items()}
    report.line("  DynamoDB calls per turn: " + ", ".join(f"{k} {v:.1f}" for k, v in ops.items()))
    keep = [t.total for t in results["keep-alive"]]
    report.line(f"  chat turn over HTTP (keep-alive, {len(keep)} turns): p50 {percentile(keep, 50) * 1000:.1f} ms,"
                f" p95 {percentile(keep, 95) * 1000:.1f} ms")
    overhead = {name: percentile([t.total - t.handler for t in ts], 50) * 1000 for name, ts in results.items()}
    report.line("  gateway share of a turn, p50: " + ", ".join(f"{name} {v:.1f} ms" for name, v in overhead.items()))
