"""The Memories API: list, create (source user) and forget, always inside one owner's agent."""

from __future__ import annotations

from datetime import datetime

from skillcore.conversations import agent_store
from skillcore.db.dynamo import Db
from skillcore.errors import AgentNotFound
from skillcore.ids import new_id
from skillcore.memory import store as memory_store
from skillcore.memory.models import MemoryItem, MemorySource, MemoryStatus


def _own_agent(db: Db, user_id: str, agent_id: str) -> None:
    if agent_store.get_agent(db, user_id, agent_id) is None:
        raise AgentNotFound()


def list_memories(
    db: Db, user_id: str, agent_id: str, *, status: MemoryStatus, limit: int, cursor: str | None
) -> tuple[list[MemoryItem], str | None]:
    _own_agent(db, user_id, agent_id)
    return memory_store.list_memories(db, user_id, agent_id, status=status, limit=limit, cursor=cursor)


def create_memory(
    db: Db, user_id: str, agent_id: str, *, title: str, content: str, importance: int, now: datetime
) -> MemoryItem:
    _own_agent(db, user_id, agent_id)
    memory = MemoryItem(
        memory_id=new_id(now), user_id=user_id, agent_id=agent_id, title=title, content=content,
        importance=importance, status=MemoryStatus.ACTIVE, source=MemorySource.USER, created_at=now, updated_at=now,
    )
    memory_store.put_memory(db, memory)
    return memory


def forget_memory(db: Db, user_id: str, agent_id: str, memory_id: str, now: datetime) -> MemoryItem:
    _own_agent(db, user_id, agent_id)
    return memory_store.forget_memory(db, user_id, agent_id, memory_id, now)
