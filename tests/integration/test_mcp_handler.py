"""McpFunction's handler with the sample events of events/mcp_*.json, DynamoDB emulated by moto: the SDK's
stateless Streamable HTTP exchange in one Lambda invocation, and the tools' checks, errors and audit."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.integration.test_capability_catalog import CATALOG, activate, protocol
from tests.integration.test_user_capabilities import BASE, call
from tests.support import FakeContext, invoke, load_event, load_function


@pytest.fixture
def fns(aws):
    return load_function("RpcFunction"), load_function("McpFunction")


def rpc_call(fn, event: dict[str, Any]) -> dict[str, Any]:
    """One MCP request through the handler: the JSON-RPC answer (a JSON response, never an SSE stream)."""
    response = fn.lambda_handler(event, FakeContext())
    assert response["statusCode"] == 200, response
    headers = {k.lower(): v for k, v in response["headers"].items()}
    assert headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in headers  # stateless: no session to come back to
    return json.loads(response["body"])


def tool_call(fn, name: str, *, user: str = "user-alice", **ids: str) -> dict[str, Any]:
    event = load_event(f"mcp_call_{name}.json", user=user, path_ids=ids)
    answer = rpc_call(fn, event)
    assert "error" not in answer, answer  # a tool's own error is a result with isError, not a protocol error
    return answer["result"]


def new_agent(rpc, user: str = "user-alice") -> dict[str, Any]:
    status, agent = invoke(rpc, load_event("rpc_create_agent.json", user=user, body={"name": "Mika"}))
    assert status == 201
    return agent


def grant(rpc, skill: str, code: str, user: str = "user-alice") -> None:
    body = {"skillId": skill, "permissionCode": code, "scope": {"type": "user"}, "granted": True}
    status, _ = invoke(rpc, load_event("rpc_patch_permission.json", user=user, body=body))
    assert status == 200


def test_initialize_and_list_tools_in_two_invocations_of_one_instance(fns):
    _, mcp = fns
    init = rpc_call(mcp, load_event("mcp_initialize.json"))["result"]
    assert init["serverInfo"]["name"] == "skillcore" and "tools" in init["capabilities"]
    assert init["protocolVersion"] == "2025-11-25"
    for _ in range(2):  # a second invocation runs a new session manager (one can only run once)
        tools = rpc_call(mcp, load_event("mcp_tools_list.json"))["result"]["tools"]
        assert {t["name"] for t in tools} == {"list_capabilities", "get_capability_protocol", "start_create",
                                              "generate_draft", "confirm_draft", "memory_recall",
                                              "schedule_goal_check_in", "call_hosted_tool"}
        recall = next(t for t in tools if t["name"] == "memory_recall")
        assert recall["inputSchema"]["properties"].keys() == {"agentId", "question"}
        assert recall["inputSchema"]["additionalProperties"] is False


def test_memory_recall_is_refused_without_the_grant_and_answers_with_it(fns):
    rpc, mcp = fns
    agent = new_agent(rpc)
    status, _ = invoke(rpc, load_event("rpc_create_memory.json", path_ids={"AGENT_ID": agent["agentId"]},
                                       body={"title": "Hobby", "content": "我喜欢爬山", "importance": 4}))
    assert status == 201

    refused = tool_call(mcp, "memory_recall", AGENT_ID=agent["agentId"])
    assert refused["isError"] is True
    error = refused["structuredContent"]["error"]
    assert error["code"] == "permission_required" and error["details"]["missingPermissions"] == ["memory:read"]
    assert json.loads(refused["content"][0]["text"]) == refused["structuredContent"]

    grant(rpc, "memory-recall", "memory:read")
    found = tool_call(mcp, "memory_recall", AGENT_ID=agent["agentId"])
    assert found["isError"] is False
    assert [m["content"] for m in found["structuredContent"]["memories"]] == ["我喜欢爬山"]

    _, page = invoke(rpc, load_event("rpc_list_audit_events.json"))
    events = [(e["action"], e["decision"], e["reason"]) for e in page["items"] if e["action"] == "tool.execute"]
    assert sorted(events) == [("tool.execute", "allowed", "allowed"), ("tool.execute", "denied", "grant_missing"),
                              ("tool.execute", "succeeded", "succeeded")]
    assert all("爬山" not in json.dumps(e, ensure_ascii=False) for e in page["items"])  # no memory text in audit


def test_memory_recall_of_a_disabled_skill_or_another_users_agent(fns):
    rpc, mcp = fns
    agent = new_agent(rpc)
    grant(rpc, "memory-recall", "memory:read")
    stranger = tool_call(mcp, "memory_recall", user="user-bob", AGENT_ID=agent["agentId"])
    assert stranger["structuredContent"]["error"]["code"] == "agent_not_found"
    status, _ = invoke(rpc, load_event("rpc_patch_skill.json", path_ids={"goal-setting": "memory-recall"},
                                       body={"enabled": False}))
    assert status == 200
    disabled = tool_call(mcp, "memory_recall", AGENT_ID=agent["agentId"])
    assert disabled["isError"] and disabled["structuredContent"]["error"]["code"] == "skill_disabled"


def test_schedule_goal_check_in_is_the_background_job_route(fns):
    rpc, mcp = fns
    agent = new_agent(rpc)
    run_at = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S+08:00")
    refused = tool_call(mcp, "schedule_goal_check_in", AGENT_ID=agent["agentId"], RUN_AT=run_at)
    assert refused["structuredContent"]["error"]["code"] == "permission_required"
    grant(rpc, "goal-check-in-reminder", "proactive_message:write")
    created = tool_call(mcp, "schedule_goal_check_in", AGENT_ID=agent["agentId"], RUN_AT=run_at)
    assert created["isError"] is False
    job = created["structuredContent"]
    status, page = invoke(rpc, load_event("rpc_list_background_jobs.json"))
    assert status == 200 and page["items"] == [job]  # the same body the HTTP route answers
    assert job["note"] == "复盘本周目标" and job["conversationId"] == agent["defaultConversationId"]


def test_without_a_subject_it_is_401_before_any_mcp(fns):
    _, mcp = fns
    status, body = invoke(mcp, load_event("mcp_tools_list.json", user=None))
    assert status == 401 and body["error"]["code"] == "unauthenticated"


def test_a_session_manager_runs_once_which_is_why_each_invocation_builds_its_own(fns):
    _, mcp = fns
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(mcp.server, stateless=True, json_response=True)

    async def twice() -> None:
        async with manager.run():
            pass
        async with manager.run():
            pass

    with pytest.raises(RuntimeError, match="once per instance"):
        asyncio.run(twice())


def test_the_creation_flow_and_the_catalog_through_the_tools(fns):
    rpc, mcp = fns
    started = tool_call(mcp, "start_create")
    assert started["isError"] is False
    draft = started["structuredContent"]
    (gap,) = draft["gaps"]
    assert draft["revision"] == 1 and gap["kind"] == "missing_binding"

    early = tool_call(mcp, "confirm_draft", DRAFT_ID=draft["draftId"], REVISION="1")
    assert early["isError"] and early["structuredContent"]["error"]["code"] == "draft_has_gaps"
    stranger = tool_call(mcp, "generate_draft", user="user-bob", DRAFT_ID=draft["draftId"], GAP_ID=gap["gapId"])
    assert stranger["isError"] and stranger["structuredContent"]["error"]["code"] == "not_found"

    ready = tool_call(mcp, "generate_draft", DRAFT_ID=draft["draftId"], GAP_ID=gap["gapId"])["structuredContent"]
    assert ready["revision"] == 2 and ready["gaps"] == []
    stale = tool_call(mcp, "confirm_draft", DRAFT_ID=draft["draftId"], REVISION="1")
    assert stale["structuredContent"]["error"]["code"] == "draft_revision_conflict"
    confirmed = tool_call(mcp, "confirm_draft", DRAFT_ID=draft["draftId"], REVISION="2")
    assert confirmed["isError"] is False
    capability = confirmed["structuredContent"]
    assert capability["status"] == "draft" and capability["capabilityId"] == "user:evening_notes"

    # The same body as the HTTP route's, and the same audit.
    status, same = call(rpc, "GET", f"{BASE}/{capability['userCapabilityId']}")
    assert status == 200 and same == capability
    _, page = invoke(rpc, load_event("rpc_list_audit_events.json"))
    actions = [e["action"] for e in page["items"]]
    for action in ("user_capability.draft.start", "user_capability.draft.generate", "user_capability.draft.confirm",
                   "user_capability.create"):
        assert action in actions

    # A draft is not in the catalog, and its protocol is refused (no preview for a host).
    listed = tool_call(mcp, "list_capabilities")["structuredContent"]
    assert listed["nextCursor"] is None and "user:evening_notes" not in {c["capabilityId"] for c in listed["items"]}
    refused = tool_call(mcp, "get_capability_protocol", CAPABILITY_ID="user:evening_notes")
    assert refused["isError"] and refused["structuredContent"]["error"]["code"] == "capability_not_active"

    # Active: in the catalog as the route lists it, and its protocol is the route's body.
    activate(rpc, capability)
    listed = tool_call(mcp, "list_capabilities")["structuredContent"]
    status, page = call(rpc, "GET", CATALOG)
    assert status == 200 and listed == page
    assert "user:evening_notes" in {c["capabilityId"] for c in listed["items"]}
    read = tool_call(mcp, "get_capability_protocol", CAPABILITY_ID="user:evening_notes")
    assert read["isError"] is False
    http_status, http_body, _ = protocol(rpc, "user:evening_notes", hostProfile="laptop")
    assert http_status == 200 and read["structuredContent"] == http_body
    assert read["structuredContent"]["platformCapabilityIds"] == ["memory-recall"]
    hidden = tool_call(mcp, "get_capability_protocol", user="user-bob", CAPABILITY_ID="user:evening_notes")
    assert hidden["isError"] and hidden["structuredContent"]["error"]["code"] == "not_found"
