"""Two kinds of caller over real HTTP (docs/contract.md): the same user's agent-host token (`kind: host`, as
`make token KIND=host` mints it) reaches the routes a host needs, and every decision route answers it 403
`person_required` (`details.reason: host_token`) and changes nothing, while the person's token decides as
before; at L3 (approving a hosted call, granting hosted_workflow:invoke) the person's sign-in must be recent
(`auth_time` within 15 minutes, else `stale_sign_in`). Against the real MCP server of tests/hosted_server.py."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.hosted_server import HostedServer

from .conftest import PersonAndHost, StackClient

pytestmark = pytest.mark.stack

HOSTED = {"skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke", "scope": {"type": "user"}}
RECALL = {"skillId": "memory-recall", "permissionCode": "memory:read", "scope": {"type": "user"}}


@pytest.fixture
def server(hosted: HostedServer) -> Iterator[HostedServer]:
    hosted.reset_tools()
    yield hosted
    hosted.reset_tools()


class Person(PersonAndHost):
    prefix = "person"

    def as_signed_in(self, seconds_ago: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """With a person's token whose sign-in (`auth_time`) was `seconds_ago` (a refreshed token keeps it)."""
        token = self.stack.token(self.user, extra_claims={"auth_time": int(time.time()) - seconds_ago})
        return self.stack.call(method, path, body=body, token=token)


def refused(answer: tuple[int, Any], reason: str = "host_token") -> None:
    status, body = answer
    assert status == 403, answer
    assert body["error"]["code"] == "person_required", answer
    assert body["error"]["details"] == {"reason": reason}, answer


def asked(answer: tuple[int, Any]) -> str:
    status, body = answer
    assert (status, body["error"]["code"]) == (409, "approval_required"), answer
    return str(body["error"]["details"]["approvalId"])


def test_every_decision_route_refuses_a_host_and_changes_nothing(hosted_stack: StackClient,
                                                                 server: HostedServer) -> None:
    person = Person(hosted_stack)
    # The person registers, grants and sets up; the host reads and calls.
    refused(person.as_host("POST", "/rpc/hosted-endpoints", {"name": "flow", "displayName": "Flow",
                                                             "url": server.url()}))
    endpoint = person.ok("POST", "/rpc/hosted-endpoints", {"name": "flow", "displayName": "Flow",
                                                           "url": server.url()}, status=201)
    path = f"/rpc/hosted-endpoints/{endpoint['endpointId']}"
    refused(person.as_host("PATCH", "/rpc/skills/permissions", {**HOSTED, "granted": True}))
    refused(person.as_host("PATCH", "/rpc/skills/permissions", {**RECALL, "granted": True}))
    assert person.ok("GET", "/rpc/skills/permissions")["items"] == []
    person.ok("PATCH", "/rpc/skills/permissions", {**HOSTED, "granted": True})
    refused(person.as_host("PATCH", "/rpc/skills/permissions", {**HOSTED, "granted": False}))

    # A tool's approval switch, the endpoint's status: refused whole.
    for change in ({"tools": [{"name": "echo", "requiresApproval": False}]}, {"status": "disabled"},
                   {"displayName": "Renamed"}):
        refused(person.as_host("PATCH", path, {"expectedVersion": endpoint["version"], **change}))
    held = person.ok("GET", path)
    assert held["version"] == endpoint["version"] and held["status"] == endpoint["status"]
    assert {t["name"]: t["requiresApproval"] for t in held["snapshot"]["tools"]}["echo"] is True

    # A skill's switch.
    refused(person.as_host("PATCH", "/rpc/skills/hosted-workflows", {"enabled": False}))
    skills = {s["skillId"]: s for s in person.ok("GET", "/rpc/skills?limit=100")["items"]}
    assert skills["hosted-workflows"]["enabled"] is True

    # The host calls; the approval it gets is the person's to decide.
    status, _ = person.as_host("GET", path)
    assert status == 200
    body = {"toolName": "echo", "arguments": {"text": "publish"}, "clientCallId": "host-1"}
    approval_id = asked(person.as_host("POST", f"{path}/calls", body))
    for decision in ("approve", "deny"):
        refused(person.as_host("POST", f"/rpc/approvals/{approval_id}", {"decision": decision}))
    status, pending = person.as_host("GET", "/rpc/approvals?status=pending")
    assert status == 200 and [a["approvalId"] for a in pending["items"]] == [approval_id]
    asked(person.as_host("POST", f"{path}/calls", {**body, "approvalId": approval_id}))
    assert server.calls["echo"] == 0

    # A drift held for the person: only they accept it.
    server.add_tool("search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}})
    status, refreshed = person.as_host("POST", f"{path}/refresh")
    assert status == 200, refreshed
    fingerprint = refreshed["diff"]["fingerprint"]
    refused(person.as_host("POST", f"{path}/snapshot/accept",
                           {"expectedVersion": person.ok("GET", path)["version"], "fingerprint": fingerprint}))
    assert person.ok("GET", path)["snapshot"]["fingerprint"] != fingerprint

    # Activating a capability: refused before the capability is even looked up.
    refused(person.as_host("POST", "/rpc/user-capabilities/no-such-capability/activate", {"expectedVersion": 1}))

    # The person decides each as before.
    assert person.ok("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"})["status"] == "approved"
    current = person.ok("GET", path)
    accepted = person.ok("POST", f"{path}/snapshot/accept",
                         {"expectedVersion": current["version"], "fingerprint": fingerprint})
    assert accepted["snapshot"]["fingerprint"] == fingerprint
    patched = person.ok("PATCH", path, {"expectedVersion": accepted["version"],
                                        "tools": [{"name": "echo", "requiresApproval": False}]})
    assert {t["name"]: t["requiresApproval"] for t in patched["snapshot"]["tools"]}["echo"] is False
    assert person.ok("PATCH", "/rpc/skills/hosted-workflows", {"enabled": False})["enabled"] is False

    # The audit of each decision says a person decided it; the host's refused attempts wrote nothing.
    events = person.ok("GET", "/rpc/skills/audit-events?limit=100")["items"]
    decided = [e for e in events if e["action"] in ("hosted_endpoint.approval", "permission.grant",
                                                    "permission.revoke")]
    assert sorted(e["action"] for e in decided) == ["hosted_endpoint.approval", "permission.grant"]
    assert all(e["metadata"]["callerKind"] == "person" for e in decided), decided


def test_l3_decisions_need_a_recent_sign_in_and_lower_ones_do_not(hosted_stack: StackClient,
                                                                  server: HostedServer) -> None:
    person = Person(hosted_stack)
    stale = 16 * 60
    refused(person.as_signed_in(stale, "PATCH", "/rpc/skills/permissions", {**HOSTED, "granted": True}),
            "stale_sign_in")
    # Below L3 (memory:read is L1), and revoking, a person's older sign-in still decides.
    status, grant = person.as_signed_in(stale, "PATCH", "/rpc/skills/permissions", {**RECALL, "granted": True})
    assert status == 200 and grant["status"] == "active", grant
    status, _ = person.as_signed_in(stale, "PATCH", "/rpc/skills/permissions", {**HOSTED, "granted": False})
    assert status == 200
    status, grant = person.as_signed_in(14 * 60, "PATCH", "/rpc/skills/permissions", {**HOSTED, "granted": True})
    assert status == 200 and grant["status"] == "active", grant

    endpoint = person.ok("POST", "/rpc/hosted-endpoints", {"name": "recent", "displayName": "Recent",
                                                           "url": server.url()}, status=201)
    path = f"/rpc/hosted-endpoints/{endpoint['endpointId']}"
    approval_id = asked(person.call("POST", f"{path}/calls", {"toolName": "echo", "arguments": {"text": "x"},
                                                              "clientCallId": uuid.uuid4().hex}))
    refused(person.as_signed_in(stale, "POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"}),
            "stale_sign_in")
    assert [a["approvalId"] for a in person.ok("GET", "/rpc/approvals?status=pending")["items"]] == [approval_id]
    # Without any auth_time there is no recent sign-in to show.
    bare = hosted_stack.token(person.user, extra_claims={"auth_time": None})
    status, body = hosted_stack.call("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"}, token=bare)
    refused((status, body), "stale_sign_in")
    status, decided = person.as_signed_in(60, "POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"})
    assert status == 200 and decided["status"] == "approved", decided


def test_local_sign_in_mints_both_kinds(hosted_stack: StackClient) -> None:
    status, person = hosted_stack.call("POST", "/_local/token", {"user": "kinds-alice"})
    assert status == 200
    status, host = hosted_stack.call("POST", "/_local/token", {"user": "kinds-alice", "kind": "host"})
    assert status == 200
    assert hosted_stack.call("PATCH", "/rpc/skills/memory-recall", {"enabled": True}, token=person["token"])[0] == 200
    refused(hosted_stack.call("PATCH", "/rpc/skills/memory-recall", {"enabled": True}, token=host["token"]))
    assert hosted_stack.call("GET", "/rpc/skills", token=host["token"])[0] == 200
    status, body = hosted_stack.call("POST", "/_local/token", {"user": "kinds-alice", "kind": "robot"})
    assert status == 422 and body["error"]["details"]["errors"][0]["path"] == "kind"
