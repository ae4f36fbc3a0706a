"""In-memory fakes of the store modules, for the service and route tests of the unit lane (tests/unit).

The services and the route code reach their tables through store modules imported as modules
(`from skillcore.memory import store as memory_store`, then `memory_store.put_memory(db, ...)`), so `Stores`
installs its fakes by replacing those functions on the store modules for one test (`Stores(monkeypatch)`):
every caller, whatever module it is in, then reaches the fakes. The `db` the callers hold is `NO_DB`: a
DynamoDB call that no fake covers fails the test and names the call, instead of reaching a table.

What the fakes keep: the items of each owner, each list's order, and its paging contract (a page of at most
`limit` items and a cursor in the stores' own format, which never crosses owners: another list's cursor is a 422
on `cursor`). What they do not: condition expressions, transactions (the `*_op` functions and `transact` are
not faked: a path that uses them fails on NO_DB), concurrency, the indexes and the request counts. Tests of
those run on DynamoDB Local (tests/stack) or moto (tests/integration).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import pytest
from msgspec.structs import replace

from skillcore.conversations import agent_store, conversation_store, message_store
from skillcore.conversations.models import Agent, AgentCard, Conversation, ConversationKind, Message
from skillcore.db.dynamo import Db, decode_cursor, encode_cursor
from skillcore.errors import NotFound
from skillcore.ids import new_id
from skillcore.memory import store as memory_store
from skillcore.memory.models import MemoryItem, MemoryStatus
from skillcore.policy import audit_store, grant_store
from skillcore.policy.audit import AuditEvent
from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant
from skillcore.settings import TableNames


class _NoDynamoDB:
    """The client of NO_DB: any call fails the test (pytest's failure: no `except Exception` swallows it)."""

    def __getattr__(self, name: str) -> Any:
        pytest.fail(f"DynamoDB {name} reached in a test on the store fakes: fake the store function that "
                    f"made it (tests/fakes.py), or run the test on moto or DynamoDB Local")


NO_DB = Db(client=_NoDynamoDB(), tables=TableNames(**{name: f"fake-{name}" for name in TableNames.__struct_fields__}))


def page(items: Iterable[Any], partition: str, sort_key: Callable[[Any], str], *, limit: int, cursor: str | None,
         newest_first: bool = False) -> tuple[list[Any], str | None]:
    """One page of a partition's items, ordered by `sort_key`, as query_page pages: a cursor when the page is
    full, in the stores' format and bound to the partition (another partition's cursor is invalid_cursor)."""
    start = decode_cursor(cursor, partition=("pk", partition))
    ordered = sorted(items, key=sort_key, reverse=newest_first)
    if start:
        after = start["sk"]["S"]
        ordered = [i for i in ordered if (sort_key(i) < after if newest_first else sort_key(i) > after)]
    taken = ordered[:limit]
    full = len(taken) == limit and bool(taken)
    return taken, encode_cursor({"pk": {"S": partition}, "sk": {"S": sort_key(taken[-1])}}) if full else None


class Agents:
    """agent_store: get, batch get, list (oldest first: agent ids are ULIDs)."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], Agent] = {}

    def add(self, agent: Agent) -> Agent:
        self.items[(agent.user_id, agent.agent_id)] = agent
        return agent

    def get_agent(self, db: Db, user_id: str, agent_id: str) -> Agent | None:
        return self.items.get((user_id, agent_id))

    def get_agents(self, db: Db, user_id: str, agent_ids: list[str]) -> dict[str, Agent]:
        return {a: self.items[(user_id, a)] for a in dict.fromkeys(agent_ids) if (user_id, a) in self.items}

    def list_agents(self, db: Db, user_id: str, *, limit: int, cursor: str | None) -> tuple[list[Agent], str | None]:
        mine = [a for (owner, _), a in self.items.items() if owner == user_id]
        return page(mine, user_id, lambda a: a.agent_id, limit=limit, cursor=cursor)


class Conversations:
    """conversation_store (get, put, list with an optional kind, owner_of) and message_store.list_messages."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], Conversation] = {}
        self.messages: dict[str, list[Message]] = {}

    def get_conversation(self, db: Db, user_id: str, conversation_id: str) -> Conversation | None:
        return self.items.get((user_id, conversation_id))

    def put_conversation(self, db: Db, conversation: Conversation) -> None:
        key = (conversation.user_id, conversation.conversation_id)
        assert key not in self.items, f"put_conversation over an existing conversation {key}"
        self.items[key] = conversation

    def owner_of(self, db: Db, conversation_id: str) -> str | None:
        return next((owner for owner, c in self.items if c == conversation_id), None)

    def list_conversations(self, db: Db, user_id: str, *, kind: ConversationKind | None, limit: int,
                           cursor: str | None) -> tuple[list[Conversation], str | None]:
        mine = [c for (owner, _), c in self.items.items() if owner == user_id and kind in (None, c.kind)]
        return page(mine, user_id, lambda c: c.conversation_id, limit=limit, cursor=cursor)

    def list_messages(self, db: Db, conversation_id: str, *, include_hidden: bool, limit: int,
                      cursor: str | None) -> tuple[list[Message], str | None]:
        shown = [m for m in self.messages.get(conversation_id, []) if include_hidden or not m.hidden_from_user]
        return page(shown, conversation_id, message_store.seq, limit=limit, cursor=cursor)


class Memories:
    """memory store: by status newest first, get, put, forget (a memory of another owner's agent is absent)."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str, str], MemoryItem] = {}

    def list_memories(self, db: Db, user_id: str, agent_id: str, *, status: MemoryStatus, limit: int,
                      cursor: str | None) -> tuple[list[MemoryItem], str | None]:
        found = [m for (u, a, _), m in self.items.items() if (u, a) == (user_id, agent_id) and m.status is status]
        return page(found, memory_store.partition(user_id, agent_id),
                    lambda m: memory_store.status_key(m.status, m.updated_at, m.memory_id),
                    limit=limit, cursor=cursor, newest_first=True)

    def list_active_agent_memories(self, db: Db, user_id: str, agent_id: str, *,
                                   limit: int = memory_store.ACTIVE_READ_LIMIT) -> list[MemoryItem]:
        return self.list_memories(db, user_id, agent_id, status=MemoryStatus.ACTIVE, limit=limit, cursor=None)[0]

    def put_memory(self, db: Db, memory: MemoryItem) -> None:
        self.items[(memory.user_id, memory.agent_id, memory.memory_id)] = memory

    def get_memory(self, db: Db, user_id: str, agent_id: str, memory_id: str) -> MemoryItem | None:
        return self.items.get((user_id, agent_id, memory_id))

    def forget_memory(self, db: Db, user_id: str, agent_id: str, memory_id: str, now: datetime) -> MemoryItem:
        memory = self.items.get((user_id, agent_id, memory_id))
        if memory is None:
            raise NotFound("memory not found")
        forgotten = replace(memory, status=MemoryStatus.FORGOTTEN, updated_at=now)
        self.items[(user_id, agent_id, memory_id)] = forgotten
        return forgotten


class Grants:
    """grant_store: list (by skill, code and scope), set (a grant keeps its id and first grant time across
    re-grants; a revoke keeps the version of the last grant) and audit_store: put, list newest first."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], PermissionGrant] = {}
        self.audit: list[AuditEvent] = []

    def list_grants(self, db: Db, user_id: str, *, limit: int = 100,
                    cursor: str | None = None) -> tuple[list[PermissionGrant], str | None]:
        mine = [g for (owner, _), g in self.items.items() if owner == user_id]
        return page(mine, user_id, lambda g: grant_store.grant_sort_key(g.skill_id, g.permission_code, g.scope),
                    limit=limit, cursor=cursor)

    def all_grants(self, db: Db, user_id: str) -> list[PermissionGrant]:
        return [g for (owner, _), g in sorted(self.items.items()) if owner == user_id]

    def set_grant(self, db: Db, *, user_id: str, skill_id: str, skill_version: str, code: str, scope: GrantScope,
                  granted: bool, grant_id: str, now: datetime, narrowing: Any = None) -> PermissionGrant:
        key = (user_id, grant_store.grant_sort_key(skill_id, code, scope))
        before = self.items.get(key)
        kept = (narrowing or None) if granted else (before.narrowing if before else None)
        grant = PermissionGrant(
            grant_id=before.grant_id if before else grant_id, user_id=user_id, skill_id=skill_id,
            skill_version=skill_version if granted or before is None else before.skill_version,
            permission_code=code, scope=scope, status=GrantStatus.ACTIVE if granted else GrantStatus.REVOKED,
            granted_at=now if granted or before is None else before.granted_at,
            revoked_at=None if granted else now, updated_at=now, narrowing=kept,
        )
        self.items[key] = grant
        return grant

    def put_audit(self, db: Db, event: AuditEvent) -> None:
        self.audit.append(event)

    def list_audit(self, db: Db, user_id: str, *, limit: int,
                   cursor: str | None) -> tuple[list[AuditEvent], str | None]:
        mine = [e for e in self.audit if e.user_id == user_id]
        return page(mine, user_id, lambda e: e.event_id, limit=limit, cursor=cursor, newest_first=True)

    def query_audit(self, db: Db, user_id: str, f: audit_store.AuditFilter, *, limit: int,
                    cursor: str | None) -> tuple[list[AuditEvent], str | None]:
        """The filters' semantics (the store's: an action family is a prefix ending in "."), in one read."""
        def kept(e: AuditEvent) -> bool:
            action = f.action is None or (e.action.startswith(f.action) if f.action.endswith(".")
                                          else e.action == f.action)
            return (e.user_id == user_id and action and f.skill_id in (None, e.skill_id)
                    and f.decision in (None, e.decision) and f.endpoint_id in (None, e.metadata.endpoint_id)
                    and (f.since is None or e.at >= f.since) and (f.until is None or e.at < f.until))
        mine = [e for e in self.audit if kept(e)]
        return page(mine, user_id, lambda e: e.event_id, limit=limit, cursor=cursor, newest_first=True)


class Stores:
    """The fakes, installed on the store modules for one test. Seed with `agent()`, read back through the
    fakes' `items` (what a store would hold)."""

    FAKED = {
        agent_store: ("agents", ("get_agent", "get_agents", "list_agents")),
        conversation_store: ("conversations", ("get_conversation", "put_conversation", "owner_of",
                                               "list_conversations")),
        message_store: ("conversations", ("list_messages",)),
        memory_store: ("memories", ("list_memories", "list_active_agent_memories", "put_memory", "get_memory",
                                    "forget_memory")),
        grant_store: ("grants", ("list_grants", "all_grants", "set_grant")),
        audit_store: ("grants", ("put_audit", "list_audit", "query_audit")),
    }

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.db = NO_DB
        self.agents = Agents()
        self.conversations = Conversations()
        self.memories = Memories()
        self.grants = Grants()
        for module, (fake, names) in self.FAKED.items():
            for name in names:
                monkeypatch.setattr(module, name, getattr(getattr(self, fake), name))

    def agent(self, user_id: str, name: str = "Mika", *, now: datetime) -> Agent:
        """An agent and its default single conversation, as agents.create_agent leaves them (that function
        writes both in one transaction, which the fakes do not take)."""
        agent = Agent(user_id=user_id, agent_id=new_id(now), name=name, persona="", default_conversation_id=new_id(now),
                      last_reply_at=None, created_at=now)
        self.conversations.items[(user_id, agent.default_conversation_id)] = Conversation(
            user_id=user_id, conversation_id=agent.default_conversation_id, kind=ConversationKind.SINGLE,
            agents=(AgentCard(agent_id=agent.agent_id, name=name, persona=""),), title=name, message_count=0,
            last_message_at=None, last_message_preview=None, created_at=now,
        )
        return self.agents.add(agent)
