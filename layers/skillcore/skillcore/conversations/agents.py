"""Agents and conversations use cases."""

from __future__ import annotations

from datetime import datetime

from skillcore.conversations import agent_store, conversation_store, message_store
from skillcore.conversations.models import Agent, AgentCard, Conversation, ConversationKind, Message
from skillcore.db.dynamo import Db
from skillcore.db.transact import Op, transact
from skillcore.errors import AgentNotFound, NotFound, ValidationFailed
from skillcore.ids import new_id


def create_agent(db: Db, user_id: str, *, name: str, persona: str, now: datetime) -> Agent:
    """The agent and its default single conversation, in one transaction."""
    agent_id = new_id(now)
    conversation_id = new_id(now)
    agent = Agent(
        user_id=user_id, agent_id=agent_id, name=name, persona=persona,
        default_conversation_id=conversation_id, last_reply_at=None, created_at=now,
    )
    conversation = Conversation(
        user_id=user_id, conversation_id=conversation_id, kind=ConversationKind.SINGLE,
        agents=(AgentCard(agent_id=agent_id, name=name, persona=persona),), title=name,
        message_count=0, last_message_at=None, last_message_preview=None, created_at=now,
    )
    transact(db, [
        Op("agent", agent_store.put_agent_op(db, agent)),
        Op("conversation", conversation_store.put_conversation_op(db, conversation)),
    ])
    return agent


def get_agent(db: Db, user_id: str, agent_id: str) -> Agent:
    agent = agent_store.get_agent(db, user_id, agent_id)
    if agent is None:
        raise AgentNotFound()
    return agent


def create_group(db: Db, user_id: str, *, agent_ids: list[str], title: str | None, now: datetime) -> Conversation:
    if len(set(agent_ids)) != len(agent_ids):
        raise ValidationFailed("agentIds must be distinct", [{"path": "agentIds", "message": "duplicate agent id"}])
    found = agent_store.get_agents(db, user_id, agent_ids)
    missing = [a for a in agent_ids if a not in found]
    if missing:
        raise AgentNotFound(details={"agentIds": missing})
    cards = tuple(AgentCard(agent_id=a, name=found[a].name, persona=found[a].persona) for a in agent_ids)
    conversation = Conversation(
        user_id=user_id, conversation_id=new_id(now), kind=ConversationKind.GROUP, agents=cards,
        title=title or "、".join(c.name for c in cards)[:80], message_count=0,
        last_message_at=None, last_message_preview=None, created_at=now,
    )
    conversation_store.put_conversation(db, conversation)
    return conversation


def get_conversation(db: Db, user_id: str, conversation_id: str) -> Conversation:
    conversation = conversation_store.get_conversation(db, user_id, conversation_id)
    if conversation is None:
        raise NotFound("conversation not found")
    return conversation


def list_history(
    db: Db, user_id: str, conversation_id: str, *, include_hidden: bool, limit: int, cursor: str | None
) -> tuple[list[Message], str | None]:
    get_conversation(db, user_id, conversation_id)  # ownership first: someone else's is a 404
    return message_store.list_messages(db, conversation_id, include_hidden=include_hidden, limit=limit, cursor=cursor)
