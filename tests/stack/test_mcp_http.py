"""The MCP face over real HTTP (docs/contract.md "The MCP face"): the official MCP client (the `mcp` SDK's Client over
Streamable HTTP) against the local gateway, with a local token, the way an agent host connects."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import Caller, StackClient

pytestmark = pytest.mark.stack

EXPECTED_TOOLS = {"list_capabilities", "get_capability_protocol", "start_create", "generate_draft", "confirm_draft",
                  "memory_recall", "schedule_goal_check_in", "call_hosted_tool"}
GOAL = "Write down what was done today"
DESCRIPTION = "\n".join([
    "name: evening_notes", "display name: Evening notes", "when to use: end of day, wrap up", f"goal: {GOAL}",
    "steps: 1. memory-recall: Recall what the user worked on 2. use tool journal on laptop: Append the summary",
    "done when: The summary is in the journal",
])
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def binding(name: str) -> dict[str, Any]:
    return {"name": name, "hostProfile": "laptop", "mcpServerId": "notes", "mcpToolName": "append",
            "inputSchema": SCHEMA}


class Host(Caller):
    prefix = "mcp"

    def grant(self, skill: str, code: str, granted: bool = True) -> None:
        self.ok("PATCH", "/rpc/skills/permissions",
                {"skillId": skill, "permissionCode": code, "scope": {"type": "user"}, "granted": granted})

    def audit(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/skills/audit-events?limit=100")["items"]

    def session(self, mode: str = "legacy", token: str | None = None) -> Client:
        http_client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token or self.auth}"}, timeout=30)
        return Client(streamable_http_client(f"{self.stack.url}/mcp", http_client=http_client), mode=mode)


def run(flow: Any) -> Any:
    return anyio.run(flow)


@pytest.fixture
def host(stack: StackClient) -> Host:
    return Host(stack)


def test_initialize_list_tools_recall_under_the_grant_and_refused_without_it(host: Host) -> None:
    agent = host.agent()
    host.ok("POST", f"/rpc/agents/{agent['agentId']}/memories",
            {"title": "coffee", "content": "Alice likes oat milk flat whites", "importance": 4}, status=201)

    async def flow() -> tuple[Any, ...]:
        async with host.session() as client:
            info = (client.server_info, client.protocol_version, client.server_capabilities)
            tools = await client.list_tools()
            refused = await client.call_tool("memory_recall", {"agentId": agent["agentId"], "question": "coffee"})
            host.grant("memory-recall", "memory:read")
            recalled = await client.call_tool("memory_recall", {"agentId": agent["agentId"], "question": "coffee"})
            return info, tools, refused, recalled

    info, tools, refused, recalled = run(flow)
    server_info, protocol_version, capabilities = info
    assert server_info is not None and server_info.name == "skillcore"
    assert protocol_version.startswith("20") and capabilities.tools is not None
    listed = {t.name: t for t in tools.tools}
    assert set(listed) == EXPECTED_TOOLS
    assert listed["memory_recall"].input_schema["required"] == ["agentId", "question"]
    assert "additionalProperties" in listed["memory_recall"].input_schema

    assert refused.is_error is True
    assert refused.structured_content["error"]["code"] == "permission_required"
    assert refused.structured_content["error"]["details"]["missingPermissions"] == ["memory:read"]

    assert recalled.is_error is False
    memories = recalled.structured_content["memories"]
    assert [m["content"] for m in memories] == ["Alice likes oat milk flat whites"]
    assert recalled.structured_content["browsed"] is False

    # The same audit as a chat turn's tool call: the denial, then the decision and the result.
    tool_events = [e for e in host.audit() if e["action"] == "tool.execute"]
    assert sorted(e["decision"] for e in tool_events) == ["allowed", "denied", "succeeded"]


def test_schedule_a_check_in_with_the_grant_and_the_same_errors_as_http(host: Host) -> None:
    agent = host.agent()
    run_at = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0).isoformat()
    arguments = {"agentId": agent["agentId"], "runAt": run_at, "note": "ship the MCP face"}

    async def flow() -> tuple[Any, ...]:
        async with host.session() as client:
            refused = await client.call_tool("schedule_goal_check_in", arguments)
            host.grant("goal-check-in-reminder", "proactive_message:write")
            created = await client.call_tool("schedule_goal_check_in", arguments)
            too_soon = await client.call_tool("schedule_goal_check_in", {**arguments, "runAt": datetime.now(UTC).isoformat()})
            naive = await client.call_tool("schedule_goal_check_in", {**arguments, "runAt": "2030-01-01T09:00:00"})
            stranger = await client.call_tool("schedule_goal_check_in", {**arguments, "agentId": "01NOTMINE"})
            extra = await client.call_tool("schedule_goal_check_in", {**arguments, "conversationId": "c1"})
            return refused, created, too_soon, naive, stranger, extra

    refused, created, too_soon, naive, stranger, extra = run(flow)
    assert refused.is_error and refused.structured_content["error"]["code"] == "permission_required"
    assert created.is_error is False
    job = created.structured_content
    assert job["status"] == "scheduled" and job["agentId"] == agent["agentId"] and job["note"] == "ship the MCP face"
    assert job["conversationId"] == agent["defaultConversationId"]
    listed = host.ok("GET", "/rpc/skills/background-jobs")["items"]
    assert [j["jobId"] for j in listed] == [job["jobId"]]
    assert too_soon.structured_content["error"]["code"] == "run_at_out_of_range"
    assert naive.structured_content["error"]["code"] == "validation_error"
    assert stranger.structured_content["error"]["code"] == "agent_not_found"
    assert extra.structured_content["error"]["code"] == "validation_error"
    assert all(r.is_error for r in (too_soon, naive, stranger, extra))


def test_the_user_is_the_token_subject_never_an_argument(host: Host, stack: StackClient) -> None:
    agent = host.agent()
    host.grant("memory-recall", "memory:read")
    other = Host(stack)

    async def flow() -> Any:
        async with other.session() as client:
            return await client.call_tool("memory_recall", {"agentId": agent["agentId"], "question": "x",
                                                            "userId": host.user})

    assert run(flow).structured_content["error"]["code"] == "validation_error"

    async def plain() -> Any:
        async with other.session() as client:
            return await client.call_tool("memory_recall", {"agentId": agent["agentId"], "question": "x"})

    assert run(plain).structured_content["error"]["code"] == "agent_not_found"  # someone else's agent


def test_the_negotiating_client_mode_works_too(host: Host) -> None:
    async def flow() -> Any:
        async with host.session(mode="auto") as client:
            return await client.list_tools()

    assert {t.name for t in run(flow).tools} >= EXPECTED_TOOLS


def test_without_a_token_or_with_a_bad_one_it_is_401(host: Host, stack: StackClient) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    status, payload = stack.call("POST", "/mcp", body, headers=headers)
    assert status == 401 and payload["error"]["code"] == "unauthenticated"
    status, _ = stack.call("POST", "/mcp", body, token=stack.token(host.user, secret="x" * 40), headers=headers)
    assert status == 401

    async def flow() -> None:
        async with host.session(token="not-a-jwt-" + uuid.uuid4().hex) as client:
            await client.list_tools()

    with pytest.raises(BaseException):  # noqa: B017, PT011 - the client surfaces a 401 as its own error group
        run(flow)


def test_create_a_capability_by_conversation_and_read_its_protocol(host: Host, stack: StackClient) -> None:
    other = Host(stack)

    async def create() -> tuple[Any, ...]:
        async with host.session() as client:
            catalog = await client.call_tool("list_capabilities", {})
            started = await client.call_tool("start_create", {"description": DESCRIPTION})
            draft = started.structured_content
            answers = [{"gapId": gap["gapId"], "binding": binding("journal")} for gap in draft["gaps"]]
            ready = await client.call_tool("generate_draft", {"draftId": draft["draftId"], "answers": answers})
            confirmed = await client.call_tool("confirm_draft", {"draftId": draft["draftId"],
                                                                 "revision": ready.structured_content["revision"]})
            return catalog, started, ready, confirmed

    catalog, started, ready, confirmed = run(create)
    assert catalog.is_error is False and catalog.structured_content["nextCursor"] is None
    assert catalog.structured_content == host.ok("GET", "/rpc/capabilities?limit=100")  # the route's body
    assert all(c["kind"] == "builtin" for c in catalog.structured_content["items"])
    assert started.is_error is False
    assert [g["kind"] for g in started.structured_content["gaps"]] == ["missing_binding"]
    assert ready.is_error is False and ready.structured_content["gaps"] == [] and ready.structured_content["revision"] == 2
    assert confirmed.is_error is False
    capability = confirmed.structured_content
    assert capability["status"] == "draft" and capability["capabilityId"] == "user:evening_notes"
    path = f"/rpc/user-capabilities/{capability['userCapabilityId']}"
    assert host.ok("GET", path) == capability

    # A binding no step uses, declared on the draft: the protocol must leave it out.
    change = host.ok("POST", f"{path}/tool-bindings", {**binding("spare"), "expectedVersion": capability["version"]},
                     status=201)

    async def read_draft() -> Any:
        async with host.session() as client:
            return await client.call_tool("get_capability_protocol", {"capabilityId": "user:evening_notes"})

    draft_protocol = run(read_draft)
    assert draft_protocol.is_error is True
    assert draft_protocol.structured_content["error"]["code"] == "capability_not_active"

    host.ok("POST", f"{path}/activate", {"expectedVersion": change["capabilityVersion"]})

    async def read() -> tuple[Any, ...]:
        async with host.session() as client:
            listed = await client.call_tool("list_capabilities", {})
            laptop = await client.call_tool("get_capability_protocol",
                                            {"capabilityId": "user:evening_notes", "hostProfile": "laptop"})
            desk = await client.call_tool("get_capability_protocol",
                                          {"capabilityId": "user:evening_notes", "hostProfile": "desk"})
            preview = await client.call_tool("get_capability_protocol",
                                             {"capabilityId": "user:evening_notes", "preview": True})
        async with other.session() as client:
            stranger = await client.call_tool("get_capability_protocol", {"capabilityId": "user:evening_notes"})
            theirs = await client.call_tool("list_capabilities", {})
        return listed, laptop, desk, preview, stranger, theirs

    listed, laptop, desk, preview, stranger, theirs = run(read)
    entries = {c["capabilityId"]: c for c in listed.structured_content["items"]}
    assert entries["user:evening_notes"]["kind"] == "user" and entries["user:evening_notes"]["displayName"] == "Evening notes"
    assert "user:evening_notes" not in {c["capabilityId"] for c in theirs.structured_content["items"]}

    assert laptop.is_error is False
    protocol = laptop.structured_content
    assert protocol["platformCapabilityIds"] == ["memory-recall"]
    assert [b["name"] for b in protocol["toolBindings"]] == ["journal"]  # not the unused "spare"
    assert protocol["missingBindings"] == []
    lines = protocol["markdown"].splitlines()
    assert "│ " + GOAL in lines and GOAL not in lines  # quoted, never a bare line
    label = next(i for i, line in enumerate(lines) if line.startswith("**目标**"))
    block = lines[label + 1:label + 5]
    assert block[0] == "" and block[1].startswith("```") and block[2] == "│ " + GOAL and block[3] == block[1][:3]
    assert "│ Recall what the user worked on" in lines and "│ Append the summary" in lines
    assert "│ The summary is in the journal" in lines
    assert "spare" not in protocol["markdown"]
    assert protocol == host.ok("GET", "/rpc/capabilities/protocol?capabilityId=user:evening_notes&hostProfile=laptop")

    assert desk.is_error is False
    assert desk.structured_content["toolBindings"] == [] and desk.structured_content["missingBindings"] == ["journal"]
    assert "配置缺失，停止执行：journal" in desk.structured_content["markdown"]

    assert preview.is_error and preview.structured_content["error"]["code"] == "validation_error"
    assert stranger.is_error and stranger.structured_content["error"]["code"] == "not_found"

    actions = [e["action"] for e in host.audit()]
    for action in ("user_capability.draft.start", "user_capability.draft.generate", "user_capability.draft.confirm",
                   "user_capability.create", "user_capability.activate"):
        assert action in actions
