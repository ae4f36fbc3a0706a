"""hosted/calls.py against DynamoDB Local, with the endpoint's tools/call replaced by a counting stand-in (the
real MCP server over HTTPS is tests/stack/test_hosted_calls_http.py's): the order of the checks, the approval
used once inside the claim, the idempotent replay, two identical calls at once with real threads reaching the
endpoint once, the audit, and the DynamoDB requests per call that the module docstring states."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from skillcore.approvals import service as approvals
from skillcore.approvals.models import ApprovalDecision
from skillcore.db.dynamo import Db
from skillcore.egress.settings import EgressSettings
from skillcore.errors import DomainError
from skillcore.hosted import calls, secrets
from skillcore.hosted import service as hosted
from skillcore.hosted.call_answer import CallResult
from skillcore.hosted.models import EndpointStatus, PendingSnapshot, SnapshotDiff
from skillcore.policy import grant_store
from skillcore.policy.audit_store import list_audit
from skillcore.policy.grants import GrantScope
from skillcore.settings import Settings
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS
from skillcore_local.ddb_local import client as ddb_client

from .conftest import LocalTables
from .test_user_capabilities_concurrency import together

TOOLS = [
    {"name": "publish", "description": "Publish a post.", "inputSchema": {
        "type": "object", "properties": {"title": {"type": "string", "maxLength": 20},
                                         "tags": {"type": "array", "items": {"type": "integer"}}},
        "required": ["title"], "additionalProperties": False}},
    {"name": "lookup", "description": "Look something up.", "inputSchema": {
        "type": "object", "properties": {"q": {"type": "string"}}}},
]
SECRET_TITLE = "secret-title-xyz"


class Endpoint:
    """The stand-in for tools/call: counts calls per tool and answers after `delay` seconds."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.delay = 0.0
        self.lock = threading.Lock()

    def __call__(self, url: str, token: str | None, settings: EgressSettings, name: str,
                 arguments: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.calls[name] += 1
        time.sleep(self.delay)
        return {"content": [{"type": "text", "text": f"{name} done"}], "structuredContent": {"ok": True},
                "isError": False}


class Counting:
    """A DynamoDB client wrapper that counts requests by operation."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.counts: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.raw, name)
        if name.startswith("_") or not callable(attr):
            return attr

        def counted(**kwargs: Any) -> Any:
            self.counts[name] += 1
            return attr(**kwargs)

        return counted


@pytest.fixture
def world(ddb_local: LocalTables, tmp_path: Path) -> Iterator[tuple[hosted.HostedDeps, Endpoint, Counting]]:
    settings = Settings.from_env(ddb_local.env)
    counting = Counting(ddb_client(ddb_local.endpoint))
    endpoint = Endpoint()
    deps = hosted.HostedDeps(
        db=Db(client=counting, tables=settings.tables), keys=secrets.LocalKeyFile(tmp_path / "key"),
        egress=EgressSettings(allowed_domains=("mcp.test",)), skill=HOSTED_WORKFLOWS,
        list_tools=lambda url, token, egress: TOOLS, call_tool=endpoint)
    yield deps, endpoint, counting


def _user() -> str:
    return f"caller-{uuid.uuid4().hex[:10]}"


def _grant(deps: hosted.HostedDeps, user: str) -> None:
    grant_store.set_grant(deps.db, user_id=user, skill_id=HOSTED_WORKFLOWS.skill_id,
                          skill_version=HOSTED_WORKFLOWS.version, code="hosted_workflow:invoke",
                          scope=GrantScope.user(), granted=True, grant_id=uuid.uuid4().hex, now=datetime.now(UTC))


def _register(deps: hosted.HostedDeps, user: str, *, approval: bool = False) -> str:
    now = datetime.now(UTC)
    endpoint = hosted.register(deps, user, name="flow_one", display_name="Flow", url="https://api.mcp.test/mcp/k-123",
                               token="tok-456", now=now)
    return hosted.update(deps, user, endpoint.endpoint_id, expected_version=1, display_name=None, status=None,
                         tools=[hosted.ToolChange(name="publish", requires_approval=approval),
                                hosted.ToolChange(name="lookup", requires_approval=False)], now=now).endpoint_id


def _call(deps: hosted.HostedDeps, user: str, endpoint_id: str, *, tool: str = "publish",
          arguments: dict[str, Any] | None = None, call_id: str = "c1",
          approval_id: str | None = None) -> CallResult:
    return calls.call(deps, user, endpoint_id, tool_name=tool,
                      arguments={"title": SECRET_TITLE} if arguments is None else arguments,
                      client_call_id=call_id, approval_id=approval_id, now=datetime.now(UTC))


def _refused(deps: hosted.HostedDeps, user: str, endpoint_id: str, **kwargs: Any) -> DomainError:
    with pytest.raises(DomainError) as raised:
        _call(deps, user, endpoint_id, **kwargs)
    return raised.value


def test_a_call_is_forwarded_once_and_replayed_in_three_requests(world) -> None:
    deps, endpoint, counting = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user)
    counting.counts.clear()
    result = _call(deps, user, endpoint_id)
    assert (result.is_error, result.content, result.structured_content) == (False, "publish done", {"ok": True})
    assert endpoint.calls == {"publish": 1}
    assert sum(counting.counts.values()) == 3, counting.counts
    # the read; the claim with the `allowed` audit; the completed record with the outcome's audit
    assert counting.counts == {"batch_get_item": 1, "transact_write_items": 1, "batch_write_item": 1}

    counting.counts.clear()
    again = _call(deps, user, endpoint_id)
    assert again == result and endpoint.calls == {"publish": 1}
    assert counting.counts == {"batch_get_item": 1}

    # the same clientCallId with other arguments or another tool: 409, nothing called, the first answer not shown
    for reused in ({"arguments": {"title": "other"}}, {"tool": "lookup", "arguments": {"title": SECRET_TITLE}}):
        counting.counts.clear()
        error = _refused(deps, user, endpoint_id, **reused)
        assert (error.code, error.status) == ("idempotency_key_reused", 409)
        assert result.call_id not in repr(error.details) and "publish done" not in error.message
        assert endpoint.calls == {"publish": 1} and counting.counts == {"batch_get_item": 1}

    events = [e for e in list_audit(deps.db, user, limit=50, cursor=None)[0] if e.action == "hosted_endpoint.call"]
    # audited before it was sent (in the claim's transaction), then with its outcome; the replay is not audited
    assert [e.decision for e in events] == ["succeeded", "allowed"]
    assert {e.target_id for e in events} == {result.call_id}
    meta = events[0].metadata
    assert meta.endpoint_id == endpoint_id and meta.tool_id == "publish" and meta.status == "ok"
    assert meta.input_sha256 == approvals.operation_of(endpoint_id, "publish", {"title": SECRET_TITLE}).arguments_digest
    raw = msgspec.json.encode(events).decode()
    assert SECRET_TITLE not in raw and "k-123" not in raw and "tok-456" not in raw


def test_the_checks_come_in_the_contract_order(world) -> None:
    deps, endpoint, counting = world
    user = _user()
    endpoint_id = _register(deps, user)
    # 1. no grant: permission_required, whatever else is wrong
    error = _refused(deps, user, endpoint_id, tool="nope", arguments={"x": 1})
    assert (error.code, error.details["permissionCode"]) == ("permission_required", "hosted_workflow:invoke")
    assert _refused(deps, user, "no-such-endpoint").code == "permission_required"
    _grant(deps, user)
    # 2. another user's endpoint (or none) is 404; a disabled one is endpoint_disabled
    assert _refused(deps, user, "no-such-endpoint").code == "not_found"
    other = _user()
    _grant(deps, other)
    assert _refused(deps, other, endpoint_id).code == "not_found"
    current = hosted.get(deps, user, endpoint_id)
    hosted.update(deps, user, endpoint_id, expected_version=current.version, display_name=None,
                  status=EndpointStatus.DISABLED, tools=[], now=datetime.now(UTC))
    assert _refused(deps, user, endpoint_id, tool="nope").code == "endpoint_disabled"
    current = hosted.get(deps, user, endpoint_id)
    hosted.update(deps, user, endpoint_id, expected_version=current.version, display_name=None,
                  status=EndpointStatus.ACTIVE, tools=[hosted.ToolChange(name="lookup", enabled=False)],
                  now=datetime.now(UTC))
    # 3. the tool: unknown, then switched off; 4. the arguments
    counting.counts.clear()
    assert _refused(deps, user, endpoint_id, tool="nope", arguments={"x": 1}).code == "unknown_tool"
    assert counting.counts == {"batch_get_item": 1, "put_item": 1}  # the read and the audit
    disabled = _refused(deps, user, endpoint_id, tool="lookup", arguments={"q": 3})
    assert (disabled.code, disabled.details) == ("tool_drifted", {"toolName": "lookup", "reason": "disabled"})
    invalid = _refused(deps, user, endpoint_id, arguments={"title": SECRET_TITLE * 3, "tags": [1, "x"], "extra": 1})
    assert invalid.code == "validation_error"
    assert invalid.details == {"errors": [
        {"path": "$", "keyword": "additionalProperties"},
        {"path": "$.tags[1]", "keyword": "type"},
        {"path": "$.title", "keyword": "maxLength"},
    ]}
    assert SECRET_TITLE not in json.dumps(invalid.details)
    assert _refused(deps, user, endpoint_id, arguments={}).details == {"errors": [{"path": "$", "keyword": "required"}]}
    assert endpoint.calls == {}
    denied = [e for e in list_audit(deps.db, user, limit=50, cursor=None)[0]
              if e.action == "hosted_endpoint.call" and e.decision == "denied"]
    assert [e.reason for e in denied] == ["validation_error", "validation_error", "tool_drifted", "unknown_tool",
                                          "endpoint_disabled", "permission_required", "permission_required"]


def test_big_integers_are_bound_exactly_and_nan_is_refused_before_any_read(world) -> None:
    """An integer past 2**53 - 1 is valid JSON and valid for `"type": "integer"`: it is asked for and approved
    under its exact digits (a neighbour is another operation). NaN (which a model's tool input or the MCP
    SDK's parser may carry) has no digest: a 422 naming its path, with no request, audit or call."""
    deps, endpoint, counting = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user, approval=True)
    big = {"title": "t", "tags": [2**53 + 1, -(2**70)]}
    asked = _refused(deps, user, endpoint_id, arguments=big, call_id="big")
    assert asked.code == "approval_required"
    approval_id = asked.details["approvalId"]
    approvals.decide(deps.db, user, approval_id, ApprovalDecision.APPROVE, skill_id=HOSTED_WORKFLOWS.skill_id,
                     skill_version=HOSTED_WORKFLOWS.version, now=datetime.now(UTC))
    neighbour = {"title": "t", "tags": [2**53, -(2**70)]}  # 2**53 + 1 as a double
    assert _refused(deps, user, endpoint_id, arguments=neighbour, call_id="big",
                    approval_id=approval_id).code == "approval_required"
    assert endpoint.calls == {}
    assert _call(deps, user, endpoint_id, arguments=big, call_id="big", approval_id=approval_id).is_error is False
    assert endpoint.calls == {"publish": 1}

    counting.counts.clear()
    error = _refused(deps, user, endpoint_id, arguments={"title": "t", "tags": [1, float("nan")]}, call_id="nan")
    assert (error.code, error.details) == ("validation_error", {"errors": [{"path": "$.tags[1]", "keyword": "finite"}]})
    assert counting.counts == {} and endpoint.calls == {"publish": 1}
    reasons = [e.reason for e in list_audit(deps.db, user, limit=50, cursor=None)[0] if e.action == "hosted_endpoint.call"]
    assert "validation_error" not in reasons


def test_the_deadline_is_cut_to_what_the_invocation_has_left(world) -> None:
    """A function times out at 29 s and the gateway answers on its own after 30 s: a request out must end
    before either, with 2 s left for the record's completion and the answer."""
    deps, endpoint, _ = world
    seen: list[float] = []

    def call_tool(url: str, token: str | None, settings: EgressSettings, name: str, arguments: dict) -> dict:
        seen.append(settings.deadline_seconds)
        return endpoint(url, token, settings, name, arguments)

    left: list[float | None] = [None]
    timed = replace(deps, call_tool=call_tool, time_left=lambda: left[0])
    user = _user()
    _grant(timed, user)
    endpoint_id = _register(timed, user)
    for i, remaining in enumerate((None, 60.0, 32.0, 27.5, 2.5)):
        left[0] = remaining
        _call(timed, user, endpoint_id, call_id=f"d{i}")
    assert seen == [30.0, 30.0, 30.0, 25.5, 1.0]  # the configured 30 s, then left - 2 s, at least 1 s
    assert hosted.egress_now(timed).deadline_seconds == 1.0 and timed.egress.deadline_seconds == 30.0


def test_a_drifted_tool_is_refused_while_the_unchanged_ones_work(world) -> None:
    deps, _, _ = world
    user = _user()
    _grant(deps, user)
    current = hosted.get(deps, user, _register(deps, user))
    drifted = replace(current, status=EndpointStatus.DRIFT_PENDING, pending=PendingSnapshot(
        snapshot=current.snapshot, diff=SnapshotDiff(added=("brand_new",), changed=("publish",))))
    for name in ("publish", "brand_new"):
        with pytest.raises(DomainError) as raised:
            calls._tool_of(drifted, name)
        assert (raised.value.code, raised.value.details) == ("tool_drifted", {"toolName": name, "reason": "drifted"})
    assert calls._tool_of(drifted, "lookup").name == "lookup"
    with pytest.raises(DomainError) as raised:
        calls._tool_of(drifted, "removed_or_never_there")
    assert raised.value.code == "unknown_tool"


def test_an_approval_is_asked_used_once_and_never_reused(world) -> None:
    deps, endpoint, counting = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user, approval=True)
    counting.counts.clear()
    asked = _refused(deps, user, endpoint_id)
    assert asked.code == "approval_required"
    assert counting.counts == {"batch_get_item": 1, "put_item": 2}  # the read, the ask, the audit
    approval_id = asked.details["approvalId"]
    # the same call asks for the same approval; a pending one does not open the call
    assert _refused(deps, user, endpoint_id).details["approvalId"] == approval_id
    assert _refused(deps, user, endpoint_id, approval_id=approval_id).code == "approval_required"
    approvals.decide(deps.db, user, approval_id, ApprovalDecision.APPROVE, skill_id=HOSTED_WORKFLOWS.skill_id,
                     skill_version=HOSTED_WORKFLOWS.version, now=datetime.now(UTC))
    # approved for other arguments: refused, and the approval is not spent
    counting.counts.clear()
    other_args = _refused(deps, user, endpoint_id, arguments={"title": "different"}, approval_id=approval_id)
    # the read (the approval with it: not for these arguments, so no session is opened), the ask, the audit
    assert counting.counts == {"batch_get_item": 1, "put_item": 2}
    assert other_args.code == "approval_required" and other_args.details["approvalId"] != approval_id
    counting.counts.clear()
    result = _call(deps, user, endpoint_id, approval_id=approval_id)
    # the read; the claim, its `allowed` audit and the approval's use; the completion with the outcome's audit
    assert counting.counts == {"batch_get_item": 1, "transact_write_items": 1, "batch_write_item": 1}
    assert endpoint.calls == {"publish": 1}
    assert approvals.get(deps.db, user, approval_id).status == "used"
    # the same clientCallId replays; another one cannot reuse the approval
    assert _call(deps, user, endpoint_id, approval_id=approval_id) == result
    reused = _refused(deps, user, endpoint_id, call_id="c2", approval_id=approval_id)
    assert reused.code == "approval_required" and reused.details["approvalId"] != approval_id
    assert endpoint.calls == {"publish": 1}


def test_a_call_is_audited_before_it_is_sent_even_when_its_completion_is_lost(world, monkeypatch) -> None:
    """The claim's transaction holds the `allowed` event: a call whose completion never lands (its invocation
    died, the table failed) still shows in the audit as sent, and its clientCallId sends nothing again."""
    from datetime import timedelta

    from skillcore.db.errors import StoreError

    deps, endpoint, _ = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user)

    def lost(*_args: Any, **_kwargs: Any) -> None:
        raise StoreError("the completion did not land", code="InternalServerError")

    with monkeypatch.context() as patch:
        patch.setattr(calls, "batch_put", lost)
        with pytest.raises(StoreError):
            _call(deps, user, endpoint_id, call_id="lost-answer")
    assert endpoint.calls == {"publish": 1}
    (event,) = [e for e in list_audit(deps.db, user, limit=50, cursor=None)[0] if e.action == "hosted_endpoint.call"]
    assert event.decision == "allowed" and len(event.metadata.input_sha256 or "") == 64
    later = datetime.now(UTC) + timedelta(minutes=2)  # past the deadline and its slack: the outcome is unknown
    with pytest.raises(DomainError) as raised:
        calls.call(deps, user, endpoint_id, tool_name="publish", arguments={"title": SECRET_TITLE},
                   client_call_id="lost-answer", approval_id=None, now=later)
    assert raised.value.code == "upstream_timeout" and endpoint.calls == {"publish": 1}


def test_two_identical_calls_at_once_reach_the_endpoint_once(world) -> None:
    deps, endpoint, _ = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user)
    endpoint.delay = 0.5
    results = together(8, lambda _i: _call(deps, user, endpoint_id, call_id="same"))
    assert endpoint.calls == {"publish": 1}
    assert all(r == results[0] for r in results)
    together(4, lambda i: _call(deps, user, endpoint_id, call_id=f"distinct-{i}"))
    assert endpoint.calls == {"publish": 5}


def test_concurrent_calls_reusing_a_client_call_id_with_other_arguments_reach_the_endpoint_once(world) -> None:
    """Whether the second call reads the first one's record or loses the claim to it (the record as it was comes
    back with the lost condition), it answers 409 and calls nothing."""
    deps, endpoint, _ = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user)
    endpoint.delay = 0.3

    def one(i: int) -> str:
        try:
            _call(deps, user, endpoint_id, arguments={"title": f"t{i}"}, call_id="shared")
            return "ok"
        except DomainError as error:
            return error.code

    for _round in range(3):
        answers = together(4, one)
        assert sorted(answers) == ["idempotency_key_reused"] * 3 + ["ok"], answers
        user = _user()
        _grant(deps, user)
        endpoint_id = _register(deps, user)
    assert endpoint.calls == {"publish": 3}


def test_a_claim_whose_caller_died_answers_a_timeout_and_sends_nothing(world) -> None:
    deps, endpoint, _ = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user)
    from datetime import timedelta

    from skillcore.db.transact import write
    from skillcore.hosted import call_store

    long_ago = datetime.now(UTC) - timedelta(minutes=5)
    write(deps.db, call_store.claim_op(deps.db, call_store.CallRecord(
        user_id=user, endpoint_id=endpoint_id, client_call_id="orphan", call_id="01ORPHAN", tool_name="publish",
        arguments_digest=approvals.operation_of(endpoint_id, "publish", {"title": SECRET_TITLE}).arguments_digest,
        status=call_store.PENDING, claimed_at=long_ago)))
    started = time.monotonic()
    assert _refused(deps, user, endpoint_id, call_id="orphan").code == "upstream_timeout"
    assert time.monotonic() - started < 5 and endpoint.calls == {}


# ---------------------------------------------------------------- a change between the checks and the claim


def _change_before_the_claim(monkeypatch: pytest.MonkeyPatch, deps: hosted.HostedDeps, user: str, endpoint_id: str,
                             **change: Any) -> list[int]:
    """The endpoint is changed (hosted.update with `change`) once, right after the call's checks passed and before
    its claim is written: hosted.service.secret_of is the first thing the forwarding does. Returns the list of
    versions seen at that point (one per round)."""
    original = hosted.secret_of
    rounds: list[int] = []

    def secret_then_change(deps_: hosted.HostedDeps, endpoint: Any) -> Any:
        rounds.append(endpoint.version)
        if len(rounds) == 1:
            hosted.update(deps, user, endpoint_id, expected_version=endpoint.version, now=datetime.now(UTC),
                          **{"display_name": None, "status": None, "tools": [], **change})
        return original(deps_, endpoint)

    monkeypatch.setattr(hosted, "secret_of", secret_then_change)
    return rounds


def _calls_audited(deps: hosted.HostedDeps, user: str) -> list[tuple[str, str | None]]:
    return [(e.decision.value, e.reason) for e in list_audit(deps.db, user, limit=50, cursor=None)[0]
            if e.action == "hosted_endpoint.call"]


@pytest.mark.parametrize(("change", "code", "details"), [
    ({"tools": [hosted.ToolChange(name="publish", enabled=False)]}, "tool_drifted",
     {"toolName": "publish", "reason": "disabled"}),
    ({"status": EndpointStatus.DISABLED}, "endpoint_disabled", {}),
])
def test_a_switch_off_racing_the_claim_loses_it_and_nothing_is_sent(world, monkeypatch, change: dict[str, Any],
                                                                    code: str, details: dict[str, Any]) -> None:
    """The claim's ConditionCheck (the endpoint at the version read, not disabled): a switch turned off after the
    checks and before the claim makes the claim lose; the call is read again and refused as the endpoint now
    deserves, and nothing reaches the endpoint or the call records."""
    deps, endpoint, counting = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user)
    rounds = _change_before_the_claim(monkeypatch, deps, user, endpoint_id, **change)
    counting.counts.clear()
    error = _refused(deps, user, endpoint_id, call_id="raced-1")
    assert (error.code, error.status, error.details) == (code, 409, details)
    assert endpoint.calls == {} and len(rounds) == 1
    # the lost claim wrote nothing: no record (the same clientCallId is refused again, not replayed), no `allowed`
    assert _calls_audited(deps, user) == [("denied", code)]
    assert _refused(deps, user, endpoint_id, call_id="raced-1").code == code and endpoint.calls == {}
    # the calls: the read, the claim lost, the read again, the refusal's audit (then the second call's read and
    # audit); the change: its read and its transaction; the audit's listing: one query
    assert counting.counts == {"batch_get_item": 3, "transact_write_items": 1 + 1, "put_item": 2, "get_item": 1,
                               "query": 1}


def test_a_change_that_does_not_concern_the_call_is_read_again_and_forwarded_once(world, monkeypatch) -> None:
    deps, endpoint, _counting = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user)
    rounds = _change_before_the_claim(monkeypatch, deps, user, endpoint_id, display_name="Renamed")
    result = _call(deps, user, endpoint_id, call_id="renamed-1")
    assert result.content == "publish done" and endpoint.calls == {"publish": 1}
    assert rounds == [2, 3]  # the first claim lost to the rename, the second round won
    assert _call(deps, user, endpoint_id, call_id="renamed-1") == result and endpoint.calls == {"publish": 1}


def test_an_approval_is_refused_after_the_endpoint_changed_even_between_the_checks_and_the_claim(world,
                                                                                                 monkeypatch) -> None:
    """An approval is bound to the endpoint's version and pinned fingerprint: a switch changed between the call's
    checks and its claim loses the claim, the approval stays unused, and a new approval is asked for."""
    deps, endpoint, _counting = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user, approval=True)
    asked = _refused(deps, user, endpoint_id, call_id="bound-1")
    approval_id = asked.details["approvalId"]
    approvals.decide(deps.db, user, approval_id, ApprovalDecision.APPROVE, skill_id=HOSTED_WORKFLOWS.skill_id,
                     skill_version=HOSTED_WORKFLOWS.version, now=datetime.now(UTC))
    _change_before_the_claim(monkeypatch, deps, user, endpoint_id,
                             tools=[hosted.ToolChange(name="lookup", requires_approval=True)])
    again = _refused(deps, user, endpoint_id, call_id="bound-1", approval_id=approval_id)
    assert again.code == "approval_required" and again.details["approvalId"] != approval_id
    assert endpoint.calls == {}
    assert approvals.get(deps.db, user, approval_id).status.value == "approved"  # not used by the lost claim
    new = approvals.get(deps.db, user, again.details["approvalId"])
    assert new.binding is not None and new.binding.endpoint_version == 3


def test_a_stored_result_is_replayed_only_after_the_grant_and_the_endpoint(world) -> None:
    deps, endpoint, counting = world
    user = _user()
    _grant(deps, user)
    endpoint_id = _register(deps, user)
    first = _call(deps, user, endpoint_id, call_id="kept-1")
    grant_store.set_grant(deps.db, user_id=user, skill_id=HOSTED_WORKFLOWS.skill_id,
                          skill_version=HOSTED_WORKFLOWS.version, code="hosted_workflow:invoke",
                          scope=GrantScope.user(), granted=False, grant_id=uuid.uuid4().hex, now=datetime.now(UTC))
    revoked = _refused(deps, user, endpoint_id, call_id="kept-1")
    assert (revoked.code, revoked.status) == ("permission_required", 422)
    assert first.call_id not in repr(revoked.details)
    _grant(deps, user)
    current = hosted.get(deps, user, endpoint_id)
    hosted.update(deps, user, endpoint_id, expected_version=current.version, display_name=None,
                  status=EndpointStatus.DISABLED, tools=[], now=datetime.now(UTC))
    assert _refused(deps, user, endpoint_id, call_id="kept-1").code == "endpoint_disabled"
    current = hosted.get(deps, user, endpoint_id)
    hosted.update(deps, user, endpoint_id, expected_version=current.version, display_name=None,
                  status=EndpointStatus.ACTIVE, tools=[], now=datetime.now(UTC))
    counting.counts.clear()
    assert _call(deps, user, endpoint_id, call_id="kept-1") == first
    assert endpoint.calls == {"publish": 1} and counting.counts == {"batch_get_item": 1}
