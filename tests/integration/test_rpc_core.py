"""Profile, agents, conversations and history through the RPC handler with the sample events (ownership and
group conversations run on the store fakes: tests/unit/test_rpc_on_fakes.py)."""

from __future__ import annotations

import pytest

from tests.support import invoke, load_event, load_function


@pytest.fixture
def rpc(aws):
    return load_function("RpcFunction")


def create_agent(rpc, user="user-alice", name="Mika"):
    status, body = invoke(rpc, load_event("rpc_create_agent.json", user=user, body={"name": name}))
    assert status == 201, body
    return body


def test_health_needs_no_token(rpc):
    status, body = invoke(rpc, load_event("rpc_health.json"))
    assert status == 200
    assert body["status"] == "ok" and body["version"]


def test_profile_created_by_first_put_then_updated(rpc):
    status, body = invoke(rpc, load_event("rpc_get_me.json"))
    assert status == 404 and body["error"]["code"] == "not_found"
    status, body = invoke(rpc, load_event("rpc_put_me.json", body={}))
    assert status == 200
    assert body["timezone"] == "Asia/Shanghai" and body["userId"] == "user-alice"
    status, body = invoke(rpc, load_event("rpc_put_me.json", body={"timezone": "Europe/London", "displayName": "Al"}))
    assert status == 200 and body["timezone"] == "Europe/London" and body["displayName"] == "Al"
    status, again = invoke(rpc, load_event("rpc_get_me.json"))
    assert again == body


def test_invalid_timezone_is_422(rpc):
    status, body = invoke(rpc, load_event("rpc_put_me.json", body={"timezone": "Mars/Olympus"}))
    assert status == 422 and body["error"]["code"] == "invalid_timezone"


def test_agent_creation_makes_default_conversation(rpc):
    agent = create_agent(rpc)
    assert agent["lastReplyAt"] is None and agent["name"] == "Mika"
    conv_id = agent["defaultConversationId"]
    status, conv = invoke(rpc, load_event("rpc_list_messages.json", path_ids={"CONVERSATION_ID": conv_id}))
    assert status == 200 and conv == {"items": [], "nextCursor": None}
    status, listing = invoke(rpc, load_event("rpc_list_conversations.json"))
    assert status == 200
    assert [c["conversationId"] for c in listing["items"]] == [conv_id]
    assert listing["items"][0]["kind"] == "single" and listing["items"][0]["agentIds"] == [agent["agentId"]]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ("not json", 400, "bad_request"),
        ("[1, 2]", 400, "bad_request"),
        ({"name": ""}, 422, "validation_error"),
        ({"name": "x" * 41}, 422, "validation_error"),
        ({"name": "ok", "extra": 1}, 422, "validation_error"),
        ("x" * (64 * 1024 + 1), 413, "payload_too_large"),
    ],
)
def test_bad_bodies_use_the_envelope(rpc, body, status, code):
    got, payload = invoke(rpc, load_event("rpc_create_agent.json", body=body))
    assert got == status
    assert payload["error"]["code"] == code
    assert set(payload["error"]) == {"code", "message", "details"}


def test_validation_errors_list_field_paths(rpc):
    _, payload = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "ok", "persona": 5, "bogus": True}))
    paths = {e["path"] for e in payload["error"]["details"]["errors"]}
    assert paths == {"persona", "bogus"}


def test_non_utf8_base64_body_is_400(rpc):
    import base64

    event = load_event("rpc_create_agent.json")
    event["body"] = base64.b64encode(b'{"name": "\xff\xfe"}').decode()
    event["isBase64Encoded"] = True
    status, payload = invoke(rpc, event)
    assert status == 400 and payload["error"]["code"] == "bad_request"


def test_unknown_route_and_wrong_method(rpc):
    event = load_event("rpc_list_agents.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/rpc/nothing-here"
    status, payload = invoke(rpc, event)
    assert status == 404 and payload["error"]["code"] == "not_found"
    event = load_event("rpc_list_agents.json")
    event["requestContext"]["http"]["method"] = "DELETE"
    status, payload = invoke(rpc, event)
    assert status == 405 and payload["error"]["code"] == "method_not_allowed"


def test_missing_claims_is_401(rpc):
    status, payload = invoke(rpc, load_event("rpc_list_agents.json", user=None))
    assert status == 401 and payload["error"]["code"] == "unauthenticated"


def test_paging_agents(rpc):
    for i in range(5):
        create_agent(rpc, name=f"agent{i}")
    seen, cursor = [], None
    while True:
        query = {"limit": "2"} | ({"cursor": cursor} if cursor else {})
        status, page = invoke(rpc, load_event("rpc_list_agents.json", query=query))
        assert status == 200 and len(page["items"]) <= 2
        seen += [a["name"] for a in page["items"]]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert sorted(seen) == [f"agent{i}" for i in range(5)]
    status, payload = invoke(rpc, load_event("rpc_list_agents.json", query={"limit": "0"}))
    assert status == 422
    status, payload = invoke(rpc, load_event("rpc_list_agents.json", query={"cursor": "garbage!"}))
    assert status == 422
