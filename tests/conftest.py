"""Shared by every lane.

The lanes are directories, and a test is marked by where it stands (`pytest_collection_modifyitems` below):
- `tests/unit` (and `tests/evals`): pure, marker `unit`. No sockets, no subprocess, no moto, no DynamoDB Local;
  a connection or a process started there fails the test (`_pure_unit_lane`). Store fakes: tests/fakes.py.
- `tests/integration`: the handlers and services on moto (in process), a real server on loopback, or a process
  of its own (a fresh interpreter, node), marker `integration`.
- `tests/stack`: DynamoDB Local and the local gateway over real HTTP, marker `stack`.
- `tests/browser`: the Skills page in Chromium against the local stack, marker `browser`.
- `tests/harness/<lane>`: tests of the harness itself (the local stack, the scripts, the template), marker
  `harness` plus the lane of its subdirectory (`unit`, `integration` or `stack`), with that lane's rules.
The Makefile's targets run the directories (`make test-fast`, `test-integration`, `test-stack`, `test-browser`,
`test-harness`; `make test` runs them all). The local stack's fixtures (tests/local_stack.py) are a plugin here,
requested only by the tests that use them.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ("tests.local_stack",)

TESTS = Path(__file__).resolve().parent
LANES = ("unit", "integration", "stack", "browser")
# Directories whose tests belong to a lane other than their name.
LANE_OF = {"evals": "unit"}


def lane_markers(path: Path) -> tuple[str, ...]:
    """The markers of a test file under tests/, from its directory: ("unit",), ("harness", "stack"), ..."""
    parts = path.resolve().relative_to(TESTS).parts[:-1]
    top = LANE_OF.get(parts[0], parts[0]) if parts else ""
    if top == "harness":
        sub = parts[1] if len(parts) > 1 else ""
        return ("harness", sub) if sub in LANES else ()
    return (top,) if top in LANES else ()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    outside = []
    for item in items:
        path = Path(str(item.path))
        if not path.resolve().is_relative_to(TESTS):
            continue
        markers = lane_markers(path)
        if not markers:
            outside.append(item.nodeid)
        for name in markers:
            item.add_marker(name)
    if outside:
        raise pytest.UsageError(
            "tests outside every lane (put them under tests/unit, integration, stack, browser or "
            f"harness/<lane>; see tests/conftest.py): {sorted({n.split('::')[0] for n in outside})}"
        )


@pytest.fixture(autouse=True)
def _pure_unit_lane(request: pytest.FixtureRequest) -> Iterator[None]:
    """A unit-lane test that connects a socket or starts a process fails, whatever the library on the way
    (botocore, httpx, the MCP SDK, asyncio): pytest's own failure, which no `except Exception` in the code under
    test can swallow."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return

    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            pytest.fail(
                f"{request.node.nodeid} {what}; the unit lane is pure: use a fake (tests/fakes.py) or a stub, "
                "or move the test to tests/integration or tests/stack"
            )

        return refused

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse("connected a socket"))
        patch.setattr(socket.socket, "connect_ex", refuse("connected a socket"))
        patch.setattr(socket, "create_connection", refuse("connected a socket"))
        # Every subprocess (run, check_output, asyncio's) is a Popen, and every Popen starts here.
        patch.setattr(subprocess.Popen, "_execute_child", refuse("started a process"))
        yield
