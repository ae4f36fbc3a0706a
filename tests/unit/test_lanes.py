"""The lanes of tests/conftest.py: a test is marked by the directory it stands in, and a unit-lane test that
opens a connection or starts a process fails."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TESTS, lane_markers


@pytest.mark.parametrize(("path", "markers"), [
    ("unit/test_x.py", ("unit",)),
    ("evals/test_x.py", ("unit",)),
    ("integration/test_x.py", ("integration",)),
    ("stack/test_x.py", ("stack",)),
    ("browser/test_x.py", ("browser",)),
    ("harness/unit/test_x.py", ("harness", "unit")),
    ("harness/integration/test_x.py", ("harness", "integration")),
    ("harness/stack/test_x.py", ("harness", "stack")),
    ("harness/test_x.py", ()),
    ("elsewhere/test_x.py", ()),
    ("test_x.py", ()),
])
def test_the_lane_is_the_directory(path: str, markers: tuple[str, ...]) -> None:
    assert lane_markers(TESTS / Path(path)) == markers


def test_this_test_is_in_the_unit_lane(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("unit") is not None
    assert request.node.get_closest_marker("stack") is None


def test_a_connection_fails_the_test() -> None:
    with pytest.raises(pytest.fail.Exception, match="connected a socket"):
        socket.create_connection(("127.0.0.1", 9), timeout=0.1)
    with socket.socket() as sock, pytest.raises(pytest.fail.Exception):
        sock.connect(("127.0.0.1", 9))
    with socket.socket() as sock, pytest.raises(pytest.fail.Exception):
        sock.connect_ex(("127.0.0.1", 9))


def test_an_asyncio_connection_fails_too() -> None:
    async def connect() -> None:
        await asyncio.open_connection("127.0.0.1", 9)

    with pytest.raises(pytest.fail.Exception):
        asyncio.run(connect())


def test_a_process_fails_the_test() -> None:
    with pytest.raises(pytest.fail.Exception, match="started a process"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_what_needs_no_connection_still_works() -> None:
    left, right = socket.socketpair()  # asyncio's own loop makes one: no connect
    with left, right:
        left.sendall(b"x")
        assert right.recv(1) == b"x"
