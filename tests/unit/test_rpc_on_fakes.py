"""RpcFunction's routes and services for memories, permissions and conversations, with the sample events of
events/ and the stores in memory (tests/fakes.py): ownership, the refusals and their codes, what is listed after
a change. None of these needs DynamoDB's semantics (no condition decides them, no race), so they run here; the
same routes over real HTTP and DynamoDB Local are tests/stack/test_api_core.py's, the handlers on moto
tests/integration's. Agents are seeded in the fakes (their creation is one transaction: not a fake's)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from skillcore.api import routes_core, routes_skills
from skillcore.api.app import new_app
from skillcore.conversations.profile import ProfileDeps
from skillcore.skills.builtin import SKILLS
from tests.fakes import Stores
from tests.support import invoke, load_event

START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def ticking() -> Iterator[datetime]:
    """A clock a second later at each reading: ids and update times keep the order of the calls."""
    at = START
    while True:
        at += timedelta(seconds=1)
        yield at


@pytest.fixture
def stores(monkeypatch: pytest.MonkeyPatch) -> Stores:
    return Stores(monkeypatch)


@pytest.fixture
def rpc(stores: Stores) -> Any:
    """RpcFunction's core and skills routes (as functions/rpc/app.py registers them) on the fakes."""
    clock = ticking().__next__
    routes = new_app()
    routes_core.register(routes, routes_core.CoreDeps(db=stores.db, clock=clock, profile=ProfileDeps(db=stores.db)))
    routes_skills.register(routes, routes_skills.SkillDeps(db=stores.db, skills=SKILLS, clock=clock))
    return SimpleNamespace(lambda_handler=routes.resolve)


def new_agent(stores: Stores, name: str = "Mika", user: str = "user-alice") -> dict[str, str]:
    agent = stores.agent(user, name, now=START)
    return {"agentId": agent.agent_id, "defaultConversationId": agent.default_conversation_id}


def remember(rpc: Any, agent: dict[str, str], content: str, title: str = "note", importance: int = 3,
             user: str = "user-alice") -> dict[str, Any]:
    status, memory = invoke(rpc, load_event(
        "rpc_create_memory.json", user=user, path_ids={"AGENT_ID": agent["agentId"]},
        body={"title": title, "content": content, "importance": importance},
    ))
    assert status == 201, memory
    return memory


def grant(rpc: Any, skill: str = "memory-recall", granted: Any = True, scope: dict[str, str] | None = None,
          user: str = "user-alice") -> tuple[int, Any]:
    body = {"skillId": skill, "permissionCode": "memory:read", "scope": scope or {"type": "user"}, "granted": granted}
    return invoke(rpc, load_event("rpc_patch_permission.json", user=user, body=body))


# -- memories (from tests/integration/test_memory_recall.py; the recall of what is left stays there) ---------


def test_memories_api_and_forgetting(rpc: Any, stores: Stores) -> None:
    agent = new_agent(stores)
    keep = remember(rpc, agent, "I like tea")
    gone = remember(rpc, agent, "I like coffee")
    status, forgotten = invoke(rpc, load_event("rpc_forget_memory.json", path_ids={"AGENT_ID": agent["agentId"], "MEMORY_ID": gone["memoryId"]}))
    assert status == 200 and forgotten["status"] == "forgotten"
    _, active = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": agent["agentId"]}))
    assert [m["memoryId"] for m in active["items"]] == [keep["memoryId"]]
    _, old = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": agent["agentId"]}, query={"status": "forgotten"}))
    assert [m["memoryId"] for m in old["items"]] == [gone["memoryId"]]
    status, _ = invoke(rpc, load_event("rpc_forget_memory.json", user="user-bob", path_ids={"AGENT_ID": agent["agentId"], "MEMORY_ID": keep["memoryId"]}))
    assert status == 404
    status, body = invoke(rpc, load_event("rpc_create_memory.json", path_ids={"AGENT_ID": agent["agentId"]}, body={"title": "t", "content": "c", "importance": 9}))
    assert status == 422
    # what the store holds: the two memories of this agent, one forgotten, and nothing of bob's
    assert {(m.memory_id, m.status.value) for m in stores.memories.items.values()} == {
        (keep["memoryId"], "active"), (gone["memoryId"], "forgotten")}


# -- permissions (from tests/integration/test_memory_recall.py) -------------------------------------------------


def test_permission_errors(rpc: Any, stores: Stores) -> None:
    status, body = invoke(rpc, load_event("rpc_patch_permission.json", body={
        "skillId": "memory-recall", "permissionCode": "proactive_message:write", "scope": {"type": "user"}, "granted": True}))
    assert status == 422 and body["error"]["code"] == "permission_not_declared"
    mallory_agent = new_agent(stores, user="user-mallory")
    status, body = grant(rpc, scope={"type": "agent", "agentId": mallory_agent["agentId"]})
    assert status == 404 and body["error"]["code"] == "agent_not_found"
    status, body = grant(rpc, skill="nope")
    assert status == 404 and body["error"]["code"] == "skill_not_found"
    status, body = invoke(rpc, load_event("rpc_patch_permission.json", body={
        "skillId": "memory-recall", "permissionCode": "memory:read", "scope": {"type": "user"}, "granted": "yes"}))
    assert status == 422 and body["error"]["code"] == "validation_error"
    _, listing = invoke(rpc, load_event("rpc_list_permissions.json"))
    assert listing["items"] == []
    # a refusal writes nothing: no grant, no audit event
    assert stores.grants.items == {} and stores.grants.audit == []


def test_a_grant_and_its_revoke_keep_one_grant_and_are_audited(rpc: Any, stores: Stores) -> None:
    """test_memory_recall.py's test_agent_scope_grant_and_revoke without its chat turns: one grant item, revoked
    in place, and both changes audited."""
    mika = new_agent(stores)
    status, g = grant(rpc, scope={"type": "agent", "agentId": mika["agentId"]})
    assert status == 200 and g["scope"] == {"type": "agent", "agentId": mika["agentId"]} and g["status"] == "active"
    status, revoked = grant(rpc, granted=False, scope={"type": "agent", "agentId": mika["agentId"]})
    assert status == 200 and revoked["status"] == "revoked" and revoked["revokedAt"]
    assert revoked["grantId"] == g["grantId"]
    _, listing = invoke(rpc, load_event("rpc_list_permissions.json"))
    assert [(i["grantId"], i["status"]) for i in listing["items"]] == [(g["grantId"], "revoked")]
    _, page = invoke(rpc, load_event("rpc_list_audit_events.json"))
    actions = [e["action"] for e in page["items"] if e["action"].startswith("permission")]
    assert actions == ["permission.revoke", "permission.grant"]


# -- conversations (from tests/integration/test_rpc_core.py) ---------------------------------------------------


def test_other_users_resources_are_404(rpc: Any, stores: Stores) -> None:
    agent = new_agent(stores)
    conv_id = agent["defaultConversationId"]
    status, body = invoke(rpc, load_event("rpc_list_messages.json", user="user-bob", path_ids={"CONVERSATION_ID": conv_id}))
    assert status == 404 and body["error"]["code"] == "not_found"
    event = load_event("rpc_list_agents.json", user="user-bob")
    status, body = invoke(rpc, event)
    assert status == 200 and body["items"] == []


def test_group_conversation_needs_own_agents(rpc: Any, stores: Stores) -> None:
    a = new_agent(stores, name="A")
    b = new_agent(stores, name="B")
    mallory = new_agent(stores, user="user-mallory", name="M")
    status, body = invoke(rpc, load_event("rpc_create_group.json", body={"kind": "group", "agentIds": [a["agentId"], mallory["agentId"]]}))
    assert status == 404 and body["error"]["code"] == "agent_not_found"
    status, body = invoke(rpc, load_event("rpc_create_group.json", body={"kind": "group", "agentIds": [a["agentId"]]}))
    assert status == 422 and body["error"]["code"] == "validation_error"
    status, group = invoke(rpc, load_event("rpc_create_group.json", body={"kind": "group", "agentIds": [a["agentId"], b["agentId"]]}))
    assert status == 201 and group["kind"] == "group" and group["agentIds"] == [a["agentId"], b["agentId"]]
    status, listing = invoke(rpc, load_event("rpc_list_conversations.json", query={"kind": "group"}))
    assert [c["conversationId"] for c in listing["items"]] == [group["conversationId"]]


# -- the fakes themselves --------------------------------------------------------------------------------------


def test_a_list_pages_every_item_once_and_a_cursor_stays_with_its_owner(rpc: Any, stores: Stores) -> None:
    """The paging contract of the fakes is the stores' (the converted tests above rely on it)."""
    for i in range(5):
        stores.agent("user-alice", f"agent{i}", now=START + timedelta(seconds=i))
    seen, cursor = [], None
    while True:
        query = {"limit": "2"} | ({"cursor": cursor} if cursor else {})
        status, page = invoke(rpc, load_event("rpc_list_agents.json", query=query))
        assert status == 200 and len(page["items"]) <= 2
        seen += [a["name"] for a in page["items"]]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert seen == [f"agent{i}" for i in range(5)]
    _, first = invoke(rpc, load_event("rpc_list_agents.json", query={"limit": "2"}))
    status, body = invoke(rpc, load_event("rpc_list_agents.json", user="user-bob", query={"cursor": first["nextCursor"]}))
    assert status == 422 and body["error"]["details"]["errors"][0]["path"] == "cursor"


def test_a_store_call_the_fakes_do_not_cover_fails_the_test(rpc: Any) -> None:
    """Creating an agent is a transaction (agents.create_agent): not a fake's, so it never reaches a table."""
    with pytest.raises(pytest.fail.Exception, match="DynamoDB transact_write_items reached"):
        invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Mika"}))
