"""Drift of a hosted endpoint's tool list over real HTTP (docs/contract.md "Hosted external workflows"): refresh against
the real MCP server of tests/hosted_server.py whose tools the tests change at run time, the pending drift,
accept by fingerprint and version, and the list's cursor. The stack and the server are the ones of
test_hosted_endpoints_http.py (its fixtures)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from skillcore_local.ddb_local import client
from tests.hosted_server import NAME, HostedServer

from . import test_hosted_endpoints_http as endpoints_http
from .conftest import Caller, StackClient

# The stack and the MCP server of test_hosted_endpoints_http.py, as fixtures of this module too.
hosted = endpoints_http.hosted
hosted_stack = endpoints_http.hosted_stack
register = endpoints_http.register

SEARCH_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


@pytest.fixture
def server(hosted: HostedServer) -> Iterator[HostedServer]:
    hosted.reset_tools()
    yield hosted
    hosted.reset_tools()


def endpoint(user: Caller, server: HostedServer, name: str = "drift_flow") -> dict[str, Any]:
    status, body = register(user, name, server.url(), authToken="drift-secret-token")
    assert status == 201, body
    return body


def path(body: dict[str, Any], tail: str = "") -> str:
    return f"/rpc/hosted-endpoints/{body['endpointId']}{tail}"


def refresh(user: Caller, body: dict[str, Any]) -> dict[str, Any]:
    return user.ok("POST", path(body, "/refresh"))


def accept(user: Caller, body: dict[str, Any], version: int, fingerprint: str) -> tuple[int, Any]:
    return user.call("POST", path(body, "/snapshot/accept"), {"expectedVersion": version, "fingerprint": fingerprint})


def stored_items(stack: StackClient, user: Caller) -> dict[str, dict[str, Any]]:
    table = stack.env["SKILLS_TABLE_HOSTED_ENDPOINTS"]
    items = client(stack.env["SKILLS_DYNAMODB_ENDPOINT"]).query(
        TableName=table, KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": user.user}})["Items"]
    return {item["sk"]["S"]: item for item in items}


def audit(user: Caller, action: str) -> list[dict[str, Any]]:
    return [e for e in user.ok("GET", "/rpc/skills/audit-events")["items"] if e["action"] == action]


def test_a_refresh_that_sees_the_pinned_list_changes_nothing(hosted_stack: StackClient, server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    assert refresh(user, body) == {"changed": False}
    again = user.ok("GET", path(body))
    assert again["version"] == 1 and again["status"] == "active" and "pendingDiff" not in again
    assert again["snapshot"] == body["snapshot"]
    (event,) = audit(user, "hosted_endpoint.refresh")
    assert event["metadata"]["host"] == NAME and len(event["metadata"]["urlSha256"]) == 64
    assert event["metadata"]["fingerprint"] == body["snapshot"]["fingerprint"]
    assert "pendingFingerprint" not in event["metadata"]
    text = json.dumps(event)
    assert "/mcp" not in text and "drift-secret-token" not in text


def test_an_added_tool_is_held_until_accepted_and_then_starts_disabled(hosted_stack: StackClient,
                                                                       server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    user.ok("PATCH", path(body), {"expectedVersion": 1, "tools": [{"name": "add", "requiresApproval": False}]})
    server.add_tool("search", "Search the documents.", SEARCH_SCHEMA)

    result = refresh(user, body)
    assert result["changed"] is True
    diff = result["diff"]
    assert (diff["added"], diff["removed"], diff["changed"]) == (["search"], [], [])
    assert len(diff["fingerprint"]) == 64 and diff["fingerprint"] != body["snapshot"]["fingerprint"]

    held = user.ok("GET", path(body))
    assert held["status"] == "drift_pending" and held["version"] == 3
    assert held["pendingDiff"] == diff
    assert [t["name"] for t in held["snapshot"]["tools"]] == ["add", "echo"]  # not adopted
    assert held["snapshot"]["fingerprint"] == body["snapshot"]["fingerprint"]
    listed = user.ok("GET", "/rpc/hosted-endpoints")["items"]
    assert listed[0]["pendingDiff"] == diff

    # stored as an item of its own beside the endpoint
    items = stored_items(hosted_stack, user)
    pending = items[f"pending#{body['endpointId']}"]
    assert pending["fingerprint"]["S"] == diff["fingerprint"]
    assert items[f"ep#{body['endpointId']}"]["pendingFingerprint"]["S"] == diff["fingerprint"]

    (event,) = audit(user, "hosted_endpoint.refresh")
    assert event["metadata"]["fingerprint"] == body["snapshot"]["fingerprint"]
    assert event["metadata"]["pendingFingerprint"] == diff["fingerprint"]

    # a wrong fingerprint, a stale version: both 409 version_conflict, nothing adopted
    status, wrong = accept(user, body, 3, "0" * 64)
    assert (status, wrong["error"]["code"], wrong["error"]["details"]) == (
        409, "version_conflict", {"currentVersion": 3, "pendingFingerprint": diff["fingerprint"]})
    status, stale = accept(user, body, 2, diff["fingerprint"])
    assert (status, stale["error"]["code"], stale["error"]["details"]) == (409, "version_conflict",
                                                                           {"currentVersion": 3})
    status, bad = accept(user, body, 3, "not-a-fingerprint")
    assert (status, bad["error"]["code"]) == (422, "validation_error")
    assert user.ok("GET", path(body))["status"] == "drift_pending"

    accepted = user.ok("POST", path(body, "/snapshot/accept"),
                       {"expectedVersion": 3, "fingerprint": diff["fingerprint"]})
    assert accepted["status"] == "active" and accepted["version"] == 4 and "pendingDiff" not in accepted
    assert accepted["snapshot"]["fingerprint"] == diff["fingerprint"]
    tools = {t["name"]: t for t in accepted["snapshot"]["tools"]}
    assert set(tools) == {"add", "echo", "search"}
    assert (tools["search"]["enabled"], tools["search"]["requiresApproval"]) == (False, True)
    assert tools["search"]["inputSchema"] == SEARCH_SCHEMA
    assert (tools["add"]["enabled"], tools["add"]["requiresApproval"]) == (True, False)  # unchanged: kept
    assert (tools["echo"]["enabled"], tools["echo"]["requiresApproval"]) == (True, True)
    assert f"pending#{body['endpointId']}" not in stored_items(hosted_stack, user)

    (accepted_event,) = audit(user, "hosted_endpoint.snapshot_accept")
    assert accepted_event["metadata"]["fingerprint"] == diff["fingerprint"]
    assert accepted_event["metadata"]["previousFingerprint"] == body["snapshot"]["fingerprint"]
    assert "/mcp" not in json.dumps(accepted_event) and "drift-secret-token" not in json.dumps(accepted_event)

    # nothing pending any more: a second accept is refused, a refresh sees no change
    status, again = accept(user, body, 4, diff["fingerprint"])
    assert (status, again["error"]["details"]) == (409, {"currentVersion": 4, "pendingFingerprint": None})
    assert refresh(user, body) == {"changed": False}


def test_a_changed_schema_and_description_are_changes_and_require_approval_again(hosted_stack: StackClient,
                                                                                 server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    user.ok("PATCH", path(body), {"expectedVersion": 1, "tools": [{"name": "add", "requiresApproval": False},
                                                                  {"name": "echo", "enabled": False}]})
    server.set_schema("add", {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})
    server.set_description("echo", "Echo the text back, and forward it somewhere else.")
    diff = refresh(user, body)["diff"]
    assert (diff["added"], diff["removed"], diff["changed"]) == ([], [], ["add", "echo"])

    accepted = user.ok("POST", path(body, "/snapshot/accept"), {"expectedVersion": 3, "fingerprint": diff["fingerprint"]})
    tools = {t["name"]: t for t in accepted["snapshot"]["tools"]}
    assert tools["add"]["inputSchema"]["properties"]["a"] == {"type": "number"}
    assert (tools["add"]["enabled"], tools["add"]["requiresApproval"]) == (True, True)
    assert tools["echo"]["description"] == "Echo the text back, and forward it somewhere else."
    assert (tools["echo"]["enabled"], tools["echo"]["requiresApproval"]) == (False, True)


def test_a_removed_tool_is_a_change_and_is_gone_once_accepted(hosted_stack: StackClient,
                                                              server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    server.remove_tool("echo")
    diff = refresh(user, body)["diff"]
    assert (diff["added"], diff["removed"], diff["changed"]) == ([], ["echo"], [])
    held = user.ok("GET", path(body))
    assert [t["name"] for t in held["snapshot"]["tools"]] == ["add", "echo"]
    accepted = user.ok("POST", path(body, "/snapshot/accept"), {"expectedVersion": 2, "fingerprint": diff["fingerprint"]})
    assert [t["name"] for t in accepted["snapshot"]["tools"]] == ["add"]


def test_a_failed_refresh_changes_nothing_and_is_audited_with_its_code(hosted_stack: StackClient,
                                                                        server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    # a tool whose schema carries a `pattern` is refused at snapshot time (a regex could stall validation)
    server.add_tool("search", "Search.", {"type": "object", "properties": {"q": {"type": "string", "pattern": "^a+$"}}})
    status, error = user.call("POST", path(body, "/refresh"))
    assert (status, error["error"]["code"]) == (422, "snapshot_invalid"), error
    after = user.ok("GET", path(body))
    assert (after["status"], after["version"], after["snapshot"]) == ("active", 1, body["snapshot"])
    assert "pendingDiff" not in after and f"pending#{body['endpointId']}" not in stored_items(hosted_stack, user)
    (event,) = audit(user, "hosted_endpoint.refresh")
    assert (event["decision"], event["reason"], event["targetId"]) == ("failed", "snapshot_invalid", body["endpointId"])
    assert event["metadata"]["fingerprint"] == body["snapshot"]["fingerprint"]
    text = json.dumps(event)
    assert "/mcp" not in text and "drift-secret-token" not in text


def test_a_refresh_while_drift_is_pending_replaces_the_pending_list(hosted_stack: StackClient,
                                                                    server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    server.add_tool("first", "First.", {"type": "object"})
    first = refresh(user, body)["diff"]
    assert user.ok("GET", path(body))["version"] == 2

    # the same drift seen again: nothing is written, the version an owner accepts with does not move
    assert refresh(user, body)["diff"] == first
    assert user.ok("GET", path(body))["version"] == 2

    server.add_tool("second", "Second.", {"type": "object"})
    second = refresh(user, body)["diff"]
    assert second["added"] == ["first", "second"] and second["fingerprint"] != first["fingerprint"]
    held = user.ok("GET", path(body))
    assert held["version"] == 3 and held["pendingDiff"] == second
    status, old = accept(user, body, 3, first["fingerprint"])
    assert (status, old["error"]["code"]) == (409, "version_conflict")
    assert user.ok("POST", path(body, "/snapshot/accept"),
                   {"expectedVersion": 3, "fingerprint": second["fingerprint"]})["version"] == 4


def test_a_drift_that_goes_away_ends_and_patch_cannot_end_it(hosted_stack: StackClient, server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    server.add_tool("flaky", "Comes and goes.", {"type": "object"})
    assert refresh(user, body)["changed"] is True

    # PATCH: "active" while a drift is pending keeps it pending; "disabled" wins and keeps the drift
    patched = user.ok("PATCH", path(body), {"expectedVersion": 2, "status": "active"})
    assert patched["status"] == "drift_pending" and "pendingDiff" in patched
    patched = user.ok("PATCH", path(body), {"expectedVersion": 3, "status": "disabled"})
    assert patched["status"] == "disabled" and patched["pendingDiff"]["added"] == ["flaky"]
    patched = user.ok("PATCH", path(body), {"expectedVersion": 4, "status": "active"})
    assert patched["status"] == "drift_pending"

    server.remove_tool("flaky")
    assert refresh(user, body) == {"changed": False}
    cleared = user.ok("GET", path(body))
    assert cleared["status"] == "active" and cleared["version"] == 6 and "pendingDiff" not in cleared
    assert f"pending#{body['endpointId']}" not in stored_items(hosted_stack, user)


def test_a_disabled_endpoint_stays_disabled_through_drift_and_accept(hosted_stack: StackClient,
                                                                     server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    user.ok("PATCH", path(body), {"expectedVersion": 1, "status": "disabled"})
    server.add_tool("extra", "Extra.", {"type": "object"})
    diff = refresh(user, body)["diff"]
    assert user.ok("GET", path(body))["status"] == "disabled"
    accepted = user.ok("POST", path(body, "/snapshot/accept"), {"expectedVersion": 3, "fingerprint": diff["fingerprint"]})
    assert accepted["status"] == "disabled"


def test_deleting_a_drifted_endpoint_deletes_its_pending_list(hosted_stack: StackClient,
                                                              server: HostedServer) -> None:
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    server.add_tool("extra", "Extra.", {"type": "object"})
    refresh(user, body)
    assert f"pending#{body['endpointId']}" in stored_items(hosted_stack, user)
    assert user.call("DELETE", path(body))[0] == 204
    assert set(stored_items(hosted_stack, user)) == {"quota"}


def test_another_users_endpoint_is_not_found(hosted_stack: StackClient, server: HostedServer) -> None:
    owner, other = Caller(hosted_stack), Caller(hosted_stack)
    body = endpoint(owner, server)
    server.add_tool("extra", "Extra.", {"type": "object"})
    status, missing = other.call("POST", path(body, "/refresh"))
    assert (status, missing["error"]["code"]) == (404, "not_found")
    fingerprint = refresh(owner, body)["diff"]["fingerprint"]
    status, missing = accept(other, body, 2, fingerprint)
    assert (status, missing["error"]["code"]) == (404, "not_found")
    assert owner.ok("GET", path(body))["status"] == "drift_pending"


def test_the_list_pages_with_a_cursor(hosted_stack: StackClient, server: HostedServer) -> None:
    user = Caller(hosted_stack)
    made = [endpoint(user, server, f"paged_{index}")["endpointId"] for index in range(3)]
    server.add_tool("extra", "Extra.", {"type": "object"})
    refresh(user, {"endpointId": made[1]})  # a drifted one in the middle shows its pendingDiff

    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = user.ok("GET", "/rpc/hosted-endpoints?limit=1" + (f"&cursor={cursor}" if cursor else ""))
        pages += 1
        assert len(page["items"]) <= 1
        seen += [item["endpointId"] for item in page["items"]]
        for item in page["items"]:
            assert ("pendingDiff" in item) == (item["endpointId"] == made[1])
        cursor = page["nextCursor"]
        if cursor is None:
            break
        assert pages < 10
    assert seen == made
    first = user.ok("GET", "/rpc/hosted-endpoints?limit=1")
    assert first["nextCursor"] is not None
    assert [i["endpointId"] for i in user.ok("GET", "/rpc/hosted-endpoints?limit=2")["items"]] == made[:2]
    assert user.ok("GET", "/rpc/hosted-endpoints")["nextCursor"] is None

    status, foreign = Caller(hosted_stack).call("GET", f"/rpc/hosted-endpoints?limit=1&cursor={first['nextCursor']}")
    assert (status, foreign["error"]["code"]) == (422, "validation_error")
    status, forged = user.call("GET", "/rpc/hosted-endpoints?cursor=bm90LWEtY3Vyc29y")
    assert (status, forged["error"]["code"]) == (422, "validation_error")


def test_a_drifted_endpoint_keeps_serving_its_unchanged_tools_and_refuses_the_changed_one(
        hosted_stack: StackClient, server: HostedServer) -> None:
    """While a drift is pending, a call reads the endpoint with its pending snapshot: the unchanged tool is called,
    the changed one answers 409 tool_drifted (never 500) and reaches nothing."""
    user = Caller(hosted_stack)
    body = endpoint(user, server)
    user.ok("PATCH", "/rpc/skills/permissions", {
        "skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke", "scope": {"type": "user"},
        "granted": True})
    user.ok("PATCH", path(body), {"expectedVersion": 1, "tools": [{"name": "add", "requiresApproval": False},
                                                                  {"name": "echo", "requiresApproval": False}]})
    server.set_description("echo", "Echo the text back, and forward it somewhere else.")
    diff = refresh(user, body)["diff"]
    assert (diff["added"], diff["removed"], diff["changed"]) == ([], [], ["echo"])
    before = dict(server.calls)

    status, answer = user.call("POST", path(body, "/calls"),
                               {"toolName": "add", "arguments": {"a": 2, "b": 3}, "clientCallId": "drift-1"})
    assert (status, answer.get("content")) == (200, "5"), answer
    status, refused = user.call("POST", path(body, "/calls"),
                                {"toolName": "echo", "arguments": {"text": "hi"}, "clientCallId": "drift-2"})
    assert (status, refused["error"]["code"], refused["error"]["details"]) == (
        409, "tool_drifted", {"toolName": "echo", "reason": "drifted"})
    assert server.calls["add"] == before.get("add", 0) + 1 and server.calls["echo"] == before.get("echo", 0)
