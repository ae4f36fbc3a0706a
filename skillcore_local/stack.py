"""The local stack (`make dev`): DynamoDB Local, the template's tables, the gateway, and the scan schedule.

`python -m skillcore_local.stack` reads its settings from the environment:
  SKILLS_LOCAL_PORT (3000), SKILLS_LOCAL_DDB_PORT (8000), SKILLS_LOCAL_DATA_DIR (.local),
  SKILLS_LOCAL_SCAN_INTERVAL (300 seconds, 0 = off), SKILLS_LOCAL_JWT_SECRET.
`LocalStack` is the same thing as an object, so tests can run one in-process (ports 0 = any free port,
data_dir None = in memory).
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from skillcore_local.ddb_local import DynamoDBLocal, client
from skillcore_local.gateway import Gateway
from skillcore_local.invoke import FunctionRegistry, ensure_layer_on_path, function_env
from skillcore_local.ports import PortInUse, is_address_in_use
from skillcore_local.responses import log_failure
from skillcore_local.template import ensure_tables


class ScanSchedule:
    """The stand-in for the EventBridge rule: one scan every `interval` seconds, on a background thread.

    Like a rate() rule, the first run comes one interval after start; runs never overlap.
    """

    def __init__(self, gateway: Gateway, interval: float) -> None:
        self.gateway = gateway
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="local-scan-schedule", daemon=True)

    def start(self) -> ScanSchedule:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            # A scan may run for minutes (its Lambda timeout is 240 s); Ctrl-C should not wait for it.
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            started = datetime.now(UTC)
            try:
                summary = self.gateway.run_scan(started)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as error:  # noqa: B036 - a failed scan (even an injected crash) must not end the schedule
                log_failure(f"the scheduled scan at {started:%H:%M:%SZ}", error)
            else:
                print(f"scheduled scan at {started:%H:%M:%SZ}: {summary}", file=sys.stderr, flush=True)


class LocalStack:
    """DynamoDB Local + tables + gateway (+ scan schedule), started and stopped as one.

    `ddb_endpoint` reuses a DynamoDB that is already running (tests share one per session) instead of
    starting one; `table_prefix` keeps several stacks' tables apart in one DynamoDB.
    The handlers read their settings from os.environ, so start() applies `env` to the process and stop()
    restores what was there; apply_env()/restore_env() let tests scope it more tightly.
    """

    def __init__(
        self,
        *,
        port: int = 3000,
        host: str = "127.0.0.1",
        ddb_port: int = 0,
        data_dir: Path | str | None = None,
        scan_interval: float = 300,
        jwt_secret: str | None = None,
        ddb_endpoint: str | None = None,
        table_prefix: str = "",
        access_log: bool = True,
        registry: FunctionRegistry | None = None,
    ) -> None:
        self.port = port
        self.host = host
        self.ddb_port = ddb_port
        self.data_dir = Path(data_dir).resolve() if data_dir is not None else None
        self.scan_interval = scan_interval
        self.jwt_secret = jwt_secret
        self.table_prefix = table_prefix
        self.access_log = access_log
        self.registry = registry or FunctionRegistry()
        self.env: dict[str, str] = {}
        self.tables: dict[str, str] = {}
        self.ddb: DynamoDBLocal | None = None
        self.gateway: Gateway | None = None
        self.schedule: ScanSchedule | None = None
        self._external_endpoint = ddb_endpoint
        self._saved_env: dict[str, str | None] | None = None
        self._stopped = threading.Event()

    # -- addresses
    @property
    def url(self) -> str:
        if self.gateway is None:
            raise RuntimeError("the local stack is not running")
        return self.gateway.url

    @property
    def ddb_endpoint(self) -> str:
        if self._external_endpoint:
            return self._external_endpoint
        if self.ddb is None:
            raise RuntimeError("the local stack is not running")
        return self.ddb.endpoint

    @property
    def ddb_data_dir(self) -> Path | None:
        return self.data_dir / "dynamodb" if self.data_dir is not None else None

    # -- lifecycle
    def start(self) -> LocalStack:
        self._stopped.clear()
        try:
            # Bound first: a taken API port fails at once, before DynamoDB Local spends seconds booting.
            self.gateway = self._bind_gateway()
            if not self._external_endpoint:
                self.ddb = DynamoDBLocal(port=self.ddb_port, data_dir=self.ddb_data_dir).start()
            self.tables = ensure_tables(client(self.ddb_endpoint), prefix=self.table_prefix)
            self.env = function_env(self.tables, self.ddb_endpoint)
            # Where the local key of hosted endpoint secrets lives (hosted/secrets.py): the data directory, or a
            # directory of this run's own when the data is in memory.
            self.env["SKILLS_LOCAL_DATA_DIR"] = str(self.data_dir or Path(tempfile.mkdtemp(prefix="skillcore-keys-")))
            # The catalog's package bytes: the local adapter of S3 (skillcore/packages/blobs.py), a directory.
            self.env["SKILLS_LOCAL_PACKAGE_DIR"] = str(Path(self.env["SKILLS_LOCAL_DATA_DIR"]) / "packages")
            self.apply_env()
            ensure_layer_on_path()
            self.gateway.start()
            if self.scan_interval > 0:
                self.schedule = ScanSchedule(self.gateway, self.scan_interval).start()
        except BaseException:
            self.stop()
            raise
        return self

    def _bind_gateway(self) -> Gateway:
        try:
            return Gateway(
                self.registry,
                host=self.host,
                port=self.port,
                jwt_secret=self.jwt_secret,
                access_log=self.access_log,
            )
        except OSError as error:
            # Alone, "[Errno 98] Address already in use" names neither the port nor the setting to change.
            if is_address_in_use(error):
                raise PortInUse(self.port, "SKILLS_LOCAL_PORT", "the local API") from error
            raise

    def stop(self) -> None:
        """Schedule, then gateway (in-flight requests finish), then DynamoDB; safe to call more than once."""
        if self.schedule is not None:
            self.schedule.stop()
            self.schedule = None
        if self.gateway is not None:
            self.gateway.stop()
            self.gateway = None
        if self.ddb is not None:
            self.ddb.stop()
            self.ddb = None
        self.restore_env()
        self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Blocks until stop(); wakes every second so signal handlers run promptly in the main thread."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stopped.wait(
            1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
        ):
            if deadline is not None and time.monotonic() >= deadline:
                return False
        return True

    def apply_env(self) -> None:
        if self._saved_env is None:
            self._saved_env = {name: os.environ.get(name) for name in self.env}
        os.environ.update(self.env)

    def restore_env(self) -> None:
        saved, self._saved_env = self._saved_env, None
        for name, value in (saved or {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the banner
    def banner(self) -> str:
        ddb = self.ddb
        if ddb is not None and ddb.pid is not None:
            storage = f"data in {self.ddb_data_dir}" if self.ddb_data_dir else "in memory"
            ddb_line = f"{self.ddb_endpoint}  (DynamoDB Local, pid {ddb.pid}, {storage})"
        elif ddb is not None:
            ddb_line = f"{self.ddb_endpoint}  (moto fallback: IN MEMORY ONLY)"
        else:
            ddb_line = f"{self.ddb_endpoint}  (external)"
        scan = (
            f"every {self.scan_interval:g} s"
            if self.scan_interval > 0
            else "off (SKILLS_LOCAL_SCAN_INTERVAL=0)"
        )
        return "\n".join(
            [
                "",
                "skillcore local stack",
                f"  page      {self.url}/skills/    (the Skills page: sign in with any user name)",
                f"  docs      {self.url}/docs    (the API viewer; the document: {self.url}/rpc/openapi.json)",
                f"  API       {self.url}    (GET {self.url}/rpc/health needs no token)",
                "  token     make token USER=alice [ADMIN=1]",
                f'            curl -H "Authorization: Bearer $(make -s token USER=alice)" {self.url}/rpc/...',
                f"  DynamoDB  {ddb_line}",
                f"  scan      {scan}; POST {self.url}/_local/scan runs one now",
                f"  faults    POST {self.url}/_local/faults"
                + ' {"point": ..., "times": 1, "kind": "transient"}',
                f"  model     {self.env.get('SKILLS_MODEL', '?')}",
                "  Ctrl-C stops everything (DynamoDB Local included).",
                "",
            ]
        )


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a number, got {raw!r}") from None


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)  # unwinds through main()'s finally, which stops everything


def main(extra_banner: Callable[[LocalStack], list[str]] | None = None) -> int:
    """`extra_banner` adds lines after the banner (`make demo`'s test MCP server: skillcore_local/demo.py)."""
    signal.signal(signal.SIGTERM, _terminate)
    stack = LocalStack(
        port=int(_env_number("SKILLS_LOCAL_PORT", 3000)),
        ddb_port=int(_env_number("SKILLS_LOCAL_DDB_PORT", 8000)),
        data_dir=os.environ.get("SKILLS_LOCAL_DATA_DIR") or ".local",
        scan_interval=_env_number("SKILLS_LOCAL_SCAN_INTERVAL", 300),
        jwt_secret=os.environ.get("SKILLS_LOCAL_JWT_SECRET") or None,
    )
    try:
        stack.start()
        print(stack.banner() + "".join(line + "\n" for line in (extra_banner(stack) if extra_banner else [])),
              flush=True)
        stack.wait()
    except KeyboardInterrupt:
        pass
    except Exception as error:
        print(f"the local stack failed: {error}", file=sys.stderr)
        return 1
    finally:
        stack.stop()
        print("local stack stopped", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
