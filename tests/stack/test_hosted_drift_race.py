"""Drift under races, with real threads against DynamoDB Local (hosted/service.py refresh and accept): every
write is conditioned on the endpoint's version, so of concurrent accepts exactly one adopts the list, and a
refresh racing an accept never makes a list the owner did not accept the pinned one."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from skillcore.db.dynamo import Db
from skillcore.egress.settings import EgressSettings
from skillcore.errors import DomainError
from skillcore.hosted import secrets
from skillcore.hosted import service as hosted
from skillcore.hosted.models import EndpointStatus
from skillcore.policy.audit_store import list_audit
from skillcore.settings import Settings
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS
from skillcore_local.ddb_local import client as ddb_client

from .conftest import LocalTables
from .test_user_capabilities_concurrency import together


def tool(name: str, description: str = "A tool.") -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


PINNED = [tool("echo")]
LIST_A = [tool("echo"), tool("add")]
LIST_B = [tool("echo"), tool("search")]


class Lists:
    """tools/list of the stand-in server: whatever the test set last."""

    def __init__(self) -> None:
        self.tools = PINNED

    def __call__(self, url: str, token: str | None, settings: EgressSettings) -> list[dict[str, Any]]:
        return self.tools


@pytest.fixture
def world(ddb_local: LocalTables, tmp_path: Path) -> Iterator[tuple[hosted.HostedDeps, Lists]]:
    settings = Settings.from_env(ddb_local.env)
    lists = Lists()
    yield hosted.HostedDeps(
        db=Db(client=ddb_client(ddb_local.endpoint), tables=settings.tables), keys=secrets.LocalKeyFile(tmp_path / "k"),
        egress=EgressSettings(allowed_domains=("mcp.test",)), skill=HOSTED_WORKFLOWS, list_tools=lists,
        call_tool=None), lists


def drifted(deps: hosted.HostedDeps, lists: Lists) -> tuple[str, str, int, str]:
    """A new user's endpoint with LIST_A pending: (user, endpoint id, version, pending fingerprint)."""
    user = f"drift-{uuid.uuid4().hex[:10]}"
    lists.tools = PINNED
    endpoint = hosted.register(deps, user, name="flow", display_name="Flow", url="https://api.mcp.test/mcp",
                               token=None, now=datetime.now(UTC))
    lists.tools = LIST_A
    result = hosted.refresh(deps, user, endpoint.endpoint_id, datetime.now(UTC))
    assert result.endpoint.pending is not None
    return user, endpoint.endpoint_id, result.endpoint.version, result.endpoint.pending.snapshot.fingerprint


def outcome(work: Any) -> str:
    try:
        work()
    except DomainError as error:
        return error.code
    return "ok"


def test_of_twelve_concurrent_accepts_exactly_one_adopts_the_list(world) -> None:
    deps, lists = world
    user, endpoint_id, version, fingerprint = drifted(deps, lists)
    results = together(12, lambda i: outcome(lambda: hosted.accept(
        deps, user, endpoint_id, expected_version=version, fingerprint=fingerprint, now=datetime.now(UTC))))
    counts = Counter(results)
    assert counts["ok"] == 1, counts
    assert set(counts) <= {"ok", "version_conflict", "concurrent_update"}, counts
    after = hosted.get(deps, user, endpoint_id)
    assert (after.version, after.status, after.pending) == (version + 1, EndpointStatus.ACTIVE, None)
    assert [t.name for t in after.snapshot.tools] == ["add", "echo"]
    events = [e for e in list_audit(deps.db, user, limit=50, cursor=None)[0]
              if e.action == "hosted_endpoint.snapshot_accept"]
    assert len(events) == 1


@pytest.mark.parametrize("round_", range(6))
def test_a_refresh_racing_an_accept_never_pins_a_list_nobody_accepted(world, round_: int) -> None:
    deps, lists = world
    user, endpoint_id, version, fingerprint = drifted(deps, lists)
    lists.tools = LIST_B  # the server changes again while its owner accepts LIST_A

    def work(i: int) -> str:
        if i == 0:
            return outcome(lambda: hosted.accept(deps, user, endpoint_id, expected_version=version,
                                                 fingerprint=fingerprint, now=datetime.now(UTC)))
        return outcome(lambda: hosted.refresh(deps, user, endpoint_id, datetime.now(UTC)))

    accepted, refreshed = together(2, work)
    assert accepted in {"ok", "version_conflict", "concurrent_update"}, accepted
    assert refreshed in {"ok", "concurrent_update"}, refreshed
    after = hosted.get(deps, user, endpoint_id)
    pinned = [t.name for t in after.snapshot.tools]
    if accepted == "ok":
        assert pinned == ["add", "echo"]  # LIST_A, the one accepted, never LIST_B
    else:
        assert pinned == ["echo"]
    # whichever came first, LIST_B is at most pending, never adopted without its own accept
    assert "search" not in pinned
    if refreshed == "ok":
        assert after.pending is not None and [t.name for t in after.pending.snapshot.tools] == ["echo", "search"]
        assert after.status is EndpointStatus.DRIFT_PENDING
