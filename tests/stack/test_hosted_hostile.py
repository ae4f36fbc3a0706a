"""The hosted path against the hostile server of tests/hostile_server.py (real TLS, the real egress client and MCP
SDK, DynamoDB Local): each hostile behaviour at initialize or at tools/call answers within the call's deadline
and a second, with its precise code; the call record ends `done` with that error (never pending), the audit shows
the call `allowed` then `failed` with the code, and the call's approval is used only when tools/call was sent.
First at the service (hosted/calls.py, and register / refresh listing the tools), then over HTTP on a local stack
of its own (`POST /rpc/hosted-endpoints/{endpointId}/calls`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from skillcore.approvals import service as approvals
from skillcore.approvals.models import ApprovalDecision
from skillcore.db.dynamo import Db
from skillcore.egress.settings import EgressSettings
from skillcore.errors import DomainError
from skillcore.hosted import call_store, calls, secrets
from skillcore.hosted import service as hosted
from skillcore.policy import grant_store
from skillcore.policy.audit_store import list_audit
from skillcore.policy.grants import GrantScope
from skillcore.settings import Settings
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS
from skillcore_local.ddb_local import DynamoDBLocal
from skillcore_local.ddb_local import client as ddb_client
from skillcore_local.stack import LocalStack
from tests.hostile_server import BEHAVIOURS, HostileServer

from .conftest import JWT_SECRET, Caller, LocalTables, StackClient
from .test_hosted_calls_service import Counting

DEADLINE = 3.0
SLACK = 1.0
# behaviour -> (HTTP status, code, details.reason)
EXPECTED = {
    "prime_close": (504, "upstream_timeout", None), "trickle": (504, "upstream_timeout", None),
    "comments": (504, "upstream_timeout", None), "slow_tls": (504, "upstream_timeout", None),
    "chunked": (502, "upstream_error", "too_large"), "huge_line": (502, "upstream_error", "too_large"),
}
CASES = [(behaviour, phase) for behaviour in BEHAVIOURS for phase in ("initialize", "call")]


def _sent(behaviour: str, phase: str) -> bool:
    """Whether tools/call goes out: only when the misbehaving step is tools/call itself (a stalled handshake
    opens nothing)."""
    return phase == "call" and behaviour != "slow_tls"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileServer]:
    import mcp.client.streamable_http  # noqa: F401  (imported once here, not inside the first measured call)

    server = HostileServer(tmp_path_factory.mktemp("hostile")).start()
    yield server
    server.stop()


def _endpoint_url(hostile: HostileServer, behaviour: str, phase: str, tag: str) -> str:
    hostile.stall_tls = False  # registration lists the tools; the call meets the behaviour once armed
    return hostile.url(behaviour, f"armed_{phase}", tag)


# ---------------------------------------------------------------- the service


@pytest.fixture
def world(ddb_local: LocalTables, hostile: HostileServer, tmp_path: Path) -> tuple[hosted.HostedDeps, Counting]:
    settings = Settings.from_env(ddb_local.env)
    counting = Counting(ddb_client(ddb_local.endpoint))
    egress = EgressSettings.from_env({**hostile.settings_env(), "SKILLS_LOCAL": "1",
                                      "SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS": str(DEADLINE)})
    deps = hosted.HostedDeps(db=Db(client=counting, tables=settings.tables), keys=secrets.LocalKeyFile(tmp_path / "key"),
                             egress=egress, skill=HOSTED_WORKFLOWS)
    return deps, counting


def _approved_endpoint(deps: hosted.HostedDeps, url: str) -> tuple[str, str, str]:
    """A granted user, their endpoint at `url` whose echo needs approval, and an approved approval for the call
    (user, endpoint id, approval id)."""
    user, now = f"hostile-{uuid.uuid4().hex[:10]}", datetime.now(UTC)
    grant_store.set_grant(deps.db, user_id=user, skill_id=HOSTED_WORKFLOWS.skill_id,
                          skill_version=HOSTED_WORKFLOWS.version, code="hosted_workflow:invoke",
                          scope=GrantScope.user(), granted=True, grant_id=uuid.uuid4().hex, now=now)
    endpoint = hosted.register(deps, user, name="hostile", display_name="Hostile", url=url, token="tok", now=now)
    hosted.update(deps, user, endpoint.endpoint_id, expected_version=1, display_name=None, status=None,
                  tools=[hosted.ToolChange(name="echo", requires_approval=True)], now=now)
    with pytest.raises(DomainError) as asked:
        _call(deps, user, endpoint.endpoint_id, None)
    approval_id = asked.value.details["approvalId"]
    approvals.decide(deps.db, user, approval_id, ApprovalDecision.APPROVE, skill_id=HOSTED_WORKFLOWS.skill_id,
                     skill_version=HOSTED_WORKFLOWS.version, now=datetime.now(UTC))
    return user, endpoint.endpoint_id, approval_id


def _call(deps: hosted.HostedDeps, user: str, endpoint_id: str, approval_id: str | None) -> calls.CallResult:
    return calls.call(deps, user, endpoint_id, tool_name="echo", arguments={"text": "hi"}, client_call_id="h1",
                      approval_id=approval_id, now=datetime.now(UTC))


@pytest.mark.parametrize(("behaviour", "phase"), CASES)
def test_a_hostile_call_fails_in_time_completed_audited_and_keeps_an_unsent_approval(
        world: tuple[hosted.HostedDeps, Counting], hostile: HostileServer, behaviour: str, phase: str) -> None:
    deps, counting = world
    user, endpoint_id, approval_id = _approved_endpoint(deps, _endpoint_url(hostile, behaviour, phase, "service"))
    hostile.arm(behaviour, phase, "service")
    before = hostile.methods["tools/call"]
    counting.counts.clear()
    started = time.monotonic()
    with pytest.raises(DomainError) as raised:
        _call(deps, user, endpoint_id, approval_id)
    elapsed = time.monotonic() - started
    status, code, reason = EXPECTED[behaviour]
    assert (raised.value.code, raised.value.details.get("reason")) == (code, reason), raised.value
    assert elapsed < DEADLINE + SLACK, elapsed
    sent = _sent(behaviour, phase)
    assert hostile.methods["tools/call"] - before == int(sent)
    # the same three requests as any forwarded call; the completion is a transaction when it gives the approval back
    assert counting.counts == ({"batch_get_item": 1, "transact_write_items": 1, "batch_write_item": 1} if sent
                               else {"batch_get_item": 1, "transact_write_items": 2})
    record = call_store.get_call(deps.db, user, endpoint_id, "h1")
    assert record is not None and record.done and record.http_status == status
    assert record.body is not None and record.body["error"]["code"] == code
    events = [e for e in list_audit(deps.db, user, limit=20, cursor=None)[0] if e.target_id == record.call_id]
    assert [(e.decision.value, e.metadata.error_code) for e in events] == [("failed", code), ("allowed", None)]
    assert approvals.get(deps.db, user, approval_id).status == ("used" if sent else "approved")
    # replayed from the record: the same error, nothing sent again
    with pytest.raises(DomainError) as replayed:
        _call(deps, user, endpoint_id, approval_id)
    assert replayed.value.code == code and hostile.methods["tools/call"] - before == int(sent)


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_a_hostile_list_fails_register_and_refresh_in_time(world: tuple[hosted.HostedDeps, Counting],
                                                           hostile: HostileServer, behaviour: str) -> None:
    deps, _ = world
    _, code, reason = EXPECTED[behaviour]
    user, now = f"hostile-{uuid.uuid4().hex[:10]}", datetime.now(UTC)
    hostile.stall_tls = True
    started = time.monotonic()
    with pytest.raises(DomainError) as registered:
        hosted.register(deps, user, name="listing", display_name="L", url=hostile.url(behaviour, "list"),
                        token=None, now=now)
    assert time.monotonic() - started < DEADLINE + SLACK
    assert (registered.value.code, registered.value.details.get("reason")) == (code, reason)
    endpoint = hosted.register(deps, user, name="later", display_name="L",
                               url=_endpoint_url(hostile, behaviour, "list", "refresh"), token=None, now=now)
    hostile.arm(behaviour, "list", "refresh")
    started = time.monotonic()
    with pytest.raises(DomainError) as refreshed:
        hosted.refresh(deps, user, endpoint.endpoint_id, now=datetime.now(UTC))
    assert time.monotonic() - started < DEADLINE + SLACK
    assert (refreshed.value.code, refreshed.value.details.get("reason")) == (code, reason)


# ---------------------------------------------------------------- over HTTP


@pytest.fixture(scope="module")
def hostile_stack(_dynamodb: DynamoDBLocal, _dummy_credentials: None, hostile: HostileServer,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackClient]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in hostile.settings_env().items():
            patch.setenv(name, value)
        patch.setenv("SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS", str(DEADLINE))
        local = LocalStack(port=0, ddb_endpoint=_dynamodb.endpoint, data_dir=tmp_path_factory.mktemp("data"),
                           scan_interval=0, jwt_secret=JWT_SECRET, table_prefix="hosted-hostile-")
        local.start()
        try:
            yield StackClient(local)
        finally:
            local.stop()


def _post_call(user: Caller, endpoint_id: str, approval_id: str | None) -> tuple[int, Any]:
    body: dict[str, Any] = {"toolName": "echo", "arguments": {"text": "hi"}, "clientCallId": "h-1"}
    if approval_id is not None:
        body["approvalId"] = approval_id
    return user.call("POST", f"/rpc/hosted-endpoints/{endpoint_id}/calls", body)


@pytest.mark.parametrize(("behaviour", "phase"), CASES)
def test_the_call_route_answers_a_hostile_endpoint_in_time(hostile_stack: StackClient, hostile: HostileServer,
                                                          behaviour: str, phase: str) -> None:
    user = Caller(hostile_stack, f"hh-{uuid.uuid4().hex[:8]}")
    user.ok("PATCH", "/rpc/skills/permissions", {"skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke",
                                                 "scope": {"type": "user"}, "granted": True})
    endpoint = user.ok("POST", "/rpc/hosted-endpoints", {"name": "hostile", "displayName": "Hostile",
                                                         "url": _endpoint_url(hostile, behaviour, phase, "http")},
                        status=201)
    endpoint_id = endpoint["endpointId"]
    user.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint_id}",
            {"expectedVersion": endpoint["version"], "tools": [{"name": "echo", "requiresApproval": True}]})
    approval_id = _post_call(user, endpoint_id, None)[1]["error"]["details"]["approvalId"]
    user.ok("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"})
    hostile.arm(behaviour, phase, "http")
    before = hostile.methods["tools/call"]
    started = time.monotonic()
    status, body = _post_call(user, endpoint_id, approval_id)
    elapsed = time.monotonic() - started
    expected_status, code, reason = EXPECTED[behaviour]
    assert (status, body["error"]["code"], body["error"]["details"].get("reason")) == (expected_status, code, reason)
    assert elapsed < DEADLINE + SLACK, elapsed
    sent = _sent(behaviour, phase)
    assert hostile.methods["tools/call"] - before == int(sent)
    assert _post_call(user, endpoint_id, approval_id) == (status, body)  # stored: replayed, nothing sent again
    assert hostile.methods["tools/call"] - before == int(sent)
    failed, allowed = [e for e in user.ok("GET", "/rpc/skills/audit-events")["items"]
                       if e["action"] == "hosted_endpoint.call" and e["decision"] != "denied"]
    assert (failed["decision"], failed["metadata"]["errorCode"], allowed["decision"]) == ("failed", code, "allowed")
    state = "used" if sent else "approved"
    assert [a["approvalId"] for a in user.ok("GET", f"/rpc/approvals?status={state}")["items"]] == [approval_id]
