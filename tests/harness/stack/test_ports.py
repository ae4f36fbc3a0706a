"""Ports of the local stack: a restart right after Ctrl-C finds its ports free although the previous run's
connections linger in TIME_WAIT, and a port that is really taken is named with the setting that moves it."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillcore_local.ddb_local import DynamoDBLocal, client
from skillcore_local.gateway import Gateway
from skillcore_local.invoke import FunctionRegistry
from skillcore_local.ports import PortInUse, free_port, port_is_free
from skillcore_local.stack import LocalStack
from skillcore_local.template import ROOT

pytestmark = pytest.mark.stack

TIME_WAIT = "06"  # the state column of /proc/net/tcp


def _lingering(port: int) -> set[str]:
    """The TCP states of sockets whose local port is `port` (IPv4 and IPv6 tables)."""
    states: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    states.add(fields[3])
    return states


def _plain_bind_fails(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers set it: Jetty, http.server
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    try:
        yield sock
    finally:
        sock.close()


def test_a_port_left_in_time_wait_is_free(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    peer = socket.create_connection(("127.0.0.1", port))
    accepted, _ = listener.accept()
    accepted.close()  # the server side closes first, as a stopped server does: its end goes to TIME_WAIT
    peer.recv(1)
    peer.close()
    listener.close()
    deadline = time.monotonic() + 5
    while TIME_WAIT not in _lingering(port) and time.monotonic() < deadline:
        time.sleep(0.01)

    assert TIME_WAIT in _lingering(port)
    assert _plain_bind_fails(port)  # what the old probe saw for about a minute
    assert port_is_free(port)


def test_a_listening_port_is_taken(listener: socket.socket) -> None:
    assert not port_is_free(listener.getsockname()[1])
    assert port_is_free(free_port())


def test_the_gateway_binds_again_at_once_after_serving_connections() -> None:
    first = Gateway(FunctionRegistry(), port=0, access_log=False).start()
    port = first.port
    for _ in range(3):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/nowhere")
        connection.getresponse().read()
        connection.close()
    first.stop()
    second = Gateway(FunctionRegistry(), port=port, access_log=False).start()
    try:
        assert second.port == port
    finally:
        second.stop()


def test_dynamodb_local_restarts_on_its_port_right_after_stopping() -> None:
    with DynamoDBLocal(port=0, data_dir=None) as first:
        port = first.port
        ddb = client(first.endpoint)
        for _ in range(3):
            ddb.list_tables()
    assert _lingering(port), "the stopped server left no connection behind: the test proves nothing"
    with DynamoDBLocal(port=port, data_dir=None) as second:
        assert second.port == port
        assert client(second.endpoint).list_tables()["TableNames"] == []


def test_a_taken_dynamodb_port_says_which_setting_moves_it(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    with pytest.raises(PortInUse) as raised:
        DynamoDBLocal(port=port, data_dir=None).start()
    message = str(raised.value)
    assert f"port {port}" in message
    assert f"SKILLS_LOCAL_DDB_PORT={port + 100} make dev" in message
    assert "Errno" not in message


def test_a_taken_api_port_fails_before_dynamodb_local_starts(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    stack = LocalStack(port=port, ddb_port=0, data_dir=None, scan_interval=0)
    started = time.monotonic()
    with pytest.raises(PortInUse) as raised:
        stack.start()
    assert time.monotonic() - started < 1.0  # DynamoDB Local takes seconds to boot: it never started
    assert stack.ddb is None and stack.gateway is None
    assert raised.value.variable == "SKILLS_LOCAL_PORT"
    assert f"port {port} (the local API, set by SKILLS_LOCAL_PORT)" in str(raised.value)


def test_make_dev_on_a_taken_api_port_prints_the_port_and_the_fix(
    listener: socket.socket, tmp_path: Path
) -> None:
    port = listener.getsockname()[1]
    env = {
        **os.environ,
        "SKILLS_LOCAL_PORT": str(port),
        "SKILLS_LOCAL_DDB_PORT": "0",
        "SKILLS_LOCAL_DATA_DIR": str(tmp_path),
        "SKILLS_LOCAL_SCAN_INTERVAL": "0",
    }
    result = subprocess.run(
        [sys.executable, "-m", "skillcore_local.stack"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert f"port {port} (the local API, set by SKILLS_LOCAL_PORT) is already in use" in result.stderr
    assert f"SKILLS_LOCAL_PORT={port + 100} make dev" in result.stderr
    assert "[Errno 98]" not in result.stderr
