"""Hosted endpoints over real HTTP (docs/contract.md "Hosted external workflows"): a local stack of its own whose
HostedFunction reaches a real MCP server (tests/hosted_server.py: the official SDK over HTTPS with a trustme
certificate, on a 127/8 address other than 127.0.0.1, port 443) through the local-only settings, which the
stack passes through from the environment it starts in (the `hosted` and `hosted_stack` fixtures, in tests/local_stack.py:
the page's browser tests use them too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import local_stack
from tests.hosted_server import NAME, HostedServer

from .conftest import Caller, StackClient

# Named here too: other hosted test modules take them from this module (`endpoints_http.hosted`).
hosted = local_stack.hosted
hosted_stack = local_stack.hosted_stack


def register(user: Caller, name: str, url: str, **extra: str) -> tuple[int, dict]:
    return user.call("POST", "/rpc/hosted-endpoints",
                     {"name": name, "displayName": "Test workflow", "url": url, **extra})


def test_register_sees_the_snapshot_and_never_shows_the_secret(hosted_stack: StackClient, hosted: HostedServer,
                                                              ) -> None:
    user = Caller(hosted_stack)
    status, body = register(user, "test_flow", hosted.url(), authToken="secret-token-123")
    assert status == 201, body
    assert body["host"] == NAME and body["status"] == "active" and body["version"] == 1
    tools = {t["name"]: t for t in body["snapshot"]["tools"]}
    assert set(tools) == {"add", "echo"}
    assert tools["add"]["inputSchema"]["properties"].keys() == {"a", "b"}
    assert tools["add"]["enabled"] is True and tools["add"]["requiresApproval"] is True
    assert len(body["snapshot"]["fingerprint"]) == 64
    text = json.dumps(body)
    assert "/mcp" not in text and "secret-token-123" not in text

    listed = user.ok("GET", "/rpc/hosted-endpoints")
    assert [e["endpointId"] for e in listed["items"]] == [body["endpointId"]]
    one = user.ok("GET", f"/rpc/hosted-endpoints/{body['endpointId']}")
    assert one["snapshot"] == body["snapshot"]
    assert Caller(hosted_stack).call("GET", f"/rpc/hosted-endpoints/{body['endpointId']}")[0] == 404

    # the name is unique per user
    status, taken = register(user, "test_flow", hosted.url())
    assert (status, taken["error"]["code"]) == (409, "endpoint_name_taken")

    # switches, under the optimistic lock
    patched = user.ok("PATCH", f"/rpc/hosted-endpoints/{body['endpointId']}",
                      {"expectedVersion": 1, "tools": [{"name": "add", "requiresApproval": False}]})
    assert patched["version"] == 2
    assert {t["name"]: t["requiresApproval"] for t in patched["snapshot"]["tools"]} == {"add": False, "echo": True}
    status, stale = user.call("PATCH", f"/rpc/hosted-endpoints/{body['endpointId']}",
                              {"expectedVersion": 1, "status": "disabled"})
    assert (status, stale["error"]["code"], stale["error"]["details"]) == (409, "version_conflict",
                                                                           {"currentVersion": 2})
    status, unknown = user.call("PATCH", f"/rpc/hosted-endpoints/{body['endpointId']}",
                                {"expectedVersion": 2, "tools": [{"name": "nope", "enabled": False}]})
    assert (status, unknown["error"]["code"]) == (422, "unknown_tool")

    # the audit keeps the host and a hash, never the URL or the token
    events = user.ok("GET", "/rpc/skills/audit-events")["items"]
    registered = [e for e in events if e["action"] == "hosted_endpoint.register"]
    assert len(registered) == 1 and registered[0]["metadata"]["host"] == NAME
    assert len(registered[0]["metadata"]["urlSha256"]) == 64
    assert "/mcp" not in json.dumps(events) and "secret-token-123" not in json.dumps(events)

    # stored sealed: the table holds neither the URL's path nor the token
    table = hosted_stack.env["SKILLS_TABLE_HOSTED_ENDPOINTS"]
    from skillcore_local.ddb_local import client

    items = client(hosted_stack.env["SKILLS_DYNAMODB_ENDPOINT"]).scan(TableName=table)["Items"]
    raw = json.dumps(items)
    assert body["endpointId"] in raw and "secret-token-123" not in raw and f"{NAME}/mcp" not in raw

    assert user.call("DELETE", f"/rpc/hosted-endpoints/{body['endpointId']}")[0] == 204
    assert user.ok("GET", "/rpc/hosted-endpoints")["items"] == []
    again, _ = register(user, "test_flow", hosted.url())
    assert again == 201  # the name and the quota unit were given back


@pytest.mark.parametrize(("url", "reason"), [
    ("https://internal.mcp.test/mcp", "address_loopback"),  # resolves to 127.0.0.1: never allowed
    ("https://api.elsewhere.test/mcp", "domain_not_allowed"),
    ("https://127.0.0.1/mcp", "ip_literal"),
    ("http://api.mcp.test/mcp", "scheme_not_https"),
])
def test_refused_urls_say_why(hosted_stack: StackClient, url: str, reason: str) -> None:
    status, body = register(Caller(hosted_stack), "refused", url)
    assert (status, body["error"]["code"], body["error"]["details"]) == (422, "url_not_allowed", {"reason": reason})


def test_an_endpoint_that_is_not_an_mcp_server_is_an_upstream_error(hosted_stack: StackClient,
                                                                    hosted: HostedServer) -> None:
    status, body = register(Caller(hosted_stack), "not_mcp", hosted.url("/nothing-here"))
    assert (status, body["error"]["code"]) == (502, "upstream_error"), body


def test_ten_endpoints_per_user(hosted_stack: StackClient, hosted: HostedServer) -> None:
    user = Caller(hosted_stack)
    for index in range(10):
        assert register(user, f"flow_{index}", hosted.url())[0] == 201
    status, body = register(user, "flow_10", hosted.url())
    assert (status, body["error"]["code"], body["error"]["details"]) == (422, "quota_exceeded",
                                                                         {"quota": "endpoints", "limit": 10})


def test_secrets_key_file_is_under_the_data_dir(hosted_stack: StackClient) -> None:
    key = Path(hosted_stack.env["SKILLS_LOCAL_DATA_DIR"]) / "hosted-secrets.key"
    assert key.is_file() and key.stat().st_mode & 0o077 == 0 and len(key.read_bytes()) == 32
