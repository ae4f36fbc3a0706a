"""Routes: health, profile, agents, conversations and their history, memories."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct

from skillcore import VERSION, lazy
from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models
from skillcore.api.requests import Paging
from skillcore.api.views import Page, time
from skillcore.api.views import core as views
from skillcore.api.views.core import Limits
from skillcore.errors import NotFound
from skillcore.limits.models import RateClass, day_of, resets_at

if TYPE_CHECKING:
    from skillcore.api.requests.core import (
        ConversationQuery,
        CreateAgent,
        CreateConversation,
        CreateMemory,
        MemoryQuery,
        PutProfile,
    )
    from skillcore.clock import Clock
    from skillcore.conversations import agent_store, agents, conversation_store, profile
    from skillcore.conversations.profile import ProfileDeps
    from skillcore.db.dynamo import Db
    from skillcore.limits.service import Limiter
    from skillcore.memory import service as memories
else:  # each loaded by the first request that calls it (skillcore/lazy.py)
    agent_store = lazy.module("skillcore.conversations.agent_store")
    agents = lazy.module("skillcore.conversations.agents")
    conversation_store = lazy.module("skillcore.conversations.conversation_store")
    profile = lazy.module("skillcore.conversations.profile")
    memories = lazy.module("skillcore.memory.service")

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.core")


class CoreDeps(Struct, frozen=True):
    db: Db
    clock: Clock
    profile: ProfileDeps
    limiter: Limiter | None = None  # the day's model usage (GET /rpc/usage); None: no limits configured
    max_open_drafts: int = 0


def limits() -> Limits:
    """The server's limits, imported by the first profile answer: they are read from every group's request models
    (the chat and hosted ones too), which RpcFunction's cold start otherwise does not define."""
    from skillcore.api.limits import LIMITS

    return LIMITS


def register(routes: Routes, deps: CoreDeps) -> None:
    @routes.route("GET", "/rpc/health", response=views.Health, auth=False, store=False)
    def health(_: None) -> views.Health:
        """Liveness and version (no token needed)."""
        return views.Health(status="ok", version=VERSION)

    @routes.route("PUT", "/rpc/me", body=request("PutProfile"), response=views.Profile,
                  errors=(e.InvalidTimezone, e.ConcurrentUpdate))
    def put_me(caller: Caller, body: PutProfile) -> views.Profile:
        """Create or update the caller's profile (the first call also creates the default memory job); the answer
        carries the server's limits, as GET does. `initialTimezone` is the zone of a profile the call creates; a
        call with neither `timezone` nor `displayName` writes nothing to an existing profile."""
        result = profile.put_profile(
            deps.profile, caller.user_id, timezone=body.timezone, display_name=body.display_name, now=deps.clock(),
            initial_timezone=body.initial_timezone,
        )
        return views.profile(result, limits())

    @routes.route("GET", "/rpc/me", response=views.Profile, errors=(e.NotFound,))
    def get_me(caller: Caller) -> views.Profile:
        """The caller's profile, with the server's limits (`limits`: the lengths and counts the API validates with,
        for a client to show and enforce); 404 before the first PUT."""
        return views.profile(profile.get_profile(deps.db, caller.user_id), limits())

    @routes.route("GET", "/rpc/usage", response=views.Usage, headers={"Cache-Control": "no-store"})
    def get_usage(caller: Caller) -> views.Usage:
        """The caller's model tokens today against the daily budget and when it resets (the page's usage meter),
        with the per-minute rates of each route class: one GetItem."""
        now = deps.clock()
        if deps.limiter is None:
            return views.Usage(day=day_of(now), tokens_used=0, tokens_per_day=0, resets_at=time(resets_at(now)),
                               rates_per_minute={c.value: 0 for c in RateClass}, max_open_drafts=deps.max_open_drafts)
        usage = deps.limiter.usage(caller.user_id, now)
        return views.Usage(day=usage.day, tokens_used=usage.tokens_used, tokens_per_day=usage.tokens_per_day,
                           resets_at=time(usage.resets_at),
                           rates_per_minute={c.value: n for c, n in deps.limiter.limits.per_minute.items()},
                           max_open_drafts=deps.max_open_drafts)

    @routes.route("POST", "/rpc/agents", body=request("CreateAgent"), response=views.Agent, status=201,
                  errors=(e.ConcurrentUpdate,))
    def create_agent(caller: Caller, body: CreateAgent) -> views.Agent:
        """Create an agent and its default single conversation."""
        return views.agent(agents.create_agent(deps.db, caller.user_id, name=body.name, persona=body.persona,
                                               now=deps.clock()))

    @routes.route("GET", "/rpc/agents", query=Paging, response=Page[views.Agent])
    def list_agents(caller: Caller, query: Paging) -> Page[views.Agent]:
        """The caller's agents."""
        items, cursor = agent_store.list_agents(deps.db, caller.user_id, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.agent(a) for a in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/agents/<agentId>", response=views.Agent, errors=(e.AgentNotFound,))
    def get_agent(caller: Caller, agentId: str) -> views.Agent:  # noqa: N803 - the path parameter's name
        """One of the caller's agents."""
        return views.agent(agents.get_agent(deps.db, caller.user_id, agentId))

    @routes.route("GET", "/rpc/agents/<agentId>/memories", query=request("MemoryQuery"), response=Page[views.Memory],
                  errors=(e.AgentNotFound,))
    def list_memories(caller: Caller, agentId: str, query: MemoryQuery) -> Page[views.Memory]:  # noqa: N803
        """An agent's memories, active or forgotten."""
        items, cursor = memories.list_memories(deps.db, caller.user_id, agentId, status=query.status,
                                               limit=query.limit, cursor=query.cursor)
        return Page(items=[views.memory(m) for m in items], next_cursor=cursor)

    @routes.route("POST", "/rpc/agents/<agentId>/memories", body=request("CreateMemory"), response=views.Memory, status=201,
                  errors=(e.AgentNotFound, e.ConcurrentUpdate))
    def create_memory(caller: Caller, agentId: str, body: CreateMemory) -> views.Memory:  # noqa: N803
        """Add a memory to an agent (source `user`)."""
        memory = memories.create_memory(deps.db, caller.user_id, agentId, title=body.title, content=body.content,
                                        importance=body.importance, now=deps.clock())
        return views.memory(memory)

    @routes.route("DELETE", "/rpc/agents/<agentId>/memories/<memoryId>", response=views.Memory,
                  errors=(e.AgentNotFound, e.ConcurrentUpdate))
    def forget_memory(caller: Caller, agentId: str, memoryId: str) -> views.Memory:  # noqa: N803
        """Forget a memory: never recalled or injected again."""
        return views.memory(memories.forget_memory(deps.db, caller.user_id, agentId, memoryId, deps.clock()))

    @routes.route("POST", "/rpc/conversations", body=request("CreateConversation"), response=views.Conversation, status=201,
                  errors=(e.AgentNotFound, e.ConcurrentUpdate))
    def create_conversation(caller: Caller, body: CreateConversation) -> views.Conversation:
        """Create a group conversation of 2 to 8 of the caller's agents."""
        conversation = agents.create_group(deps.db, caller.user_id, agent_ids=list(body.agent_ids), title=body.title,
                                           now=deps.clock())
        return views.conversation(conversation)

    @routes.route("GET", "/rpc/conversations", query=request("ConversationQuery"), response=Page[views.Conversation])
    def list_conversations(caller: Caller, query: ConversationQuery) -> Page[views.Conversation]:
        """The caller's conversations, optionally of one kind."""
        items, cursor = conversation_store.list_conversations(deps.db, caller.user_id, kind=query.kind,
                                                              limit=query.limit, cursor=query.cursor)
        return Page(items=[views.conversation(c) for c in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/conversations/<conversationId>", response=views.Conversation)
    def get_conversation(caller: Caller, conversationId: str) -> views.Conversation:  # noqa: N803
        """One of the caller's conversations."""
        return views.conversation(agents.get_conversation(deps.db, caller.user_id, conversationId))

    @routes.route("GET", "/rpc/conversations/<conversationId>/messages", query=Paging, response=Page[views.Message])
    def list_messages(caller: Caller, conversationId: str, query: Paging) -> Page[views.Message]:  # noqa: N803
        """A conversation's visible messages, oldest first."""
        items, cursor = agents.list_history(deps.db, caller.user_id, conversationId, include_hidden=False,
                                            limit=query.limit, cursor=query.cursor)
        return Page(items=[views.message(m) for m in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/admin/conversations/<conversationId>/messages", query=Paging,
                  response=Page[views.AdminMessage], admin=True)
    def admin_list_messages(_: Caller, conversationId: str, query: Paging) -> Page[views.AdminMessage]:  # noqa: N803
        """Operator: every message of a conversation, hidden ones included."""
        owner = conversation_store.owner_of(deps.db, conversationId)
        if owner is None:
            raise NotFound("conversation not found")
        items, cursor = agents.list_history(deps.db, owner, conversationId, include_hidden=True, limit=query.limit,
                                            cursor=query.cursor)
        return Page(items=[views.admin_message(m) for m in items], next_cursor=cursor)
