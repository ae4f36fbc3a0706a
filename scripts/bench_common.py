"""Shared pieces of `python -m scripts.bench`: report printing, statistics, DynamoDB request counting, and
one DynamoDB Local (in memory) shared by the sections that need it, with a fresh set of tables per use."""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LAYER_DIR = ROOT / "layers" / "skillcore"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"

# ---------------------------------------------------------------------------------------------- report


@dataclass
class Verdict:
    section: str
    name: str
    value: str
    target: str
    met: bool


@dataclass
class Report:
    verdicts: list[Verdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def heading(self, title: str) -> None:
        print()
        print(title)
        print("=" * len(title), flush=True)

    def line(self, text: str = "") -> None:
        print(text, flush=True)

    def table(
        self, header: Sequence[str], rows: Sequence[Sequence[Any]], *, align: str | None = None, wrap: int = 0
    ) -> None:
        """Prints rows under a header; `align` is one character per column, "l" or "r" (default: l then r).
        With `wrap`, the last column is folded at ", " to at most `wrap` characters a line."""
        body = [[str(c) for c in row] for row in rows]
        cells = [[str(c) for c in header]] + body
        folded: list[list[str]] = []
        for row in cells:
            last = row[-1]
            if wrap and len(last) > wrap:
                parts, current = [], ""
                for piece in last.split(", "):
                    candidate = f"{current}, {piece}" if current else piece
                    if current and len(candidate) > wrap:
                        parts.append(current + ",")
                        current = piece
                    else:
                        current = candidate
                parts.append(current)
            else:
                parts = [last]
            folded.append(row[:-1] + [parts[0]])
            folded += [[""] * (len(row) - 1) + [p] for p in parts[1:]]
        widths = [max(len(row[i]) for row in folded) for i in range(len(header))]
        align = align or ("l" + "r" * (len(header) - 1))

        def fmt(row: list[str]) -> str:
            return "  ".join(
                (c.ljust(w) if a == "l" else c.rjust(w)) for c, w, a in zip(row, widths, align, strict=True)
            ).rstrip()

        print("  " + fmt(folded[0]))
        print("  " + "  ".join("-" * w for w in widths))
        for row in folded[1:]:
            print("  " + fmt(row))
        sys.stdout.flush()

    def pairs(self, rows: Sequence[tuple[str, str]]) -> None:
        width = max(len(name) for name, _ in rows)
        for name, value in rows:
            print(f"  {name.ljust(width)}  {value}")
        sys.stdout.flush()

    def verdict(self, section: str, name: str, value: str, target: str, met: bool) -> str:
        self.verdicts.append(Verdict(section, name, value, target, met))
        return "target met" if met else "TARGET MISSED"

    def summary(self) -> None:
        self.heading("Targets")
        if not self.verdicts:
            self.line("  (no targets were evaluated)")
            return
        self.table(
            ["section", "measure", "value", "target", "result"],
            [(v.section, v.name, v.value, v.target, "met" if v.met else "MISSED") for v in self.verdicts],
            align="lllll",
        )
        missed = sum(1 for v in self.verdicts if not v.met)
        self.line(f"  {len(self.verdicts) - missed} met, {missed} missed")


# ---------------------------------------------------------------------------------------------- statistics


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.4999)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


# ---------------------------------------------------------------------------------------------- request counting


class RequestCounter:
    """Counts DynamoDB API calls (botocore `before-call`) per operation, and their wall time (`after-call`).

    Attach it to every client whose calls should count; it is thread-safe. `mark()`/`since()` give the
    calls made between two points, for per-request attribution.
    """

    def __init__(self, *, delay_seconds: float = 0.0) -> None:
        self.delay_seconds = delay_seconds  # each HTTP attempt waits this long first (a stand-in for distance)
        self._lock = threading.Lock()
        self._local = threading.local()
        self.operations: Counter[str] = Counter()
        self.seconds = 0.0
        self.main_thread_seconds = 0.0  # the part made on the main thread: what a caller there waited for
        self.attempts = 0
        self._log: list[str] = []

    def _hooks(self) -> list[tuple[str, Any, str]]:
        return [
            ("before-parameter-build.dynamodb", self._params, f"bench-params-{id(self)}"),
            ("before-call.dynamodb", self._before, f"bench-before-{id(self)}"),
            ("after-call.dynamodb", self._after, f"bench-after-{id(self)}"),
            ("before-send.dynamodb", self._send, f"bench-send-{id(self)}"),
        ]

    def attach(self, client: Any) -> Any:
        for event, handler, unique_id in self._hooks():
            client.meta.events.register(event, handler, unique_id=unique_id)
        return client

    @contextlib.contextmanager
    def every_new_client(self) -> Iterator[None]:
        """Counts the calls of every client created inside the block through boto3's default session
        (a client copies its session's event hooks when it is created)."""
        import boto3

        if boto3.DEFAULT_SESSION is None:
            boto3.setup_default_session()
        session = boto3.DEFAULT_SESSION
        assert session is not None
        for event, handler, unique_id in self._hooks():
            session.events.register(event, handler, unique_id=unique_id)
        try:
            yield
        finally:
            for event, handler, unique_id in self._hooks():
                session.events.unregister(event, handler, unique_id=unique_id)

    def _params(self, params: Any = None, **_: Any) -> None:
        self._local.detail = _detail(params or {})

    def _before(self, event_name: str = "", **_: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        detail, self._local.detail = getattr(self._local, "detail", ""), ""
        self._local.started = time.perf_counter()
        with self._lock:
            self.operations[operation] += 1
            self._log.append(f"{operation}({detail})" if detail else operation)

    def _after(self, **_: Any) -> None:
        started = getattr(self._local, "started", None)
        if started is not None:
            elapsed = time.perf_counter() - started
            self._local.started = None
            with self._lock:
                self.seconds += elapsed
                if threading.current_thread() is threading.main_thread():
                    self.main_thread_seconds += elapsed

    def _send(self, **_: Any) -> None:
        # One per HTTP attempt; attempts beyond the calls are botocore's retries.
        with self._lock:
            self.attempts += 1
        if self.delay_seconds:
            time.sleep(self.delay_seconds)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.operations.values())

    @property
    def retries(self) -> int:
        with self._lock:
            return max(0, self.attempts - sum(self.operations.values()))

    def mark(self) -> int:
        with self._lock:
            return len(self._log)

    def since(self, mark: int) -> list[str]:
        with self._lock:
            return list(self._log[mark:])

    def reset(self) -> None:
        with self._lock:
            self.operations.clear()
            self.seconds = 0.0
            self.main_thread_seconds = 0.0
            self.attempts = 0
            self._log.clear()


def table_label(name: str) -> str:
    """"req1-MessagesTable" -> "Messages" (the run's prefix and the Table suffix are noise in a report)."""
    base = name.split("-", 1)[1] if "-" in name else name
    return base[:-5] if base.endswith("Table") and len(base) > 5 else base


def _detail(params: Mapping[str, Any]) -> str:
    if "TableName" in params:
        label = table_label(str(params["TableName"]))
        return f"{label}/{params['IndexName']}" if params.get("IndexName") else label
    if "RequestItems" in params:
        return "+".join(table_label(str(t)) for t in params["RequestItems"])
    if "TransactItems" in params:
        return f"{len(params['TransactItems'])} items"
    return ""


def plain_operations(ops: Sequence[str]) -> list[str]:
    return [op.split("(", 1)[0] for op in ops]


def describe_operations(ops: Sequence[str]) -> str:
    """"Query x2, TransactWriteItems" in call order of first appearance."""
    counts = Counter(ops)
    return ", ".join(f"{name} x{n}" if n > 1 else name for name, n in counts.items()) or "-"


# ---------------------------------------------------------------------------------------------- environment


@contextlib.contextmanager
def env_scope(env: Mapping[str, str]) -> Iterator[None]:
    """Applies `env` to os.environ (handlers read it at import) and restores the previous values after."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def ensure_import_paths() -> None:
    for path in (str(LAYER_DIR), str(ROOT)):
        if path not in sys.path:
            sys.path.insert(0, path)


def dynamodb_local_version() -> str:
    """The version DynamoDB Local's README announces for the jar the stack uses (no JVM start needed)."""
    from skillcore_local.ddb_local import find_jar

    jar = find_jar()
    if jar is None:
        return "not installed (run `make node`)"
    readme = jar.parent / "README.txt"
    with contextlib.suppress(OSError):
        found = re.search(r"^\s*(\d{4}-\d{2}-\d{2})\s*\(([^)]+)\)", readme.read_text(encoding="utf-8"), re.M)
        if found:
            return f"{found.group(2)} ({found.group(1)}, {jar.parent.name})"
    return jar.parent.name


# ---------------------------------------------------------------------------------------------- DynamoDB Local


# Rounds of six requests (put, get, batch get, update, transaction, query) before any section measures.
WARM_UP_ROUNDS = 700


def client_for(endpoint: str) -> Any:
    from skillcore_local.ddb_local import client

    return client(endpoint)


class SharedDynamo:
    """One DynamoDB Local (in memory) for the whole run, started on first use and always stopped by close()."""

    def __init__(self) -> None:
        self.server: Any = None
        self._tables_made = 0
        self.kind = "none"

    @property
    def endpoint(self) -> str:
        if self.server is None:
            from skillcore_local.ddb_local import DynamoDBLocal

            started = time.perf_counter()
            self.server = DynamoDBLocal(port=0, data_dir=None).start()
            self.kind = (
                f"DynamoDB Local, pid {self.server.pid}, in memory" if self.server.pid else "moto server fallback (no java)"
            )
            print(f"  [{self.kind} at {self.server.endpoint}, up in {time.perf_counter() - started:.1f} s]", flush=True)
            if self.server.pid:
                self._warm(client_for(self.server.endpoint))
        return str(self.server.endpoint)

    @staticmethod
    def _warm(client: Any) -> None:
        """Requests of every kind the sections make, until the JVM has compiled DynamoDB Local's hot paths.

        Fresh, it answers a GetItem in about 4 ms and a two-item TransactWriteItems in about 9 ms; after a few
        thousand requests, in 2.2 and 4.8 ms on the same machine. The real service has no such warm-up, so a
        section measured on a cold JVM would mostly measure the emulator's compiler."""
        table = "bench-warm-up"
        client.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}])

        def key(n: int) -> dict[str, Any]:
            return {"pk": {"S": "warm"}, "sk": {"S": f"{n:06d}"}}

        add_one = {"UpdateExpression": "SET v = v + :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}

        def one(n: int) -> None:
            client.put_item(TableName=table, Item={**key(n), "v": {"N": str(n)}},
                            ConditionExpression="attribute_not_exists(pk)")
            client.get_item(TableName=table, Key=key(n))
            client.batch_get_item(RequestItems={table: {"Keys": [key(m) for m in range(max(0, n - 3), n + 1)]}})
            client.update_item(TableName=table, Key=key(n), **add_one)
            client.transact_write_items(TransactItems=[
                {"Put": {"TableName": table, "Item": {**key(n + 500_000), "v": {"N": str(n + 500_000)}},
                         "ConditionExpression": "attribute_not_exists(pk)"}},
                {"Update": {"TableName": table, "Key": key(n), **add_one}},
            ])
            client.query(TableName=table, KeyConditionExpression="pk = :p", Limit=5,
                         ExpressionAttributeValues={":p": {"S": "warm"}})

        def get_p50() -> float:
            spent = []
            for _ in range(40):
                begun = time.perf_counter()
                client.get_item(TableName=table, Key=key(0))
                spent.append(time.perf_counter() - begun)
            return statistics.median(spent) * 1000

        begun = time.perf_counter()
        one(0)
        before = get_p50()
        for n in range(1, WARM_UP_ROUNDS):
            one(n)
        after = get_p50()
        client.delete_table(TableName=table)
        print(f"  [JVM warmed: {WARM_UP_ROUNDS * 6:,} requests in {time.perf_counter() - begun:.1f} s; "
              f"GetItem p50 {before:.1f} -> {after:.1f} ms]", flush=True)

    def client(self) -> Any:
        return client_for(self.endpoint)

    def fresh_tables(self, label: str) -> dict[str, str]:
        """The template's tables under a new prefix: SKILLS_TABLE_* -> physical name."""
        from skillcore_local.template import ensure_tables

        self._tables_made += 1
        return ensure_tables(self.client(), prefix=f"{label}{self._tables_made}-")

    def function_env(self, tables: Mapping[str, str]) -> dict[str, str]:
        from skillcore_local.invoke import function_env

        env = function_env(tables, self.endpoint)
        env["POWERTOOLS_LOG_LEVEL"] = "WARNING"  # the handlers' INFO lines would drown the report
        return env

    def close(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.stop()
