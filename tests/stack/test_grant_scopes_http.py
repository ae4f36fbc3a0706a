"""Finer scopes over real HTTP (docs/contract.md "Finer scopes"): a grant narrowed to one agent, to an argument's
maximum or length, to one hosted endpoint and some of its tools; PolicyGate denies what is outside it with 403
`grant_scope_mismatch` (a chat turn: a denied run and its notice), another user's agent or endpoint is refused as
if it did not exist, and the audit holds codes and ids only. The DynamoDB requests of a hosted call are counted:
narrowing adds none."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from skillcore.clock import to_api_time
from skillcore.db.dynamo import Db
from skillcore.egress.settings import EgressSettings
from skillcore.errors import DomainError
from skillcore.hosted import calls, secrets
from skillcore.hosted import service as hosted_service
from skillcore.policy import grant_store
from skillcore.policy.grants import GrantScope
from skillcore.policy.scopes import ArgumentConstraint, Narrowing, ResourceKind, ScopeResource
from skillcore.settings import Settings
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS
from skillcore_local.ddb_local import client as ddb_client
from tests.hosted_server import HostedServer

from .conftest import Caller, LocalTables, StackClient
from .test_hosted_calls_service import TOOLS, Counting, Endpoint

pytestmark = pytest.mark.stack

TOKEN = "tok-scopes-5521"
SECRET = "secret-value-9931"


def grant(user: Caller, skill: str, code: str, scope: dict[str, Any], granted: bool = True) -> tuple[int, Any]:
    return user.call("PATCH", "/rpc/skills/permissions",
                     {"skillId": skill, "permissionCode": code, "scope": scope, "granted": granted})


def recall_grant(user: Caller, **scope: Any) -> dict[str, Any]:
    status, body = grant(user, "memory-recall", "memory:read", {"type": "user", **scope})
    assert status == 200, body
    return body


def say(user: Caller, agent: dict[str, Any], text: str) -> dict[str, Any]:
    return user.ok("POST", f"/rpc/conversations/{agent['defaultConversationId']}/messages",
                   {"clientMessageId": uuid.uuid4().hex[:12], "text": text})


def audit(user: Caller, action: str) -> list[dict[str, Any]]:
    return [e for e in user.ok("GET", "/rpc/skills/audit-events?limit=100")["items"] if e["action"] == action]


def test_a_grant_narrowed_to_one_agent_and_a_length_covers_only_those_calls(stack: StackClient) -> None:
    alice = Caller(stack, "scopes")
    mika, other = alice.agent("Mika"), alice.agent("Other")
    for agent in (mika, other):
        alice.ok("POST", f"/rpc/agents/{agent['agentId']}/memories", {"title": "t", "content": f"I like tea {SECRET}"},
                 status=201)
    granted = recall_grant(alice, resources=[{"kind": "agent", "id": mika["agentId"]}],
                           arguments=[{"name": "question", "maxLength": 30}])
    assert granted["scope"] == {"type": "user", "resources": [{"kind": "agent", "id": mika["agentId"]}],
                                "arguments": [{"name": "question", "maxLength": 30}]}
    listed = alice.ok("GET", "/rpc/skills/permissions")["items"]
    assert [g["scope"] for g in listed if g["grantId"] == granted["grantId"]] == [granted["scope"]]

    allowed = say(alice, mika, "/memory-recall tea")
    assert allowed["run"]["outcome"] == "succeeded" and SECRET in allowed["reply"]["text"]
    outside = say(alice, other, "/memory-recall tea")  # agent B: outside the grant
    assert outside["run"]["outcome"] == "denied" and SECRET not in outside["reply"]["text"]
    assert "does not cover this use" in outside["reply"]["text"]
    too_long = say(alice, mika, "/memory-recall " + "tea and everything else I ever said")  # over 30 characters
    assert too_long["run"]["outcome"] == "denied" and SECRET not in too_long["reply"]["text"]

    # the audit: the grant with its narrowing as codes; each denial with what missed, the grant and no text
    (granted_event,) = audit(alice, "permission.grant")
    assert granted_event["metadata"]["scopeResources"] == [f"agent:{mika['agentId']}"]
    assert granted_event["metadata"]["scopeArguments"] == ["question:maxLength"]
    executed = audit(alice, "tool.execute")
    denied = [e for e in executed if e["decision"] == "denied"]
    assert [(e["reason"], e["metadata"]["scopeMismatch"], e["targetId"]) for e in denied] == [
        ("grant_scope_mismatch", "argument_max_length", mika["agentId"]),
        ("grant_scope_mismatch", "agent", other["agentId"])]
    assert denied[0]["metadata"]["scopeArgument"] == "question" and "scopeArgument" not in denied[1]["metadata"]
    assert all(e["metadata"]["matchedGrantIds"] == [granted["grantId"]] for e in denied)
    text = json.dumps(executed)
    assert SECRET not in text and "everything" not in text and "tea" not in text

    # granted again without a narrowing: unscoped, agent B is covered
    widened = recall_grant(alice)
    assert widened["scope"] == {"type": "user"} and widened["grantId"] == granted["grantId"]
    assert say(alice, other, "/memory-recall tea")["run"]["outcome"] == "succeeded"


def test_a_narrowing_is_checked_before_it_is_stored(stack: StackClient) -> None:
    alice, mallory = Caller(stack, "scopes"), Caller(stack, "mallory")
    mika, theirs = alice.agent("Mika"), mallory.agent("M")

    status, body = grant(alice, "memory-recall", "memory:read",
                         {"type": "user", "resources": [{"kind": "agent", "id": theirs["agentId"]}]})
    assert (status, body["error"]["code"]) == (404, "agent_not_found")  # another user's agent: as if it did not exist
    status, body = grant(alice, "memory-recall", "memory:read",
                         {"type": "user", "resources": [{"kind": "agent", "id": "no-such-agent"}]})
    assert (status, body["error"]["code"]) == (404, "agent_not_found")

    refusals = [
        ({"type": "user", "arguments": [{"name": "limit", "maximum": 3}]}, "scope.arguments[0].name"),
        ({"type": "user", "arguments": [{"name": "question", "maximum": 3}]}, "scope.arguments[0].maximum"),
        ({"type": "user", "arguments": [{"name": "question", "maxLength": 501}]}, "scope.arguments[0].maxLength"),
        ({"type": "user", "resources": [{"kind": "hosted_endpoint", "id": "E1"}]}, "scope.resources[0].kind"),
        ({"type": "agent", "agentId": mika["agentId"], "resources": [{"kind": "agent", "id": mika["agentId"]}]},
         "scope.resources[0].kind"),
    ]
    for scope, path in refusals:
        status, body = grant(alice, "memory-recall", "memory:read", scope)
        assert (status, body["error"]["code"]) == (422, "validation_error"), scope
        assert path in [e["path"] for e in body["error"]["details"]["errors"]], body
    for scope in ({"type": "user", "resources": [{"kind": "planet", "id": "x"}]},
                  {"type": "user", "arguments": [{"name": "question", "maxLength": 3, "maximum": 2}]}):
        status, body = grant(alice, "memory-recall", "memory:read", scope)
        assert (status, body["error"]["code"]) == (422, "validation_error"), scope
    # a revoke names the grant; it carries no narrowing
    status, body = grant(alice, "memory-recall", "memory:read",
                         {"type": "user", "resources": [{"kind": "agent", "id": mika["agentId"]}]}, granted=False)
    assert (status, body["error"]["code"]) == (422, "validation_error")
    # memory-context has no tool: no argument to constrain
    status, body = grant(alice, "memory-context", "memory:read",
                         {"type": "user", "arguments": [{"name": "question", "maxLength": 3}]})
    assert (status, body["error"]["code"]) == (422, "validation_error")
    assert [g for g in alice.ok("GET", "/rpc/skills/permissions")["items"]] == []  # nothing was stored
    assert audit(alice, "permission.grant") == []


def test_a_background_job_for_an_agent_outside_the_grant_is_refused(stack: StackClient) -> None:
    alice = Caller(stack, "scopes")
    mika, other = alice.agent("Mika"), alice.agent("Other")
    status, granted = grant(alice, "goal-check-in-reminder", "proactive_message:write",
                            {"type": "user", "resources": [{"kind": "agent", "id": mika["agentId"]}]})
    assert status == 200
    run_at = to_api_time(datetime.now(UTC) + timedelta(minutes=5))
    body = {"skillId": "goal-check-in-reminder", "runAt": run_at, "note": SECRET}
    status, refused = alice.call("POST", "/rpc/skills/background-jobs", {**body, "agentId": other["agentId"]})
    assert status == 403 and refused["error"]["code"] == "grant_scope_mismatch"
    assert refused["error"]["details"] == {"skillId": "goal-check-in-reminder",
                                           "permissionCode": "proactive_message:write",
                                           "grantId": granted["grantId"], "mismatch": "agent"}
    alice.ok("POST", "/rpc/skills/background-jobs", {**body, "agentId": mika["agentId"]}, status=201)
    created = audit(alice, "background.create")
    assert [(e["decision"], e["reason"]) for e in created] == [("allowed", "allowed"),
                                                              ("denied", "grant_scope_mismatch")]
    assert created[1]["metadata"]["scopeMismatch"] == "agent" and SECRET not in json.dumps(created)


# -- hosted endpoints: the real MCP server of tests/hosted_server.py ----------------------------------------

def register(user: Caller, hosted: HostedServer, name: str) -> dict[str, Any]:
    endpoint = user.ok("POST", "/rpc/hosted-endpoints", {"name": name, "displayName": name, "url": hosted.url("/mcp"),
                                                         "authToken": TOKEN}, status=201)
    tools = [{"name": t["name"], "requiresApproval": False} for t in endpoint["snapshot"]["tools"]]
    return user.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}",
                   {"expectedVersion": endpoint["version"], "tools": tools})


def hosted_call(user: Caller, endpoint: dict[str, Any], tool: str, arguments: dict[str, Any]) -> tuple[int, Any]:
    return user.call("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/calls",
                     {"toolName": tool, "arguments": arguments, "clientCallId": uuid.uuid4().hex[:16]})


def test_a_grant_narrowed_to_one_endpoint_a_tool_and_a_maximum(hosted_stack: StackClient, hosted: HostedServer) -> None:
    alice, mallory = Caller(hosted_stack, "scopes"), Caller(hosted_stack, "mallory")
    flow, spare = register(alice, hosted, "flow"), register(alice, hosted, "spare")
    theirs = register(mallory, hosted, "flow")
    code = "hosted_workflow:invoke"

    status, body = grant(alice, "hosted-workflows", code,
                         {"type": "user", "resources": [{"kind": "hosted_endpoint", "id": theirs["endpointId"]}]})
    assert (status, body["error"]["code"]) == (404, "not_found")  # another user's endpoint
    status, body = grant(alice, "hosted-workflows", code, {"type": "user", "resources": [
        {"kind": "hosted_endpoint", "id": flow["endpointId"], "tools": ["add", "nope"]}]})
    assert status == 422 and body["error"]["details"]["errors"][0]["path"] == "scope.resources[0].tools[1]"
    status, body = grant(alice, "hosted-workflows", code, {
        "type": "user", "resources": [{"kind": "hosted_endpoint", "id": flow["endpointId"], "tools": ["add"]}],
        "arguments": [{"tool": "add", "name": "c", "maximum": 10}]})
    assert status == 422 and body["error"]["details"]["errors"][0]["path"] == "scope.arguments[0].name"
    status, body = grant(alice, "hosted-workflows", code, {
        "type": "user", "resources": [{"kind": "hosted_endpoint", "id": flow["endpointId"], "tools": ["add"]}],
        "arguments": [{"tool": "add", "name": "a", "enum": ["ten"]}]})
    assert status == 422 and body["error"]["details"]["errors"][0]["path"] == "scope.arguments[0].enum[0]"

    status, granted = grant(alice, "hosted-workflows", code, {
        "type": "user", "resources": [{"kind": "hosted_endpoint", "id": flow["endpointId"], "tools": ["add"]}],
        "arguments": [{"tool": "add", "name": "a", "maximum": 10}]})
    assert status == 200, granted
    assert granted["scope"]["arguments"] == [{"name": "a", "tool": "add", "maximum": 10}]

    before = hosted.calls["add"]
    status, answer = hosted_call(alice, flow, "add", {"a": 10, "b": 5})
    assert status == 200 and answer["content"] == "15"
    expected = {"add a=11": (flow, "add", {"a": 11, "b": 1}, "argument_maximum"),
                "echo": (flow, "echo", {"text": SECRET}, "tool"),
                "spare": (spare, "add", {"a": 1, "b": 1}, "endpoint")}
    for label, (endpoint, tool, arguments, mismatch) in expected.items():
        status, refused = hosted_call(alice, endpoint, tool, arguments)
        assert (status, refused["error"]["code"]) == (403, "grant_scope_mismatch"), label
        assert refused["error"]["details"]["mismatch"] == mismatch, label
        assert refused["error"]["details"]["grantId"] == granted["grantId"]
    assert hosted.calls["add"] == before + 1  # nothing outside the grant reached the server

    events = audit(alice, "hosted_endpoint.call")
    denied = [e for e in events if e["decision"] == "denied"]
    assert [(e["metadata"]["scopeMismatch"], e["metadata"]["endpointId"]) for e in denied] == [
        ("endpoint", spare["endpointId"]), ("tool", flow["endpointId"]), ("argument_maximum", flow["endpointId"])]
    assert denied[2]["metadata"]["scopeArgument"] == "a" and denied[2]["reason"] == "grant_scope_mismatch"
    assert all(e["metadata"]["matchedGrantIds"] == [granted["grantId"]] for e in denied)
    assert SECRET not in json.dumps(events) and '"11"' not in json.dumps(events)


# -- the DynamoDB requests of a hosted call under a narrowed grant ------------------------------------------

@pytest.fixture
def world(ddb_local: LocalTables, tmp_path: Path) -> Iterator[tuple[hosted_service.HostedDeps, Endpoint, Counting]]:
    settings = Settings.from_env(ddb_local.env)
    counting = Counting(ddb_client(ddb_local.endpoint))
    endpoint = Endpoint()
    deps = hosted_service.HostedDeps(
        db=Db(client=counting, tables=settings.tables), keys=secrets.LocalKeyFile(tmp_path / "key"),
        egress=EgressSettings(allowed_domains=("mcp.test",)), skill=HOSTED_WORKFLOWS,
        list_tools=lambda url, token, egress: TOOLS, call_tool=endpoint)
    yield deps, endpoint, counting


def test_narrowing_adds_no_request_to_a_call(world) -> None:
    deps, endpoint, counting = world
    user, now = f"scopes-{uuid.uuid4().hex[:10]}", datetime.now(UTC)
    registered = hosted_service.register(deps, user, name="flow_one", display_name="Flow",
                                         url="https://api.mcp.test/mcp/k-1", token="tok-1", now=now)
    endpoint_id = hosted_service.update(deps, user, registered.endpoint_id, expected_version=1, display_name=None,
                                        status=None, tools=[hosted_service.ToolChange(name="publish", requires_approval=False),
                                                            hosted_service.ToolChange(name="lookup", requires_approval=False)],
                                        now=now).endpoint_id
    narrowing = Narrowing(resources=(ScopeResource(kind=ResourceKind.HOSTED_ENDPOINT, id=endpoint_id, tools=("publish",)),),
                          arguments=(ArgumentConstraint(name="title", tool="publish", max_length=8),))
    grant_store.set_grant(deps.db, user_id=user, skill_id=HOSTED_WORKFLOWS.skill_id,
                          skill_version=HOSTED_WORKFLOWS.version, code="hosted_workflow:invoke",
                          scope=GrantScope.user(), granted=True, grant_id=uuid.uuid4().hex, now=now, narrowing=narrowing)

    def run(tool: str, title: str, call_id: str) -> Any:
        return calls.call(deps, user, endpoint_id, tool_name=tool, arguments={"title": title} if tool == "publish"
                          else {"q": title}, client_call_id=call_id, approval_id=None, now=datetime.now(UTC))

    counting.counts.clear()
    assert run("publish", "short", "c1").is_error is False
    # as an unscoped grant's call (tests/stack/test_hosted_calls_service.py): the read, the claim, the completion
    assert counting.counts == {"batch_get_item": 1, "transact_write_items": 1, "batch_write_item": 1}
    for tool, title in (("publish", "far too long a title"), ("lookup", "x")):
        counting.counts.clear()
        with pytest.raises(DomainError) as refused:
            run(tool, title, uuid.uuid4().hex[:8])
        assert refused.value.code == "grant_scope_mismatch"
        assert counting.counts == {"batch_get_item": 1, "put_item": 1}  # the read and the refusal's audit
    assert endpoint.calls == {"publish": 1}


def test_the_mcp_face_recall_outside_the_grant_is_refused_with_its_code(stack: StackClient) -> None:
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    alice = Caller(stack, "scopes")
    mika, other = alice.agent("Mika"), alice.agent("Other")
    granted = recall_grant(alice, resources=[{"kind": "agent", "id": mika["agentId"]}],
                           arguments=[{"name": "question", "enum": ["tea", "coffee"]}])

    async def flow() -> list[Any]:
        http_client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {alice.auth}"}, timeout=30)
        async with Client(streamable_http_client(f"{stack.url}/mcp", http_client=http_client)) as client:
            return [await client.call_tool("memory_recall", {"agentId": agent["agentId"], "question": question})
                    for agent, question in ((mika, "tea"), (other, "tea"), (mika, SECRET))]

    within, other_agent, other_value = anyio.run(flow)
    assert within.is_error is False
    for answer, mismatch in ((other_agent, "agent"), (other_value, "argument_enum")):
        assert answer.is_error is True
        error = answer.structured_content["error"]
        assert error["code"] == "grant_scope_mismatch" and error["details"]["mismatch"] == mismatch
        assert error["details"]["grantId"] == granted["grantId"] and SECRET not in str(error)
    denied = [e for e in audit(alice, "tool.execute") if e["decision"] == "denied"]
    assert [e["metadata"]["scopeMismatch"] for e in denied] == ["argument_enum", "agent"]
    assert SECRET not in json.dumps(denied)
