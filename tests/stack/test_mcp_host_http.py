"""An agent host through the MCP face with the official MCP client and its own token (`kind: host`): it calls a
hosted tool and is told approval_required, but it cannot approve its own call (403 `person_required` with its
token on `POST /rpc/approvals/{id}`; the call stays unapproved and nothing is sent); a binding it drafts keeps
requiresUserConfirmation true whatever it sends; it confirms a draft but cannot activate the capability; the
tools' descriptions say the person approves on the page or in the chat."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.hosted_server import HostedServer

from .conftest import PersonAndHost, StackClient

pytestmark = pytest.mark.stack

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
DESCRIPTION = "\n".join([
    "name: host_notes", "display name: Host notes", "when to use: end of day", "goal: Write the day down",
    "steps: 1. use tool journal on laptop: Append the summary", "done when: The summary is in the journal",
])


@pytest.fixture
def server(hosted: HostedServer) -> Iterator[HostedServer]:
    hosted.reset_tools()
    yield hosted
    hosted.reset_tools()


class Person(PersonAndHost):
    prefix = "mcphost"

    def host_session(self) -> Client:
        http_client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.host_token}"}, timeout=30)
        return Client(streamable_http_client(f"{self.stack.url}/mcp", http_client=http_client))


def run(flow: Any) -> Any:
    return anyio.run(flow)


def test_a_host_cannot_approve_its_own_call(hosted_stack: StackClient, server: HostedServer) -> None:
    person = Person(hosted_stack)
    person.ok("PATCH", "/rpc/skills/permissions", {"skillId": "hosted-workflows",
                                                   "permissionCode": "hosted_workflow:invoke",
                                                   "scope": {"type": "user"}, "granted": True})
    endpoint = person.ok("POST", "/rpc/hosted-endpoints", {"name": "own_call", "displayName": "Own call",
                                                           "url": server.url()}, status=201)
    arguments = {"endpointId": endpoint["endpointId"], "toolName": "echo", "arguments": {"text": "wire money"},
                 "clientCallId": uuid.uuid4().hex}

    async def ask() -> tuple[Any, Any]:
        async with person.host_session() as client:
            tools = await client.list_tools()
            return tools, await client.call_tool("call_hosted_tool", arguments)

    tools, first = run(ask)
    assert first.is_error is True
    error = first.structured_content["error"]
    assert error["code"] == "approval_required"
    approval_id = error["details"]["approvalId"]

    # What the host's model is told: the person approves, on the page or in the chat; never the host.
    described = {t.name: " ".join((t.description or "").split()) for t in tools.tools}
    assert "until you approve" not in described["call_hosted_tool"]
    assert "the person approves it themselves, on the Skills page or by answering in the chat" in \
        described["call_hosted_tool"]
    assert "you cannot approve it" in described["call_hosted_tool"]
    assert "requiresUserConfirmation true" in described["generate_draft"]
    assert "you cannot" in described["confirm_draft"]

    # The host tries to approve with its own token: refused, and the call stays unapproved.
    status, body = person.as_host("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"})
    assert (status, body["error"]["code"], body["error"]["details"]) == (
        403, "person_required", {"reason": "host_token"})

    async def again() -> Any:
        async with person.host_session() as client:
            return await client.call_tool("call_hosted_tool", {**arguments, "approvalId": approval_id})

    retried = run(again)
    assert retried.is_error is True and retried.structured_content["error"]["code"] == "approval_required"
    assert [a["approvalId"] for a in person.ok("GET", "/rpc/approvals?status=pending")["items"]] == [approval_id]
    assert server.calls["echo"] == 0

    # The person approves on the page; then the host's call goes through.
    assert person.ok("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"})["status"] == "approved"
    done = run(again)
    assert done.is_error is False and done.structured_content["content"] == "echo: wire money"
    assert server.calls["echo"] == 1


def test_a_binding_a_host_drafts_keeps_requires_user_confirmation(hosted_stack: StackClient) -> None:
    person = Person(hosted_stack)
    waived = {"name": "journal", "hostProfile": "laptop", "mcpServerId": "notes", "mcpToolName": "append",
              "inputSchema": SCHEMA, "requiresUserConfirmation": False}

    async def draft() -> tuple[Any, Any]:
        async with person.host_session() as client:
            started = await client.call_tool("start_create", {"description": DESCRIPTION})
            gaps = started.structured_content["gaps"]
            answers = [{"gapId": gap["gapId"], "binding": waived} for gap in gaps if gap["kind"] == "missing_binding"]
            assert answers, gaps
            ready = await client.call_tool("generate_draft", {"draftId": started.structured_content["draftId"],
                                                              "answers": answers})
            assert ready.is_error is False, ready.structured_content
            confirmed = await client.call_tool("confirm_draft", {"draftId": ready.structured_content["draftId"],
                                                                 "revision": ready.structured_content["revision"]})
            return ready, confirmed

    ready, confirmed = run(draft)
    assert confirmed.is_error is False, confirmed.structured_content
    capability = confirmed.structured_content
    assert capability["status"] == "draft"
    [stored] = capability["toolBindings"]
    assert stored["name"] == "journal" and stored["requiresUserConfirmation"] is True
    path = f"/rpc/user-capabilities/{capability['userCapabilityId']}"
    assert [b["requiresUserConfirmation"] for b in person.ok("GET", path)["toolBindings"]] == [True]

    # Confirming stays open to the host; activating is the person's.
    status, body = person.as_host("POST", f"{path}/activate", {"expectedVersion": capability["version"]})
    assert (status, body["error"]["code"]) == (403, "person_required")
    assert person.ok("GET", path)["status"] == "draft"
    assert person.ok("POST", f"{path}/activate", {"expectedVersion": capability["version"]})["status"] == "active"
