"""Every hosted route in every endpoint state and tool state, over real HTTP against the real MCP server of
tests/hosted_server.py (the `hosted` and `hosted_stack` fixtures of conftest.py): never a 5xx, each answer the
contract's (docs/contract.md "Hosted external workflows").

Endpoint states: active, drift_pending, disabled, deleted. Tool states (of the tool `T` a case calls or
switches):
- plain      enabled, requiresApproval off, unchanged;
- approval   enabled, requiresApproval on, unchanged;
- off        switched off, unchanged;
- changed    its description changed by a pending drift (an enabled tool without approval before);
- added      added by a pending drift (not in the pinned snapshot);
- changed_accepted / added_accepted: the same drift, accepted (active endpoints only: an accept ends the drift).
A drift_pending endpoint whose `T` is unchanged drifted through another tool the server added.

Routes: list, get, patch of `T`'s switch, patch of the status, delete, refresh, snapshot/accept (with the pending
fingerprint, or the pinned one when nothing is pending), a call of `T`, the same call once the approval it asked
for is approved (when it asked for one), and the approvals list. Each (route, endpoint state, tool state) is one
case of EXPECTED."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.hosted_server import HostedServer

from .conftest import Caller, StackClient

Expected = int | tuple[int, str]

OK, NO_CONTENT = 200, 204
NOT_FOUND = (404, "not_found")
DISABLED = (409, "endpoint_disabled")
DRIFTED = (409, "tool_drifted")
APPROVAL = (409, "approval_required")
UNKNOWN = (422, "unknown_tool")
STALE = (409, "version_conflict")

ENDPOINT_STATES = ("active", "drift_pending", "disabled", "deleted")
# The tool states of each endpoint state, in the order of EXPECTED's columns.
TOOL_STATES = {
    "active": ("plain", "approval", "off", "changed_accepted", "added_accepted"),
    "drift_pending": ("plain", "approval", "off", "changed", "added"),
    "disabled": ("plain", "approval", "off", "changed", "added"),
    "deleted": ("plain", "approval", "off", "changed", "added"),
}
ALL = (OK,) * 5

EXPECTED: dict[str, dict[str, tuple[Expected, ...]]] = {
    "list": {"active": ALL, "drift_pending": ALL, "disabled": ALL, "deleted": ALL},
    "get": {"active": ALL, "drift_pending": ALL, "disabled": ALL, "deleted": (NOT_FOUND,) * 5},
    "patch_tool": {
        "active": ALL,
        "drift_pending": (OK, OK, OK, OK, UNKNOWN),  # an added tool is not in the pinned snapshot yet
        "disabled": (OK, OK, OK, OK, UNKNOWN),
        "deleted": (NOT_FOUND,) * 5,
    },
    "patch_status": {"active": ALL, "drift_pending": ALL, "disabled": ALL, "deleted": (NOT_FOUND,) * 5},
    "delete": {"active": (NO_CONTENT,) * 5, "drift_pending": (NO_CONTENT,) * 5, "disabled": (NO_CONTENT,) * 5,
               "deleted": (NOT_FOUND,) * 5},
    "refresh": {"active": ALL, "drift_pending": ALL, "disabled": ALL, "deleted": (NOT_FOUND,) * 5},
    "accept": {
        "active": (STALE,) * 5,  # nothing pending: the fingerprint is not a pending one
        "drift_pending": ALL,
        "disabled": (STALE, STALE, STALE, OK, OK),  # a disabled endpoint holds a drift too
        "deleted": (NOT_FOUND,) * 5,
    },
    "call": {
        # a changed tool, once accepted, requires approval again; an added one starts switched off
        "active": (OK, APPROVAL, DRIFTED, APPROVAL, DRIFTED),
        "drift_pending": (OK, APPROVAL, DRIFTED, DRIFTED, DRIFTED),  # unchanged tools keep working
        "disabled": (DISABLED,) * 5,
        "deleted": (NOT_FOUND,) * 5,
    },
    "call_approved": {
        "active": (OK, OK, DRIFTED, OK, DRIFTED),
        "drift_pending": (OK, OK, DRIFTED, DRIFTED, DRIFTED),
        "disabled": (DISABLED,) * 5,
        "deleted": (NOT_FOUND,) * 5,
    },
    "approvals": {"active": ALL, "drift_pending": ALL, "disabled": ALL, "deleted": ALL},
}

CASES = [(route, state, tool, expected)
         for route, table in EXPECTED.items()
         for state in ENDPOINT_STATES
         for tool, expected in zip(TOOL_STATES[state], table[state], strict=True)]
OTHER_SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.fixture
def server(hosted: HostedServer) -> Iterator[HostedServer]:
    hosted.reset_tools()
    yield hosted
    hosted.reset_tools()


class World:
    """One user's endpoint brought into (endpoint state, tool state); `tool` and `arguments` name the call."""

    def __init__(self, stack: StackClient, server: HostedServer, state: str, tool_state: str) -> None:
        self.user = Caller(stack, "sm")
        self.user.ok("PATCH", "/rpc/skills/permissions", {
            "skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke", "scope": {"type": "user"},
            "granted": True})
        self.tool, self.arguments = ("extra", {}) if tool_state.startswith("added") else ("add", {"a": 1, "b": 2})
        endpoint = self.user.ok("POST", "/rpc/hosted-endpoints", {
            "name": f"sm_{uuid.uuid4().hex[:8]}", "displayName": "State", "url": server.url()}, status=201)
        self.path = f"/rpc/hosted-endpoints/{endpoint['endpointId']}"
        switches = {"plain": {"requiresApproval": False}, "approval": {"requiresApproval": True},
                    "off": {"enabled": False}}.get(tool_state, {"requiresApproval": False})
        self.patch({"tools": [{"name": "add", **switches}]})
        if state != "active" or tool_state.endswith("accepted"):
            if tool_state.startswith("changed"):
                server.set_description("add", "Add two integers, said otherwise.")
            elif tool_state.startswith("added"):
                server.add_tool("extra", "An extra tool.", {"type": "object"})
            elif state == "drift_pending":
                server.add_tool("other", "Another tool.", OTHER_SCHEMA)  # T unchanged, the endpoint drifted
            refreshed = self.user.ok("POST", f"{self.path}/refresh")
            if refreshed["changed"] and tool_state.endswith("accepted"):
                self.user.ok("POST", f"{self.path}/snapshot/accept", {
                    "expectedVersion": self.current()["version"], "fingerprint": refreshed["diff"]["fingerprint"]})
        if state == "disabled":
            self.patch({"status": "disabled"})
        current = self.current()
        drifted = tool_state in ("changed", "added")  # a deleted one is deleted while its drift is pending
        assert current["status"] == (("drift_pending" if drifted else "active") if state == "deleted" else state)
        if state == "deleted":
            self.user.ok("DELETE", self.path, status=204)
        self.last = current

    def current(self) -> dict[str, Any]:
        return self.user.ok("GET", self.path)

    def patch(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.user.ok("PATCH", self.path, {"expectedVersion": self.current()["version"], **body})

    def call(self, approval_id: str | None = None, call_id: str = "sm-1") -> tuple[int, Any]:
        body: dict[str, Any] = {"toolName": self.tool, "arguments": self.arguments, "clientCallId": call_id}
        if approval_id is not None:
            body["approvalId"] = approval_id
        return self.user.call("POST", f"{self.path}/calls", body)


def _call_approved(world: World) -> tuple[int, Any]:
    status, body = world.call()
    if status == 409 and body["error"]["code"] == "approval_required":
        approval_id = body["error"]["details"]["approvalId"]
        decided = world.user.call("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"})
        assert decided[0] == 200 and decided[1]["status"] == "approved", decided
        return world.call(approval_id)
    return status, body


def _accept(world: World) -> tuple[int, Any]:
    pending = world.last.get("pendingDiff")
    fingerprint = pending["fingerprint"] if pending else world.last["snapshot"]["fingerprint"]
    return world.user.call("POST", f"{world.path}/snapshot/accept",
                           {"expectedVersion": world.last["version"], "fingerprint": fingerprint})


ROUTES: dict[str, Callable[[World], tuple[int, Any]]] = {
    "list": lambda w: w.user.call("GET", "/rpc/hosted-endpoints"),
    "get": lambda w: w.user.call("GET", w.path),
    "patch_tool": lambda w: w.user.call("PATCH", w.path, {"expectedVersion": w.last["version"],
                                                          "tools": [{"name": w.tool, "enabled": True}]}),
    "patch_status": lambda w: w.user.call("PATCH", w.path, {"expectedVersion": w.last["version"],
                                                            "status": "active"}),
    "delete": lambda w: w.user.call("DELETE", w.path),
    "refresh": lambda w: w.user.call("POST", f"{w.path}/refresh"),
    "accept": _accept,
    "call": lambda w: w.call(),
    "call_approved": _call_approved,
    "approvals": lambda w: w.user.call("GET", "/rpc/approvals"),
}


def test_the_table_covers_every_route_and_state() -> None:
    assert set(EXPECTED) == set(ROUTES)
    assert len(CASES) == len(ROUTES) * sum(len(t) for t in TOOL_STATES.values()) == 200


@pytest.mark.parametrize(("route", "state", "tool_state", "expected"), CASES,
                         ids=[f"{r}-{s}-{t}" for r, s, t, _ in CASES])
def test_route_in_state(hosted_stack: StackClient, server: HostedServer, route: str, state: str, tool_state: str,
                        expected: Expected) -> None:
    world = World(hosted_stack, server, state, tool_state)
    status, body = ROUTES[route](world)
    assert status < 500, (status, body)
    if isinstance(expected, tuple):
        assert (status, body["error"]["code"]) == expected, body
    else:
        assert status == expected, body
    if route == "list":  # a deleted endpoint is not listed; every other one is, in its state
        listed = {e["endpointId"]: e["status"] for e in body["items"]}
        assert listed == ({} if state == "deleted" else {world.last["endpointId"]: state})
