"""What an approval shows and what it binds, over real HTTP against the real MCP server of tests/hosted_server.py
(the `hosted` and `hosted_stack` fixtures of conftest.py; its tools changed at run time as in the drift tests):

- the whole canonical arguments, never cut: two calls differing only in a field sorted after a long padding show
  different previews; bidi controls and invisible characters are escaped;
- an approval given before a drift was accepted (or any change of the endpoint) is refused, and a new one is
  asked for; nothing is sent;
- a stored result is replayed only after the grant and the endpoint: a revoked grant is 422 even for a known
  clientCallId.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.hosted_server import HostedServer

from .conftest import Caller, StackClient

SEND_SCHEMA = {"type": "object", "properties": {"body": {"type": "string"}, "recipient": {"type": "string"}},
               "required": ["body", "recipient"]}


@pytest.fixture
def server(hosted: HostedServer) -> Iterator[HostedServer]:
    hosted.reset_tools()
    yield hosted
    hosted.reset_tools()


def grant(user: Caller, granted: bool = True) -> None:
    user.ok("PATCH", "/rpc/skills/permissions", {"skillId": "hosted-workflows",
                                                 "permissionCode": "hosted_workflow:invoke",
                                                 "scope": {"type": "user"}, "granted": granted})


def register(user: Caller, server: HostedServer, name: str = "approve_flow") -> dict[str, Any]:
    return user.ok("POST", "/rpc/hosted-endpoints", {"name": name, "displayName": "Flow", "url": server.url()},
                   status=201)


def call(user: Caller, endpoint: dict[str, Any], tool: str, arguments: dict[str, Any], call_id: str | None = None,
         approval_id: str | None = None) -> tuple[int, Any]:
    body: dict[str, Any] = {"toolName": tool, "arguments": arguments, "clientCallId": call_id or uuid.uuid4().hex}
    if approval_id is not None:
        body["approvalId"] = approval_id
    return user.call("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/calls", body)


def asked(answer: tuple[int, Any]) -> str:
    status, body = answer
    assert (status, body["error"]["code"]) == (409, "approval_required"), answer
    return str(body["error"]["details"]["approvalId"])


def test_two_calls_differing_only_after_a_long_padding_show_different_whole_previews(
        hosted_stack: StackClient, server: HostedServer) -> None:
    server.add_tool("send", "Send a message.", SEND_SCHEMA)
    user = Caller(hosted_stack)
    grant(user)
    endpoint = register(user, server, "send_flow")
    padding = "p" * 3000  # "body" sorts before "recipient": a cut preview would end inside it
    alice = asked(call(user, endpoint, "send", {"body": padding, "recipient": "alice@example.com"}))
    mallory = asked(call(user, endpoint, "send", {"body": padding, "recipient": "mallory\u202e@evil.example\u200b"}))
    previews = {a["approvalId"]: a["argumentsPreview"] for a in user.ok("GET", "/rpc/approvals?status=pending")["items"]}
    assert previews[alice] == '{"body":"' + padding + '","recipient":"alice@example.com"}'
    assert previews[mallory] == '{"body":"' + padding + '","recipient":"mallory\\u{202E}@evil.example\\u{200B}"}'
    assert previews[alice] != previews[mallory]
    assert "\u202e" not in previews[mallory] and "\u200b" not in previews[mallory]
    assert server.calls["send"] == 0


def test_an_approval_given_before_an_accepted_drift_is_refused_and_nothing_is_sent(
        hosted_stack: StackClient, server: HostedServer) -> None:
    user = Caller(hosted_stack)
    grant(user)
    endpoint = register(user, server, "drift_after")
    before = server.calls["echo"]
    approval_id = asked(call(user, endpoint, "echo", {"text": "publish"}, call_id="da-1"))
    assert user.ok("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"})["status"] == "approved"

    server.add_tool("search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}})
    diff = user.ok("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/refresh")["diff"]
    held = user.ok("GET", f"/rpc/hosted-endpoints/{endpoint['endpointId']}")
    # echo is unchanged and still served, but not under an approval given on the endpoint as it was
    again = asked(call(user, endpoint, "echo", {"text": "publish"}, call_id="da-1", approval_id=approval_id))
    assert again != approval_id
    accepted = user.ok("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/snapshot/accept",
                       {"expectedVersion": held["version"], "fingerprint": diff["fingerprint"]})
    assert accepted["snapshot"]["fingerprint"] == diff["fingerprint"]
    after = asked(call(user, endpoint, "echo", {"text": "publish"}, call_id="da-1", approval_id=approval_id))
    assert after not in (approval_id, again)
    assert server.calls["echo"] == before
    assert user.ok("GET", "/rpc/approvals?status=approved")["items"][0]["approvalId"] == approval_id  # never used

    # a new approval on the endpoint as it is now is used
    assert user.ok("POST", f"/rpc/approvals/{after}", {"decision": "approve"})["status"] == "approved"
    status, body = call(user, endpoint, "echo", {"text": "publish"}, call_id="da-1", approval_id=after)
    assert (status, body["content"]) == (200, "echo: publish"), body
    assert server.calls["echo"] == before + 1


def test_a_known_client_call_id_is_refused_after_the_grant_is_revoked(hosted_stack: StackClient,
                                                                       server: HostedServer) -> None:
    user = Caller(hosted_stack)
    grant(user)
    endpoint = register(user, server, "replayed")
    endpoint = user.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}",
                       {"expectedVersion": endpoint["version"], "tools": [{"name": "add", "requiresApproval": False}]})
    first = call(user, endpoint, "add", {"a": 20, "b": 22}, call_id="rv-1")
    assert first[0] == 200 and first[1]["content"] == "42", first
    before = server.calls["add"]

    grant(user, granted=False)
    status, body = call(user, endpoint, "add", {"a": 20, "b": 22}, call_id="rv-1")
    assert (status, body["error"]["code"]) == (422, "permission_required")
    assert first[1]["callId"] not in str(body) and "42" not in str(body)

    grant(user)
    disabled = user.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}",
                       {"expectedVersion": endpoint["version"], "status": "disabled"})
    status, body = call(user, endpoint, "add", {"a": 20, "b": 22}, call_id="rv-1")
    assert (status, body["error"]["code"]) == (409, "endpoint_disabled")

    user.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}",
            {"expectedVersion": disabled["version"], "status": "active"})
    assert call(user, endpoint, "add", {"a": 20, "b": 22}, call_id="rv-1") == first
    assert server.calls["add"] == before
