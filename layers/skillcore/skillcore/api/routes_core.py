"""Routes: health, profile, agents, conversations and their history."""

from __future__ import annotations

from msgspec import Struct

from skillcore import VERSION
from skillcore.api import http, views
from skillcore.api.app import Routes
from skillcore.api.errors import Response, json_response
from skillcore.api.requests import Paging
from skillcore.api.requests.core import (
    ConversationQuery,
    CreateAgent,
    CreateConversation,
    CreateMemory,
    MemoryQuery,
    PutProfile,
)
from skillcore.clock import Clock
from skillcore.db import agents as agent_store
from skillcore.db import conversations as conversation_store
from skillcore.db.dynamo import Db
from skillcore.errors import NotFound
from skillcore.services import agents, memories, profile
from skillcore.services.profile import ProfileDeps


class CoreDeps(Struct, frozen=True):
    db: Db
    clock: Clock
    profile: ProfileDeps


def register(routes: Routes, deps: CoreDeps) -> None:
    @routes.route("GET", "/rpc/health")
    def health() -> Response:
        return json_response(200, {"status": "ok", "version": VERSION})

    @routes.route("PUT", "/rpc/me")
    def put_me() -> Response:
        user = http.user_id(routes.event)
        request = http.body(routes.event, PutProfile)
        result = profile.put_profile(
            deps.profile, user, timezone=request.timezone, display_name=request.display_name, now=deps.clock()
        )
        return json_response(200, views.profile(result))

    @routes.route("GET", "/rpc/me")
    def get_me() -> Response:
        return json_response(200, views.profile(profile.get_profile(deps.db, http.user_id(routes.event))))

    @routes.route("POST", "/rpc/agents")
    def create_agent() -> Response:
        user = http.user_id(routes.event)
        request = http.body(routes.event, CreateAgent)
        agent = agents.create_agent(deps.db, user, name=request.name, persona=request.persona, now=deps.clock())
        return json_response(201, views.agent(agent))

    @routes.route("GET", "/rpc/agents")
    def list_agents() -> Response:
        user = http.user_id(routes.event)
        paging = http.parse(Paging, http.query(routes.event))
        items, cursor = agent_store.list_agents(deps.db, user, limit=paging.limit, cursor=paging.cursor)
        return json_response(200, views.page([views.agent(a) for a in items], cursor))

    @routes.route("GET", "/rpc/agents/<agentId>")
    def get_agent(agentId: str) -> Response:  # noqa: N803 - the path parameter's name
        return json_response(200, views.agent(agents.get_agent(deps.db, http.user_id(routes.event), agentId)))

    @routes.route("GET", "/rpc/agents/<agentId>/memories")
    def list_memories(agentId: str) -> Response:  # noqa: N803
        user = http.user_id(routes.event)
        q = http.parse(MemoryQuery, http.query(routes.event))
        items, cursor = memories.list_memories(deps.db, user, agentId, status=q.status, limit=q.limit, cursor=q.cursor)
        return json_response(200, views.page([views.memory(m) for m in items], cursor))

    @routes.route("POST", "/rpc/agents/<agentId>/memories")
    def create_memory(agentId: str) -> Response:  # noqa: N803
        user = http.user_id(routes.event)
        request = http.body(routes.event, CreateMemory)
        memory = memories.create_memory(
            deps.db, user, agentId, title=request.title, content=request.content, importance=request.importance,
            now=deps.clock(),
        )
        return json_response(201, views.memory(memory))

    @routes.route("DELETE", "/rpc/agents/<agentId>/memories/<memoryId>")
    def forget_memory(agentId: str, memoryId: str) -> Response:  # noqa: N803
        user = http.user_id(routes.event)
        return json_response(200, views.memory(memories.forget_memory(deps.db, user, agentId, memoryId, deps.clock())))

    @routes.route("POST", "/rpc/conversations")
    def create_conversation() -> Response:
        user = http.user_id(routes.event)
        request = http.body(routes.event, CreateConversation)
        conversation = agents.create_group(
            deps.db, user, agent_ids=list(request.agent_ids), title=request.title, now=deps.clock()
        )
        return json_response(201, views.conversation(conversation))

    @routes.route("GET", "/rpc/conversations")
    def list_conversations() -> Response:
        user = http.user_id(routes.event)
        q = http.parse(ConversationQuery, http.query(routes.event))
        items, cursor = conversation_store.list_conversations(
            deps.db, user, kind=q.kind, limit=q.limit, cursor=q.cursor
        )
        return json_response(200, views.page([views.conversation(c) for c in items], cursor))

    @routes.route("GET", "/rpc/conversations/<conversationId>")
    def get_conversation(conversationId: str) -> Response:  # noqa: N803
        user = http.user_id(routes.event)
        return json_response(200, views.conversation(agents.get_conversation(deps.db, user, conversationId)))

    @routes.route("GET", "/rpc/conversations/<conversationId>/messages")
    def list_messages(conversationId: str) -> Response:  # noqa: N803
        user = http.user_id(routes.event)
        paging = http.parse(Paging, http.query(routes.event))
        items, cursor = agents.list_history(
            deps.db, user, conversationId, include_hidden=False, limit=paging.limit, cursor=paging.cursor
        )
        return json_response(200, views.page([views.message(m) for m in items], cursor))

    @routes.route("GET", "/rpc/admin/conversations/<conversationId>/messages")
    def admin_messages(conversationId: str) -> Response:  # noqa: N803
        http.require_admin(routes.event)
        paging = http.parse(Paging, http.query(routes.event))
        owner = conversation_store.owner_of(deps.db, conversationId)
        if owner is None:
            raise NotFound("conversation not found")
        items, cursor = agents.list_history(
            deps.db, owner, conversationId, include_hidden=True, limit=paging.limit, cursor=paging.cursor
        )
        return json_response(200, views.page([views.message(m, admin=True) for m in items], cursor))
