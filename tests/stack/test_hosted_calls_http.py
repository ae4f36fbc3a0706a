"""`POST /rpc/hosted-endpoints/{endpointId}/calls` over real HTTP: a local stack of its own whose HostedFunction
reaches the real MCP server of tests/hosted_server.py (the official SDK over HTTPS) through the egress module.
Every refusal in the contract's order, the approval round trip, the idempotent replay counted on the server's
side, each upstream failure (slow, redirect, 500, over 1 MiB) and a tool's own error, and the logs of a
register + call, which never show the URL's path or the token.

The proxied call's deadline is lowered to DEADLINE seconds for this stack (SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS,
honoured only under SKILLS_LOCAL=1); the `slow` tool answers after tests/hosted_server.py's SLOW_SECONDS.
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from skillcore_local.ddb_local import DynamoDBLocal
from skillcore_local.stack import LocalStack
from tests.hosted_server import SLOW_SECONDS, HostedServer

from .conftest import JWT_SECRET, Caller, StackClient
from .test_user_capabilities_concurrency import together

DEADLINE = 3.0
TOKEN = "tok-secret-7781"


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedServer]:
    server = HostedServer(tmp_path_factory.mktemp("hosted-calls")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def calls_stack(_dynamodb: DynamoDBLocal, _dummy_credentials: None, hosted: HostedServer,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackClient]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in hosted.settings_env().items():
            patch.setenv(name, value)
        patch.setenv("SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS", str(DEADLINE))
        patch.setenv("POWERTOOLS_LOG_LEVEL", "DEBUG")  # the log test reads everything the stack says
        local = LocalStack(port=0, ddb_endpoint=_dynamodb.endpoint, data_dir=tmp_path_factory.mktemp("data"),
                           scan_interval=0, jwt_secret=JWT_SECRET, table_prefix="hosted-calls-")
        local.start()
        try:
            yield StackClient(local)
        finally:
            local.stop()


def _user(stack: StackClient) -> Caller:
    return Caller(stack, f"hc-{uuid.uuid4().hex[:8]}")


def grant(user: Caller, granted: bool = True) -> dict[str, Any]:
    return user.ok("PATCH", "/rpc/skills/permissions", {
        "skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke", "scope": {"type": "user"},
        "granted": granted})


def register(user: Caller, hosted: HostedServer, *, path: str = "/mcp", name: str = "flow",
             approval: dict[str, bool] | None = None) -> dict[str, Any]:
    """An endpoint whose tools require no approval unless `approval` says so (new tools require one)."""
    endpoint = user.ok("POST", "/rpc/hosted-endpoints", {"name": name, "displayName": "Flow", "url": hosted.url(path),
                                                         "authToken": TOKEN}, status=201)
    tools = [{"name": t["name"], "requiresApproval": (approval or {}).get(t["name"], False)}
             for t in endpoint["snapshot"]["tools"]]
    return user.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}",
                   {"expectedVersion": endpoint["version"], "tools": tools})


def call(user: Caller, endpoint_id: str, tool: str, arguments: dict[str, Any], call_id: str | None = None,
         approval_id: str | None = None) -> tuple[int, Any]:
    body: dict[str, Any] = {"toolName": tool, "arguments": arguments,
                            "clientCallId": call_id or uuid.uuid4().hex[:16]}
    if approval_id is not None:
        body["approvalId"] = approval_id
    return user.call("POST", f"/rpc/hosted-endpoints/{endpoint_id}/calls", body)


def code(answer: tuple[int, Any]) -> tuple[int, str]:
    return answer[0], answer[1]["error"]["code"]


def test_the_skill_is_in_the_catalog_and_its_permission_is_per_operation(calls_stack: StackClient) -> None:
    user = _user(calls_stack)
    (item,) = [s for s in user.ok("GET", "/rpc/skills?limit=100")["items"] if s["skillId"] == "hosted-workflows"]
    assert item["kind"] == "tool"
    (permission,) = item["permissions"]
    assert (permission["code"], permission["riskLevel"], permission["approvalMode"]) == (
        "hosted_workflow:invoke", "L3", "per_operation")
    assert grant(user)["status"] == "active"


def test_a_call_is_forwarded_and_its_replay_calls_nothing(calls_stack: StackClient, hosted: HostedServer) -> None:
    user = _user(calls_stack)
    grant(user)
    endpoint = register(user, hosted)
    before = hosted.calls["add"]
    status, body = call(user, endpoint["endpointId"], "add", {"a": 2, "b": 40}, call_id="once-1")
    assert status == 200, body
    assert body["isError"] is False and body["content"] == "42" and body["structuredContent"] == {"result": 42}
    assert set(body) == {"callId", "isError", "content", "structuredContent", "durationMs"}
    assert hosted.calls["add"] == before + 1
    again = call(user, endpoint["endpointId"], "add", {"a": 2, "b": 40}, call_id="once-1")
    assert again == (200, body)
    assert hosted.calls["add"] == before + 1  # counted on the server: the replay reached nothing

    # two identical calls at once reach the server once and answer the same body
    answers = together(6, lambda _i: call(user, endpoint["endpointId"], "add", {"a": 1, "b": 1}, call_id="race-1"))
    assert hosted.calls["add"] == before + 2
    assert all(a == answers[0] for a in answers) and answers[0][0] == 200

    events = [e for e in user.ok("GET", "/rpc/skills/audit-events")["items"] if e["action"] == "hosted_endpoint.call"]
    # each call audited twice (before it is sent, then its outcome), the replays and the lost claims never
    assert [e["decision"] for e in events] == ["succeeded", "allowed", "succeeded", "allowed"]
    assert events[0]["targetId"] == events[1]["targetId"] == answers[0][1]["callId"]
    assert events[-1]["metadata"]["toolId"] == "add" and len(events[-1]["metadata"]["inputSha256"]) == 64
    text = json.dumps(events)
    assert '"a"' not in text and '"b"' not in text and '"42"' not in text and TOKEN not in text and "/mcp" not in text


def test_a_client_call_id_reused_for_another_call_is_409_and_calls_nothing(calls_stack: StackClient,
                                                                           hosted: HostedServer) -> None:
    user = _user(calls_stack)
    grant(user)
    endpoint_id = register(user, hosted)["endpointId"]
    before = dict(hosted.calls)
    first = call(user, endpoint_id, "add", {"a": 20, "b": 22}, call_id="reused-1")
    assert first[0] == 200 and first[1]["content"] == "42", first
    for tool, arguments in (("add", {"a": 1, "b": 1}), ("echo", {"text": "hi"}), ("add", {"a": 20})):
        status, body = call(user, endpoint_id, tool, arguments, call_id="reused-1")
        assert (status, body["error"]["code"]) == (409, "idempotency_key_reused"), body
        text = json.dumps(body)
        assert first[1]["callId"] not in text and "42" not in text  # the first call's result is not shown
    # the same arguments still replay the first answer; the endpoint saw one call in all
    assert call(user, endpoint_id, "add", {"b": 22, "a": 20}, call_id="reused-1") == first
    assert hosted.calls["add"] == before.get("add", 0) + 1 and hosted.calls["echo"] == before.get("echo", 0)
    events = [e for e in user.ok("GET", "/rpc/skills/audit-events")["items"] if e["action"] == "hosted_endpoint.call"]
    assert [e["decision"] for e in events] == ["succeeded", "allowed"]


def test_a_call_sends_the_pinned_tools_call_and_never_lists_the_live_tools(calls_stack: StackClient,
                                                                          hosted: HostedServer) -> None:
    """A proxied call is initialize, its notification and tools/call: no tools/list, whose live answer (the SDK's
    Client.call_tool would fetch it to check the output) is what a rug pull controls and the snapshot never saw."""
    user = _user(calls_stack)
    grant(user)
    endpoint = register(user, hosted)
    before = hosted.methods
    status, body = call(user, endpoint["endpointId"], "add", {"a": 5, "b": 6})
    assert status == 200 and body["content"] == "11" and body["structuredContent"] == {"result": 11}, body
    assert hosted.methods - before == {"initialize": 1, "notifications/initialized": 1, "tools/call": 1}


def test_tools_call_waits_for_the_go_and_is_never_sent_without_it(hosted: HostedServer) -> None:
    """egress.mcp_session.call_tool's `ready` (the proxy's claim, written while the session opens): the session
    opens at once, tools/call leaves only after a True go, a False go closes the session having sent none of
    the call, and a go that never comes is cut at the deadline."""
    from concurrent.futures import Future

    from skillcore.egress import mcp_session
    from skillcore.egress.client import EgressLimits
    from skillcore.egress.errors import UpstreamTimeout
    from skillcore.egress.settings import EgressSettings

    settings = EgressSettings.from_env({**hosted.settings_env(), "SKILLS_LOCAL": "1"})
    go: Future[bool] = Future()
    seen: list[Any] = []

    def later() -> None:
        deadline = time.monotonic() + 10
        while hosted.methods["notifications/initialized"] == before["notifications/initialized"]:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.2)
        seen.append(hosted.methods - before)  # the session is open, the call not sent
        go.set_result(True)

    before = hosted.methods
    giver = threading.Thread(target=later)
    giver.start()
    result = mcp_session.call_tool(hosted.url(), TOKEN, settings, "add", {"a": 20, "b": 22}, ready=go)
    giver.join()
    assert result is not None and result["structuredContent"] == {"result": 42}
    assert seen == [{"initialize": 1, "notifications/initialized": 1}]
    assert hosted.methods - before == {"initialize": 1, "notifications/initialized": 1, "tools/call": 1}

    never: Future[bool] = Future()
    before, started = hosted.methods, time.monotonic()
    with pytest.raises(UpstreamTimeout):
        mcp_session.call_tool(hosted.url(), TOKEN, settings, "add", {"a": 1, "b": 1}, ready=never,
                              limits=EgressLimits(deadline_seconds=1.0))
    assert 1.0 <= time.monotonic() - started < 3.0
    assert hosted.methods - before == {"initialize": 1, "notifications/initialized": 1}
    assert not never.cancelled()  # the deadline leaves the caller's go alone: its claim may still commit

    # last: a notification still in flight when this session closes may reach the server after the count
    refused: Future[bool] = Future()
    refused.set_result(False)
    before = hosted.methods
    assert mcp_session.call_tool(hosted.url(), TOKEN, settings, "add", {"a": 1, "b": 1}, ready=refused) is None
    # the session closes as soon as initialize is answered: the client's `initialized` notification, sent after
    # the answer, may be cut off by the close or still be counted, and nothing else ever reaches the server
    sent = hosted.methods - before
    assert sent["initialize"] == 1 and set(sent) <= {"initialize", "notifications/initialized"}, sent


def test_refusals_in_the_contract_order(calls_stack: StackClient, hosted: HostedServer) -> None:
    user = _user(calls_stack)
    endpoint = register(user, hosted)
    endpoint_id = endpoint["endpointId"]
    refused = call(user, endpoint_id, "nope", {"x": 1})
    assert code(refused) == (422, "permission_required")
    assert refused[1]["error"]["details"]["permissionCode"] == "hosted_workflow:invoke"
    grant(user)
    # another user's endpoint is 404, even with the grant
    stranger = _user(calls_stack)
    grant(stranger)
    assert call(stranger, endpoint_id, "add", {"a": 1, "b": 2})[0] == 404
    assert code(call(user, endpoint_id, "nope", {"x": 1})) == (422, "unknown_tool")
    status, invalid = call(user, endpoint_id, "add", {"a": "forty-two-secret", "c": 5})
    assert (status, invalid["error"]["code"]) == (422, "validation_error")
    errors = invalid["error"]["details"]["errors"]
    assert {"path": "$.a", "keyword": "type"} in errors and {"path": "$", "keyword": "required"} in errors
    assert "forty-two-secret" not in json.dumps(invalid)
    disabled = user.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint_id}",
                       {"expectedVersion": endpoint["version"], "status": "disabled"})
    assert code(call(user, endpoint_id, "nope", {"x": 1})) == (409, "endpoint_disabled")
    active = user.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint_id}", {
        "expectedVersion": disabled["version"], "status": "active", "tools": [{"name": "echo", "enabled": False}]})
    assert active["status"] == "active"
    status, off = call(user, endpoint_id, "echo", {"text": "hi"})
    assert (status, off["error"]["code"], off["error"]["details"]) == (409, "tool_drifted",
                                                                       {"toolName": "echo", "reason": "disabled"})
    reasons = [e["reason"] for e in user.ok("GET", "/rpc/skills/audit-events")["items"]
               if e["action"] == "hosted_endpoint.call"]
    assert reasons == ["tool_drifted", "endpoint_disabled", "validation_error", "unknown_tool", "permission_required"]


def test_approval_required_then_approved_then_used_once(calls_stack: StackClient, hosted: HostedServer) -> None:
    user = _user(calls_stack)
    grant(user)
    endpoint = register(user, hosted, approval={"echo": True})
    endpoint_id = endpoint["endpointId"]
    before = hosted.calls["echo"]
    asked = call(user, endpoint_id, "echo", {"text": "publish me"}, call_id="ap-1")
    assert code(asked) == (409, "approval_required")
    approval_id = asked[1]["error"]["details"]["approvalId"]
    (pending,) = user.ok("GET", "/rpc/approvals?status=pending")["items"]
    assert pending["approvalId"] == approval_id and pending["toolName"] == "echo"
    assert user.ok("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"})["status"] == "approved"
    status, body = call(user, endpoint_id, "echo", {"text": "publish me"}, call_id="ap-1", approval_id=approval_id)
    assert status == 200, body
    assert body["content"] == "echo: publish me"
    assert hosted.calls["echo"] == before + 1
    assert user.ok("GET", "/rpc/approvals?status=used")["items"][0]["approvalId"] == approval_id
    # reusing it for another call is refused, and asks again
    reused = call(user, endpoint_id, "echo", {"text": "publish me"}, call_id="ap-2", approval_id=approval_id)
    assert code(reused) == (409, "approval_required")
    assert reused[1]["error"]["details"]["approvalId"] != approval_id
    assert hosted.calls["echo"] == before + 1


def _decided(user: Caller, hosted: HostedServer, arguments: dict[str, Any], call_id: str,
             decision: str) -> tuple[str, str]:
    """A granted user's endpoint whose echo needs approval, and the approval its call asked for, decided:
    (endpoint id, approval id)."""
    grant(user)
    endpoint_id = register(user, hosted, approval={"echo": True})["endpointId"]
    approval_id = call(user, endpoint_id, "echo", arguments, call_id=call_id)[1]["error"]["details"]["approvalId"]
    status = {"approve": "approved", "deny": "denied"}[decision]
    assert user.ok("POST", f"/rpc/approvals/{approval_id}", {"decision": decision})["status"] == status
    return endpoint_id, approval_id


def test_one_approval_used_by_concurrent_calls_opens_exactly_one(calls_stack: StackClient,
                                                                  hosted: HostedServer) -> None:
    """Each call's claim uses the approval in one transaction: only the call whose transaction won sends
    tools/call, the others send nothing and are asked for approval again."""
    user = _user(calls_stack)
    before = hosted.calls["echo"]
    endpoint_id, approval_id = _decided(user, hosted, {"text": "once"}, "one-0", "approve")
    answers = together(6, lambda i: call(user, endpoint_id, "echo", {"text": "once"}, call_id=f"one-{i}",
                                         approval_id=approval_id))
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200, 409, 409, 409, 409, 409], answers
    assert {body["error"]["code"] for status, body in answers if status == 409} == {"approval_required"}
    assert hosted.calls["echo"] == before + 1


def test_a_denied_approval_does_not_open_the_call(calls_stack: StackClient, hosted: HostedServer) -> None:
    user = _user(calls_stack)
    before = hosted.calls["echo"]
    endpoint_id, approval_id = _decided(user, hosted, {"text": "no"}, "dn-1", "deny")
    denied = call(user, endpoint_id, "echo", {"text": "no"}, call_id="dn-1", approval_id=approval_id)
    assert code(denied) == (409, "approval_required")
    assert hosted.calls["echo"] == before


@pytest.mark.parametrize(("tool", "arguments", "status", "error", "reason"), [
    ("slow", {"text": "late"}, 504, "upstream_timeout", None),
    ("redirect_me", {}, 502, "upstream_error", "redirect"),
    ("fail_500", {}, 502, "upstream_error", "protocol"),
    ("huge", {}, 502, "upstream_error", "too_large"),
])
def test_upstream_failures(calls_stack: StackClient, hosted: HostedServer, tool: str, arguments: dict[str, Any],
                           status: int, error: str, reason: str | None) -> None:
    user = _user(calls_stack)
    grant(user)
    endpoint_id = register(user, hosted, path="/behaviours/mcp", name="behaviours")["endpointId"]
    started = time.monotonic()
    answer = call(user, endpoint_id, tool, arguments, call_id=f"up-{tool}")
    elapsed = time.monotonic() - started
    assert code(answer) == (status, error), answer
    if reason is not None:
        assert answer[1]["error"]["details"]["reason"] == reason
    if tool == "slow":
        assert DEADLINE <= elapsed < SLOW_SECONDS
    # stored: the same clientCallId answers the same error and sends nothing again
    received = hosted.calls[tool]
    assert call(user, endpoint_id, tool, arguments, call_id=f"up-{tool}") == answer
    assert hosted.calls[tool] == received
    event, sent = [e for e in user.ok("GET", "/rpc/skills/audit-events")["items"]
                   if e["action"] == "hosted_endpoint.call"]
    assert (event["decision"], event["metadata"]["errorCode"]) == ("failed", error)
    assert sent["decision"] == "allowed" and sent["targetId"] == event["targetId"]


def test_a_tool_error_is_an_answer_with_is_error(calls_stack: StackClient, hosted: HostedServer) -> None:
    user = _user(calls_stack)
    grant(user)
    endpoint_id = register(user, hosted, path="/behaviours/mcp", name="behaviours")["endpointId"]
    status, body = call(user, endpoint_id, "tool_error", {"text": "abc"})
    assert status == 200, body
    assert body["isError"] is True and "the tool failed on abc" in body["content"]


def test_the_logs_never_show_the_url_path_or_the_token(calls_stack: StackClient, hosted: HostedServer,
                                                       capfd: pytest.CaptureFixture[str]) -> None:
    records = io.StringIO()
    handler = logging.StreamHandler(records)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        user = _user(calls_stack)
        grant(user)
        endpoint = register(user, hosted, path="/behaviours/mcp", name="logged")
        for tool, arguments in (("tool_error", {"text": "x"}), ("fail_500", {}), ("redirect_me", {})):
            call(user, endpoint["endpointId"], tool, arguments)
        call(user, endpoint["endpointId"], "nope", {})
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    out, err = capfd.readouterr()
    said = out + err + records.getvalue()
    assert "/calls" in said  # the access log is on: the capture saw the stack speak
    # The URL's path stands for a Dify URL's key (which rides in the path).
    for secret in (TOKEN, "/behaviours", "behaviours/mcp"):
        assert secret not in said, secret


def test_the_mcp_face_calls_the_same_service(calls_stack: StackClient, hosted: HostedServer) -> None:
    """call_hosted_tool with the official MCP client: the same checks, errors as isError with the envelope, the
    same replay and audit as the route."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    user = _user(calls_stack)
    endpoint = register(user, hosted, approval={"echo": True})
    endpoint_id = endpoint["endpointId"]
    before = dict(hosted.calls)

    async def flow() -> list[Any]:
        http_client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {user.auth}"}, timeout=30)
        async with Client(streamable_http_client(f"{calls_stack.url}/mcp", http_client=http_client),
                          mode="legacy") as client:
            answers = [await client.call_tool("call_hosted_tool", {
                "endpointId": endpoint_id, "toolName": "add", "arguments": {"a": 1, "b": 2}, "clientCallId": "m-1"})]
            grant(user)
            for arguments in (
                {"endpointId": endpoint_id, "toolName": "add", "arguments": {"a": 1, "b": 2}, "clientCallId": "m-1"},
                {"endpointId": endpoint_id, "toolName": "add", "arguments": {"a": 1, "b": 2}, "clientCallId": "m-1"},
                {"endpointId": endpoint_id, "toolName": "add", "arguments": {"a": 2, "b": 2}, "clientCallId": "m-1"},
                {"endpointId": endpoint_id, "toolName": "add", "arguments": {"a": "x"}, "clientCallId": "m-2"},
                {"endpointId": endpoint_id, "toolName": "echo", "arguments": {"text": "hi"}, "clientCallId": "m-3"},
                {"endpointId": "someone-elses", "toolName": "add", "arguments": {}, "clientCallId": "m-4"},
                {"endpointId": endpoint_id, "toolName": "add", "arguments": {}, "clientCallId": "bad id!"},
            ):
                answers.append(await client.call_tool("call_hosted_tool", arguments))
            return answers

    refused, added, replayed, reused, invalid, asked, missing, malformed = anyio.run(flow)
    assert refused.is_error and refused.structured_content["error"]["code"] == "permission_required"
    assert added.is_error is False
    assert added.structured_content["content"] == "3" and added.structured_content["isError"] is False
    assert replayed.structured_content == added.structured_content
    assert reused.is_error and reused.structured_content["error"]["code"] == "idempotency_key_reused"
    assert hosted.calls["add"] == before.get("add", 0) + 1
    assert invalid.is_error and invalid.structured_content["error"]["code"] == "validation_error"
    assert {"path": "$.a", "keyword": "type"} in invalid.structured_content["error"]["details"]["errors"]
    assert asked.is_error and asked.structured_content["error"]["code"] == "approval_required"
    approval_id = asked.structured_content["error"]["details"]["approvalId"]
    assert [a["approvalId"] for a in user.ok("GET", "/rpc/approvals?status=pending")["items"]] == [approval_id]
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
    assert malformed.is_error and malformed.structured_content["error"]["code"] == "validation_error"
    reasons = [(e["decision"], e["reason"]) for e in user.ok("GET", "/rpc/skills/audit-events")["items"]
               if e["action"] == "hosted_endpoint.call"]
    assert reasons == [("denied", "approval_required"), ("denied", "validation_error"), ("succeeded", "succeeded"),
                       ("allowed", "allowed"), ("denied", "permission_required")]
