"""The core of the HTTP contract (docs/contract.md) over real HTTP against the local stack: profile, agents,
conversations, the chat turn with the offline model, history, skills and runs, and the error envelope
for every malformed request."""

from __future__ import annotations

import base64
import json
import re
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import jwt
import pytest

from skillcore.conversations.message_store import put_message_op
from skillcore.conversations.models import Message, Origin, Role
from skillcore.db.dynamo import make_db
from skillcore.settings import Settings

from .conftest import StackClient

pytestmark = [
    pytest.mark.stack,
    pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning"),
]

API_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
ULID_LIKE = re.compile(r"^[0-9A-Za-z_-]{1,64}$")
BUILTIN_SKILLS = {
    "memory-recall": ("tool", [("memory:read", "L1", "persistent")]),
    "goal-check-in-reminder": ("background", [("proactive_message:write", "L2", "persistent")]),
    "memory-context": ("prompt", [("memory:read", "L1", "persistent")]),
    "memory-extraction": ("automation", [("memory:write", "L2", "persistent")]),
    "goal-setting": ("workflow", []),
}


def new_user(prefix: str = "api") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def assert_envelope(body: Any, code: str | None = None) -> dict[str, Any]:
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    if code is not None:
        assert error["code"] == code, body
    return error


class Caller:
    """One user of the API, holding a token for it."""

    def __init__(self, stack: StackClient, user: str | None = None, *, admin: bool = False) -> None:
        self.stack = stack
        self.user = user or new_user()
        self.auth = stack.token(self.user, admin=admin)

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
        return self.stack.call(method, path, body=body, token=self.auth, **kwargs)

    def ok(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        got, payload = self.call(method, path, body)
        assert got == status, (method, path, got, payload)
        return payload

    def agent(self, name: str = "Mika", persona: str = "") -> dict[str, Any]:
        return self.ok("POST", "/rpc/agents", {"name": name, "persona": persona}, status=201)

    def say(self, conversation_id: str, text: str, cid: str, **extra: Any) -> dict[str, Any]:
        return self.ok(
            "POST", f"/rpc/conversations/{conversation_id}/messages",
            {"clientMessageId": cid, "text": text, **extra},
        )

    def history(self, conversation_id: str, **query: str) -> dict[str, Any]:
        qs = "&".join(f"{k}={v}" for k, v in query.items())
        return self.ok("GET", f"/rpc/conversations/{conversation_id}/messages" + (f"?{qs}" if qs else ""))

    def all_messages(self, conversation_id: str) -> list[dict[str, Any]]:
        return self.history(conversation_id, limit="100")["items"]

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        return self.ok("GET", f"/rpc/conversations/{conversation_id}")

    def runs(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/skills/runs?limit=100")["items"]

    def catalog(self) -> dict[str, dict[str, Any]]:
        page = self.ok("GET", "/rpc/skills")
        return {item["skillId"]: item for item in page["items"]}


@pytest.fixture
def alice(stack: StackClient) -> Caller:
    return Caller(stack, new_user("alice"))


@pytest.fixture
def bob(stack: StackClient) -> Caller:
    return Caller(stack, new_user("bob"))


# ---------------------------------------------------------------------------------------------- health, profile


def test_health_needs_no_token_and_ignores_a_bad_one(stack: StackClient) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        response = stack.request("GET", "/rpc/health", headers=headers)
        assert response.status == 200
        assert (response.header("content-type") or "").startswith("application/json")
        body = response.json()
        assert body["status"] == "ok"
        assert re.fullmatch(r"\d+\.\d+\.\d+(?:[-+].*)?", body["version"])


def test_profile_is_created_by_the_first_put_and_updated_by_the_next(alice: Caller) -> None:
    status, body = alice.call("GET", "/rpc/me")
    assert status == 404
    assert_envelope(body, "not_found")

    created = alice.ok("PUT", "/rpc/me", {})
    assert created["userId"] == alice.user
    assert created["timezone"] == "Asia/Shanghai"
    assert API_TIME.match(created["createdAt"]) and API_TIME.match(created["updatedAt"])
    assert alice.ok("GET", "/rpc/me") == created

    updated = alice.ok("PUT", "/rpc/me", {"timezone": "Europe/London", "displayName": "Alice"})
    assert updated["timezone"] == "Europe/London" and updated["displayName"] == "Alice"
    assert updated["createdAt"] == created["createdAt"] and updated["userId"] == alice.user
    assert alice.ok("GET", "/rpc/me") == updated

    # Only the given fields change.
    again = alice.ok("PUT", "/rpc/me", {"displayName": "Al"})
    assert again["timezone"] == "Europe/London" and again["displayName"] == "Al"

    # The first PUT created the default daily memory job, and only the first.
    jobs = alice.ok("GET", "/rpc/automation-jobs")["items"]
    assert [(j["isDefault"], j["title"], j["scheduleType"], j["localTime"]) for j in jobs] == [
        (True, "每日记忆整理", "daily", "10:00")
    ]


def test_profile_rules(alice: Caller, bob: Caller) -> None:
    status, body = alice.call("PUT", "/rpc/me", {"timezone": "Mars/Olympus"})
    assert status == 422
    assert_envelope(body, "invalid_timezone")
    status, body = alice.call("PUT", "/rpc/me", {"displayName": "x" * 61})
    assert status == 422
    assert "displayName" in {e["path"] for e in assert_envelope(body, "validation_error")["details"]["errors"]}
    # A refused first PUT creates nothing.
    assert alice.call("GET", "/rpc/me")[0] == 404
    # The user is the token's subject, never a field of the body.
    status, body = bob.call("PUT", "/rpc/me", {"userId": alice.user})
    assert status == 422
    assert alice.call("GET", "/rpc/me")[0] == 404
    assert bob.call("GET", "/rpc/me")[0] == 404


# ---------------------------------------------------------------------------------------------- agents, conversations


def test_agent_creation_and_reads(alice: Caller, bob: Caller) -> None:
    agent = alice.agent("Mika", persona="A patient coach.")
    assert set(agent) >= {"agentId", "name", "persona", "defaultConversationId", "lastReplyAt", "createdAt"}
    assert agent["name"] == "Mika" and agent["persona"] == "A patient coach."
    assert agent["lastReplyAt"] is None and API_TIME.match(agent["createdAt"])
    assert ULID_LIKE.match(agent["agentId"]) and agent["defaultConversationId"]

    assert alice.ok("GET", f"/rpc/agents/{agent['agentId']}") == agent
    listing = alice.ok("GET", "/rpc/agents")
    assert listing == {"items": [agent], "nextCursor": None}

    # Someone else's agent is answered exactly like a missing one.
    status, body = bob.call("GET", f"/rpc/agents/{agent['agentId']}")
    missing_status, missing = bob.call("GET", "/rpc/agents/01NOSUCHAGENT0000000000000")
    assert status == missing_status == 404
    assert assert_envelope(body)["code"] == assert_envelope(missing)["code"]
    assert assert_envelope(body)["code"] in {"not_found", "agent_not_found"}
    assert bob.ok("GET", "/rpc/agents") == {"items": [], "nextCursor": None}

    plain = alice.agent("Plain")
    assert plain["persona"] == ""


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 41}, "name"),
        ({"name": "ok", "persona": "p" * 2001}, "persona"),
        ({"name": 5}, "name"),
        ({}, "name"),
    ],
)
def test_agent_validation(alice: Caller, body: dict[str, Any], path: str) -> None:
    status, payload = alice.call("POST", "/rpc/agents", body)
    assert status == 422
    assert path in {e["path"] for e in assert_envelope(payload, "validation_error")["details"]["errors"]}
    assert alice.ok("GET", "/rpc/agents")["items"] == []


def test_agents_page_with_cursors(alice: Caller) -> None:
    created = [alice.agent(f"agent{i}")["agentId"] for i in range(5)]
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(10):
        page = alice.ok("GET", "/rpc/agents?limit=2" + (f"&cursor={cursor}" if cursor else ""))
        assert len(page["items"]) <= 2
        seen += [a["agentId"] for a in page["items"]]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert sorted(seen) == sorted(created) and len(seen) == 5


def test_default_conversation_of_an_agent(alice: Caller, bob: Caller) -> None:
    agent = alice.agent("Mika")
    conv = alice.conversation(agent["defaultConversationId"])
    assert conv["conversationId"] == agent["defaultConversationId"]
    assert conv["kind"] == "single" and conv["agentIds"] == [agent["agentId"]]
    assert conv["messageCount"] == 0 and conv["lastMessageAt"] is None and conv["lastMessagePreview"] is None
    assert API_TIME.match(conv["createdAt"]) and isinstance(conv["title"], str)
    assert alice.history(agent["defaultConversationId"]) == {"items": [], "nextCursor": None}

    singles = alice.ok("GET", "/rpc/conversations?kind=single")["items"]
    assert [c["conversationId"] for c in singles] == [agent["defaultConversationId"]]
    assert alice.ok("GET", "/rpc/conversations?kind=group")["items"] == []

    for path in (f"/rpc/conversations/{conv['conversationId']}", f"/rpc/conversations/{conv['conversationId']}/messages"):
        status, body = bob.call("GET", path)
        assert status == 404
        assert_envelope(body, "not_found")
    assert bob.ok("GET", "/rpc/conversations")["items"] == []


def test_group_conversations(alice: Caller, bob: Caller) -> None:
    agents = [alice.agent(f"A{i}")["agentId"] for i in range(9)]
    bobs = bob.agent("B")["agentId"]

    two = alice.ok("POST", "/rpc/conversations", {"kind": "group", "agentIds": agents[:2]}, status=201)
    assert two["kind"] == "group" and two["agentIds"] == agents[:2] and two["messageCount"] == 0
    assert two["title"]
    eight = alice.ok(
        "POST", "/rpc/conversations", {"kind": "group", "agentIds": agents[:8], "title": "Everyone"}, status=201
    )
    assert eight["agentIds"] == agents[:8] and eight["title"] == "Everyone"
    assert alice.conversation(eight["conversationId"]) == eight

    for body in (
        {"kind": "group", "agentIds": agents[:1]},
        {"kind": "group", "agentIds": agents[:9]},
        {"kind": "group", "agentIds": []},
        {"kind": "single", "agentIds": agents[:2]},
        {"kind": "group", "agentIds": agents[:2], "title": ""},
        {"agentIds": agents[:2]},
    ):
        status, payload = alice.call("POST", "/rpc/conversations", body)
        assert status == 422, body
        assert_envelope(payload, "validation_error")
    status, payload = alice.call("POST", "/rpc/conversations", {"kind": "group", "agentIds": [agents[0], agents[0]]})
    assert status == 422

    status, payload = alice.call("POST", "/rpc/conversations", {"kind": "group", "agentIds": [agents[0], bobs]})
    assert status == 404
    assert_envelope(payload, "agent_not_found")

    groups = alice.ok("GET", "/rpc/conversations?kind=group")["items"]
    assert sorted(c["conversationId"] for c in groups) == sorted([two["conversationId"], eight["conversationId"]])
    assert all(c["kind"] == "group" for c in groups)
    assert bob.call("GET", f"/rpc/conversations/{two['conversationId']}")[0] == 404


# ---------------------------------------------------------------------------------------------- the chat turn


def test_plain_turn_and_conversation_metadata(alice: Caller) -> None:
    agent = alice.agent("Mika")
    conv = agent["defaultConversationId"]
    body = alice.say(conv, "Hello there", "c1")

    assert set(body) == {"userMessage", "reply", "run"}
    user_message, reply, run = body["userMessage"], body["reply"], body["run"]
    assert user_message["role"] == "user" and user_message["text"] == "Hello there"
    assert user_message["origin"] == "chat" and user_message["conversationId"] == conv
    assert reply["role"] == "assistant" and reply["agentId"] == agent["agentId"] and reply["origin"] == "chat"
    assert reply["text"] == "I hear you: “Hello there”."
    assert run["kind"] == "plain" and run["outcome"] == "succeeded"
    assert isinstance(run["durationMs"], int) and run["durationMs"] >= 0 and run["runId"]
    assert reply["createdAt"] >= user_message["createdAt"]

    assert alice.all_messages(conv) == [user_message, reply]
    summary = alice.conversation(conv)
    assert summary["messageCount"] == 2
    assert summary["lastMessageAt"] == reply["createdAt"]
    assert summary["lastMessagePreview"] == reply["text"]
    assert alice.ok("GET", f"/rpc/agents/{agent['agentId']}")["lastReplyAt"] == reply["createdAt"]

    long_text = "Tell me a story about " + "mountains and rivers " * 12
    long = alice.say(conv, long_text, "c2")
    summary = alice.conversation(conv)
    assert summary["messageCount"] == 4
    assert len(summary["lastMessagePreview"]) <= 80
    assert long["reply"]["text"].startswith(summary["lastMessagePreview"].rstrip("…"))
    assert summary["lastMessageAt"] == long["reply"]["createdAt"]

    runs = alice.runs()
    assert [r["runId"] for r in runs[:2]] == [long["run"]["runId"], run["runId"]]
    assert all(r["conversationId"] == conv and API_TIME.match(r["at"]) for r in runs)


def test_goal_setting_workflow_from_start_to_summary(alice: Caller) -> None:
    conv = alice.agent()["defaultConversationId"]
    first = alice.say(conv, "I want to set a goal", "g1")
    assert first["run"]["kind"] == "workflow"
    assert first["run"]["skillId"] == "goal-setting" and first["run"]["skillVersion"] == "1.0.0"
    second = alice.say(conv, "Read 12 books", "g2")
    assert "Read 12 books" in second["reply"]["text"] and second["run"]["kind"] == "workflow"
    third = alice.say(conv, "2027-12-31", "g3")
    assert "Read 12 books" in third["reply"]["text"] and "2027-12-31" in third["reply"]["text"]
    summary = alice.say(conv, "yes", "g4")
    assert "Goal: “Read 12 books”" in summary["reply"]["text"]
    assert "Deadline: “2027-12-31”" in summary["reply"]["text"]
    after = alice.say(conv, "thanks!", "g5")
    assert after["run"]["kind"] == "plain"

    kinds = [r["kind"] for r in alice.runs()]
    assert kinds == ["plain", "workflow", "workflow", "workflow", "workflow"]
    assert alice.conversation(conv)["messageCount"] == 10


def test_goal_setting_cancel(alice: Caller) -> None:
    conv = alice.agent()["defaultConversationId"]
    start = alice.say(conv, "帮我定个目标", "z1")
    assert start["run"]["kind"] == "workflow" and "目标" in start["reply"]["text"]
    cancelled = alice.say(conv, "/cancel", "z2")
    assert cancelled["run"]["kind"] == "workflow" and "已取消" in cancelled["reply"]["text"]
    after = alice.say(conv, "学会游泳", "z3")
    assert after["run"]["kind"] == "plain"


def test_daily_plan_prompt_skill(alice: Caller) -> None:
    conv = alice.agent()["defaultConversationId"]
    body = alice.say(conv, "Can you help me plan my day?", "p1")
    assert body["run"]["kind"] == "prompt" and body["run"]["skillId"] == "daily-plan"
    assert body["run"]["outcome"] == "succeeded"
    assert body["reply"]["text"].endswith("[skills: daily-plan]")


def test_group_chat_answering_agent(alice: Caller) -> None:
    a, b = alice.agent("A"), alice.agent("B")
    group = alice.ok("POST", "/rpc/conversations", {"kind": "group", "agentIds": [a["agentId"], b["agentId"]]}, status=201)
    conv = group["conversationId"]
    assert alice.say(conv, "hi all", "x1")["reply"]["agentId"] == a["agentId"]
    assert alice.say(conv, "hi B", "x2", agentId=b["agentId"])["reply"]["agentId"] == b["agentId"]
    stranger = alice.agent("C")["agentId"]
    status, payload = alice.call(
        "POST", f"/rpc/conversations/{conv}/messages", {"clientMessageId": "x3", "text": "hi", "agentId": stranger}
    )
    assert status == 404
    assert_envelope(payload, "agent_not_found")
    assert alice.conversation(conv)["messageCount"] == 4
    assert alice.ok("GET", f"/rpc/agents/{b['agentId']}")["lastReplyAt"] is not None


def test_duplicate_client_message_id_replays_the_same_body(alice: Caller) -> None:
    conv = alice.agent()["defaultConversationId"]
    path = f"/rpc/conversations/{conv}/messages"
    first = alice.stack.request("POST", path, body={"clientMessageId": "same", "text": "/goal"}, token=alice.auth)
    assert first.status == 200
    runs_before = alice.runs()
    again = alice.stack.request("POST", path, body={"clientMessageId": "same", "text": "/goal"}, token=alice.auth)
    assert again.status == 200
    assert again.json() == first.json()
    assert again.body == first.body

    assert len(alice.all_messages(conv)) == 2
    assert alice.conversation(conv)["messageCount"] == 2
    assert [r["runId"] for r in alice.runs()] == [r["runId"] for r in runs_before]

    status, payload = alice.call("POST", path, {"clientMessageId": "same", "text": "something else"})
    assert status == 409
    assert_envelope(payload, "client_message_conflict")
    assert len(alice.all_messages(conv)) == 2

    # The replay did not advance the workflow: the next message is taken as the goal.
    step = alice.say(conv, "Run a marathon", "next")
    # (a bare `/goal` in a new conversation shows no language: the session started in the default, Chinese)
    assert "Run a marathon" in step["reply"]["text"] and "你希望什么时候完成" in step["reply"]["text"]

    # The id is scoped to its conversation.
    other = alice.agent("Other")["defaultConversationId"]
    elsewhere = alice.say(other, "/goal", "same")
    assert elsewhere["userMessage"]["messageId"] != first.json()["userMessage"]["messageId"]


def test_turn_in_someone_elses_conversation_is_404_and_writes_nothing(alice: Caller, bob: Caller) -> None:
    conv = alice.agent()["defaultConversationId"]
    status, payload = bob.call("POST", f"/rpc/conversations/{conv}/messages", {"clientMessageId": "e1", "text": "hi"})
    assert status == 404
    assert_envelope(payload, "not_found")
    assert alice.all_messages(conv) == []
    assert bob.runs() == [] and alice.runs() == []


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"clientMessageId": "bad id!", "text": "x"}, "clientMessageId"),
        ({"clientMessageId": "x" * 65, "text": "x"}, "clientMessageId"),
        ({"clientMessageId": "ok", "text": ""}, "text"),
        ({"clientMessageId": "ok", "text": "x" * 4001}, "text"),
        ({"clientMessageId": "ok", "text": "x", "conversationId": "other"}, "conversationId"),
        ({"text": "x"}, "clientMessageId"),
        ({"clientMessageId": "ok"}, "text"),
    ],
)
def test_invalid_turns_are_422(alice: Caller, body: dict[str, Any], path: str) -> None:
    conv = alice.agent()["defaultConversationId"]
    status, payload = alice.call("POST", f"/rpc/conversations/{conv}/messages", body)
    assert status == 422
    assert path in {e["path"] for e in assert_envelope(payload, "validation_error")["details"]["errors"]}
    assert alice.all_messages(conv) == []


def test_history_pages_oldest_first_with_cursors(alice: Caller) -> None:
    conv = alice.agent()["defaultConversationId"]
    sent = [alice.say(conv, f"message {i}", f"h{i}") for i in range(5)]
    expected = [m["messageId"] for turn in sent for m in (turn["userMessage"], turn["reply"])]

    seen: list[dict[str, Any]] = []
    cursor: str | None = None
    pages = 0
    for _ in range(20):
        page = alice.history(conv, limit="3", **({"cursor": cursor} if cursor else {}))
        pages += 1
        assert len(page["items"]) <= 3
        seen += page["items"]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert cursor is None and pages >= 4
    assert [m["messageId"] for m in seen] == expected
    assert [m["createdAt"] for m in seen] == sorted(m["createdAt"] for m in seen)
    assert [m["text"] for m in seen if m["role"] == "user"] == [f"message {i}" for i in range(5)]

    assert [m["messageId"] for m in alice.history(conv, limit="100")["items"]] == expected
    assert alice.history(conv, limit="100")["nextCursor"] is None


# ---------------------------------------------------------------------------------------------- skills and runs


def test_catalog_lists_the_builtin_skills(alice: Caller) -> None:
    catalog = alice.catalog()
    for skill_id, (kind, permissions) in BUILTIN_SKILLS.items():
        item = catalog[skill_id]
        assert set(item) >= {"skillId", "version", "kind", "name", "description", "enabled", "permissions"}
        assert item["version"] == "1.0.0" and item["kind"] == kind, item
        assert item["enabled"] is True and item["name"] and isinstance(item["description"], str)
        assert [(p["code"], p["riskLevel"], p["approvalMode"]) for p in item["permissions"]] == permissions
        assert all(p["granted"] is False for p in item["permissions"])
    assert alice.ok("GET", "/rpc/skills")["nextCursor"] is None


def test_skill_switch_is_per_user_and_changes_the_executor(alice: Caller, bob: Caller) -> None:
    item = alice.ok("PATCH", "/rpc/skills/goal-setting", {"enabled": False})
    assert item["skillId"] == "goal-setting" and item["enabled"] is False and item["kind"] == "workflow"
    assert alice.catalog()["goal-setting"]["enabled"] is False
    assert bob.catalog()["goal-setting"]["enabled"] is True

    conv = alice.agent()["defaultConversationId"]
    assert alice.say(conv, "/goal", "s1")["run"]["kind"] == "plain"
    assert alice.ok("PATCH", "/rpc/skills/goal-setting", {"enabled": True})["enabled"] is True
    assert alice.say(conv, "/goal", "s2")["run"]["kind"] == "workflow"

    status, payload = alice.call("PATCH", "/rpc/skills/no-such-skill", {"enabled": False})
    assert status == 404
    assert_envelope(payload, "skill_not_found")
    for body in ({"enabled": "no"}, {"enabled": 0}, {}, {"enabled": True, "version": "2.0.0"}):
        status, payload = alice.call("PATCH", "/rpc/skills/goal-setting", body)
        assert status == 422, body
        assert_envelope(payload, "validation_error")
    assert alice.catalog()["goal-setting"]["enabled"] is True


def test_runs_list_is_newest_first_and_pages(alice: Caller, bob: Caller) -> None:
    conv = alice.agent()["defaultConversationId"]
    turns = [alice.say(conv, f"hello {i}", f"r{i}") for i in range(3)]
    runs = alice.runs()
    assert [r["runId"] for r in runs] == [t["run"]["runId"] for t in reversed(turns)]
    for run in runs:
        assert set(run) >= {"runId", "kind", "outcome", "durationMs", "conversationId", "at"}
        assert "text" not in run
    first = alice.ok("GET", "/rpc/skills/runs?limit=2")
    assert len(first["items"]) == 2 and first["nextCursor"]
    rest = alice.ok("GET", f"/rpc/skills/runs?limit=2&cursor={first['nextCursor']}")
    assert [r["runId"] for r in first["items"] + rest["items"]] == [r["runId"] for r in runs]
    assert bob.runs() == []


# ---------------------------------------------------------------------------------------------- malformed requests

BODY_ROUTES = [
    ("PUT", "/rpc/me"),
    ("POST", "/rpc/agents"),
    ("POST", "/rpc/conversations"),
    ("POST", "/rpc/conversations/{conv}/messages"),
    ("POST", "/rpc/agents/{agent}/memories"),
    ("PATCH", "/rpc/skills/goal-setting"),
    ("PATCH", "/rpc/skills/permissions"),
    ("POST", "/rpc/skills/background-jobs"),
]

MALFORMED = {
    "not json": (b"this is not json", 400, "bad_request"),
    "truncated json": (b'{"name": "x"', 400, "bad_request"),
    "json array": (b'[{"name": "x"}]', 400, "bad_request"),
    "json string": (b'"x"', 400, "bad_request"),
    "json number": (b"42", 400, "bad_request"),
    "json null": (b"null", 400, "bad_request"),
    "empty body": (b"", 400, "bad_request"),
    "invalid utf-8": (b'{"name": "\xff\xfe\xfd"}', 400, "bad_request"),
    "deeply nested": (b"[" * 20000 + b"]" * 20000, 400, "bad_request"),
    "over 64 KiB": (json.dumps({"name": "x", "text": "y" * (64 * 1024)}).encode(), 413, "payload_too_large"),
}


@pytest.fixture
def owned(alice: Caller) -> dict[str, str]:
    agent = alice.agent()
    return {"agent": agent["agentId"], "conv": agent["defaultConversationId"]}


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize(("method", "route"), BODY_ROUTES, ids=[f"{m} {r}" for m, r in BODY_ROUTES])
def test_malformed_bodies_get_the_envelope(
    alice: Caller, owned: dict[str, str], method: str, route: str, case: str
) -> None:
    raw, status, code = MALFORMED[case]
    path = route.format(**owned)
    response = alice.stack.request(
        method, path, raw_body=raw, token=alice.auth, headers={"Content-Type": "application/json"}
    )
    assert response.status == status, (response.status, response.body[:300])
    assert (response.header("content-type") or "").startswith("application/json")
    assert_envelope(response.json(), code)
    assert alice.all_messages(owned["conv"]) == []


UNKNOWN_FIELD_BODIES = {
    ("PUT", "/rpc/me"): {"timezone": "Europe/London", "bogus": 1},
    ("POST", "/rpc/agents"): {"name": "ok", "bogus": 1},
    ("POST", "/rpc/conversations"): {"kind": "group", "agentIds": ["{agent}", "{agent2}"], "bogus": 1},
    ("POST", "/rpc/conversations/{conv}/messages"): {"clientMessageId": "u1", "text": "hi", "bogus": 1},
    ("POST", "/rpc/agents/{agent}/memories"): {"title": "t", "content": "c", "bogus": 1},
    ("PATCH", "/rpc/skills/goal-setting"): {"enabled": False, "bogus": 1},
    ("PATCH", "/rpc/skills/permissions"): {
        "skillId": "memory-recall", "permissionCode": "memory:read", "scope": {"type": "user"},
        "granted": True, "bogus": 1,
    },
    ("POST", "/rpc/skills/background-jobs"): {
        "skillId": "goal-check-in-reminder", "agentId": "{agent}", "runAt": "2030-01-01T00:00:00Z", "bogus": 1,
    },
}


def _fill(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**ids) if "{" in value else value
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


@pytest.mark.parametrize(("method", "route"), BODY_ROUTES, ids=[f"{m} {r}" for m, r in BODY_ROUTES])
def test_unknown_fields_are_422_with_their_paths(
    alice: Caller, owned: dict[str, str], method: str, route: str
) -> None:
    ids = {**owned, "agent2": alice.agent("Second")["agentId"]}
    body = _fill(UNKNOWN_FIELD_BODIES[(method, route)], ids)
    status, payload = alice.call(method, route.format(**ids), body)
    assert status == 422, payload
    error = assert_envelope(payload, "validation_error")
    assert "bogus" in {e["path"] for e in error["details"]["errors"]}
    assert alice.all_messages(owned["conv"]) == []
    assert alice.catalog()["goal-setting"]["enabled"] is True
    assert alice.ok("GET", "/rpc/skills/permissions")["items"] == []


def test_nested_unknown_fields_are_422_with_their_paths(alice: Caller, owned: dict[str, str]) -> None:
    status, payload = alice.call("PATCH", "/rpc/skills/permissions", {
        "skillId": "memory-recall", "permissionCode": "memory:read",
        "scope": {"type": "agent", "agentId": owned["agent"], "extra": True}, "granted": True,
    })
    assert status == 422
    paths = {e["path"] for e in assert_envelope(payload, "validation_error")["details"]["errors"]}
    assert any(p.startswith("scope") and p.endswith("extra") for p in paths), paths


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/rpc/nothing-here"),
        ("POST", "/rpc/nothing-here"),
        ("GET", "/rpc/agents/{agent}/unknown"),
        ("GET", "/rpc/skills/{agent}/runs"),
        ("GET", "/rpc/conversations/{conv}/messages/extra"),
        ("GET", "/rpc/definitely/not/a/route"),
        ("PATCH", "/rpc/skills/goal-setting/extra"),
    ],
)
def test_unknown_routes_are_404(alice: Caller, owned: dict[str, str], method: str, path: str) -> None:
    response = alice.stack.request(method, path.format(**owned), token=alice.auth)
    assert response.status == 404, response.body[:300]
    assert (response.header("content-type") or "").startswith("application/json")
    assert_envelope(response.json(), "not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/rpc/agents"),
        ("DELETE", "/rpc/agents/{agent}/memories"),
        ("PUT", "/rpc/agents/{agent}"),
        ("DELETE", "/rpc/me"),
        ("POST", "/rpc/me"),
        ("PUT", "/rpc/conversations/{conv}/messages"),
        ("DELETE", "/rpc/conversations/{conv}"),
        ("POST", "/rpc/skills"),
        ("DELETE", "/rpc/skills/permissions"),
        ("GET", "/rpc/skills/background-jobs/{agent}/cancel"),
        ("POST", "/rpc/skills/runs"),
    ],
)
def test_wrong_method_is_405(alice: Caller, owned: dict[str, str], method: str, path: str) -> None:
    response = alice.stack.request(method, path.format(**owned), token=alice.auth)
    assert response.status == 405, response.body[:300]
    assert_envelope(response.json(), "method_not_allowed")


@pytest.mark.parametrize(
    "query",
    ["limit=0", "limit=101", "limit=abc", "limit=-1", "cursor=garbage!", "cursor=" + "A" * 3000],
)
@pytest.mark.parametrize(
    "route",
    [
        "/rpc/agents",
        "/rpc/conversations",
        "/rpc/conversations/{conv}/messages",
        "/rpc/skills/runs",
        "/rpc/skills/permissions",
        "/rpc/skills/audit-events",
        "/rpc/skills/background-jobs",
        "/rpc/agents/{agent}/memories",
    ],
)
def test_bad_paging_is_422(alice: Caller, owned: dict[str, str], route: str, query: str) -> None:
    status, payload = alice.call("GET", route.format(**owned) + "?" + query)
    assert status == 422, payload
    assert_envelope(payload, "validation_error")


@pytest.mark.parametrize(
    "path", ["/rpc/conversations?kind=private", "/rpc/skills/background-jobs?status=done",
             "/rpc/agents/{agent}/memories?status=deleted"],
)
def test_bad_filters_are_422(alice: Caller, owned: dict[str, str], path: str) -> None:
    status, payload = alice.call("GET", path.format(**owned))
    assert status == 422, payload
    assert_envelope(payload, "validation_error")


def test_a_cursor_from_another_listing_is_refused(alice: Caller) -> None:
    a, b = alice.agent("A")["defaultConversationId"], alice.agent("B")["defaultConversationId"]
    for i in range(3):
        alice.say(a, f"hi {i}", f"k{i}")
    cursor = alice.history(a, limit="2")["nextCursor"]
    assert cursor
    status, payload = alice.call("GET", f"/rpc/conversations/{b}/messages?limit=2&cursor={cursor}")
    assert 400 <= status < 500, payload
    assert_envelope(payload)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/rpc/agents/{id}", None),
        ("GET", "/rpc/agents/{id}/memories", None),
        ("POST", "/rpc/agents/{id}/memories", {"title": "t", "content": "c"}),
        ("DELETE", "/rpc/agents/{id}/memories/{id}", None),
        ("GET", "/rpc/conversations/{id}", None),
        ("GET", "/rpc/conversations/{id}/messages", None),
        ("POST", "/rpc/conversations/{id}/messages", {"clientMessageId": "z", "text": "hi"}),
        ("POST", "/rpc/skills/background-jobs/{id}/cancel", None),
        ("PATCH", "/rpc/skills/{id}", {"enabled": True}),
    ],
)
@pytest.mark.parametrize("ident", ["x" * 1500, "%E4%BD%A0%E5%A5%BD", "a%2Fb", "-"], ids=["long", "unicode", "slash", "dash"])
def test_odd_ids_in_paths_are_404_never_5xx(
    alice: Caller, method: str, path: str, body: Any, ident: str
) -> None:
    status, payload = alice.call(method, path.replace("{id}", ident), body)
    assert status == 404, (status, payload)
    assert_envelope(payload)


# ---------------------------------------------------------------------------------------------- tokens


def _token(secret: str, *, alg: str = "HS256", **overrides: Any) -> str:
    now = int(time.time())
    claims = {"iss": "skillcore-local", "aud": "skillcore", "sub": "tok-user", "iat": now, "exp": now + 600}
    claims.update(overrides)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, secret, algorithm=alg)


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _bad_tokens(secret: str) -> dict[str, str]:
    now = int(time.time())
    return {
        "expired": _token(secret, iat=now - 7200, exp=now - 3600),
        "badly signed": _token("a-different-secret-of-enough-length!!"),
        "alg none": f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64({'iss': 'skillcore-local', 'aud': 'skillcore', 'sub': 'tok-user', 'exp': now + 600})}.",
        "wrong iss": _token(secret, iss="someone-else"),
        "wrong aud": _token(secret, aud="another-api"),
        "no exp": _token(secret, exp=None),
        "tampered payload": ".".join([
            _token(secret).split(".")[0],
            _b64({"iss": "skillcore-local", "aud": "skillcore", "sub": "admin", "exp": now + 600,
                  "cognito:groups": ["admin"]}),
            _token(secret).split(".")[2],
        ]),
    }


@pytest.mark.parametrize(
    "case", ["expired", "badly signed", "alg none", "wrong iss", "wrong aud", "no exp", "tampered payload"]
)
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/rpc/me", None),
        ("POST", "/rpc/agents", {"name": "x"}),
        ("POST", "/rpc/conversations/c1/messages", {"clientMessageId": "a", "text": "hi"}),
        ("GET", "/rpc/admin/audit-events?userId=tok-user", None),
        ("GET", "/rpc/nothing-here", None),
    ],
)
def test_bad_tokens_are_401(stack: StackClient, method: str, path: str, body: Any, case: str) -> None:
    token = _bad_tokens(stack.secret)[case]
    response = stack.request(method, path, body=body, token=token)
    assert response.status == 401
    assert_envelope(response.json(), "unauthenticated")
    assert Caller(stack, "tok-user").ok("GET", "/rpc/agents")["items"] == []


def test_missing_token_is_401_everywhere_but_health(stack: StackClient) -> None:
    for method, path in [("GET", "/rpc/me"), ("GET", "/rpc/skills"), ("POST", "/rpc/skills/background-jobs"),
                         ("GET", "/rpc/admin/conversations/x/messages")]:
        status, payload = stack.call(method, path)
        assert status == 401, (method, path)
        assert_envelope(payload, "unauthenticated")


# ---------------------------------------------------------------------------------------------- admin


def test_admin_routes_need_the_admin_group(stack: StackClient, alice: Caller) -> None:
    agent = alice.agent()
    conv = agent["defaultConversationId"]
    alice.say(conv, "hello admin", "a1")
    for path in (f"/rpc/admin/conversations/{conv}/messages", f"/rpc/admin/audit-events?userId={alice.user}"):
        status, payload = alice.call("GET", path)
        assert status == 403, path
        assert_envelope(payload, "forbidden")

    admin = Caller(stack, new_user("ops"), admin=True)
    page = admin.ok("GET", f"/rpc/admin/conversations/{conv}/messages")
    assert [m["text"] for m in page["items"]] == [m["text"] for m in alice.all_messages(conv)]
    assert all(m["hiddenFromUser"] is False and m["origin"] == "chat" for m in page["items"])

    status, payload = admin.call("GET", "/rpc/admin/conversations/01NOSUCHCONVERSATION000000/messages")
    assert status == 404
    assert_envelope(payload)

    alice.ok("PATCH", "/rpc/skills/permissions", {
        "skillId": "memory-recall", "permissionCode": "memory:read", "scope": {"type": "user"}, "granted": True,
    })
    events = admin.ok("GET", f"/rpc/admin/audit-events?userId={alice.user}")["items"]
    assert [(e["action"], e["decision"]) for e in events] == [("permission.grant", "succeeded")]
    assert events == alice.ok("GET", "/rpc/skills/audit-events")["items"]
    status, payload = admin.call("GET", "/rpc/admin/audit-events")
    assert status == 422
    assert_envelope(payload, "validation_error")


def test_admin_sees_hidden_messages_the_user_never_sees(stack: StackClient, alice: Caller) -> None:
    agent = alice.agent()
    conv = agent["defaultConversationId"]
    first = alice.say(conv, "before the hidden one", "h1")
    db = make_db(Settings.from_env(stack.env))
    hidden = Message(
        message_id=f"hidden-{uuid.uuid4().hex[:10]}", conversation_id=conv, role=Role.USER, agent_id=None,
        text="hidden automation input", origin=Origin.AUTOMATION, hidden_from_user=True,
        created_at=datetime.now(UTC),
    )
    db.client.put_item(**put_message_op(db, hidden, alice.user)["Put"])
    last = alice.say(conv, "after the hidden one", "h2")

    visible = alice.all_messages(conv)
    assert [m["messageId"] for m in visible] == [
        first["userMessage"]["messageId"], first["reply"]["messageId"],
        last["userMessage"]["messageId"], last["reply"]["messageId"],
    ]
    assert "hiddenFromUser" not in visible[0]
    assert alice.conversation(conv)["messageCount"] == 4

    admin = Caller(stack, new_user("ops"), admin=True)
    everything = admin.ok("GET", f"/rpc/admin/conversations/{conv}/messages")["items"]
    assert [m["messageId"] for m in everything] == [
        first["userMessage"]["messageId"], first["reply"]["messageId"], hidden.message_id,
        last["userMessage"]["messageId"], last["reply"]["messageId"],
    ]
    by_id = {m["messageId"]: m for m in everything}
    assert by_id[hidden.message_id]["hiddenFromUser"] is True
    assert by_id[hidden.message_id]["origin"] == "automation"
    assert by_id[hidden.message_id]["text"] == "hidden automation input"
    assert all(m["hiddenFromUser"] is False for k, m in by_id.items() if k != hidden.message_id)
