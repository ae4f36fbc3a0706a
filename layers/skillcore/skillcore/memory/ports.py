"""The memory skills' ports bound to the Memories table for one owner and one agent.

Chat turns get read-only ports over one cached read per turn (the recall tool and the context skills
share it: one key Query, whichever asks first); automation runs also get write and forget. The owner and
the agent come from the caller, never from tool input.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from skillcore.db.dynamo import Db
from skillcore.ids import stable_id
from skillcore.memory import store as memory_store
from skillcore.memory.models import MemoryItem, MemorySource, MemoryStatus
from skillcore.memory.port import MemoryPorts
from skillcore.memory.retrieval import rank

MemoryReader = Callable[[str, str], list[MemoryItem]]


def turn_memory_reader(db: Db) -> MemoryReader:
    """The one read of an agent's active memories in a turn, cached by (user, agent)."""
    cache: dict[tuple[str, str], list[MemoryItem]] = {}

    def read(user_id: str, agent_id: str) -> list[MemoryItem]:
        if (user_id, agent_id) not in cache:
            cache[(user_id, agent_id)] = memory_store.list_active_agent_memories(db, user_id, agent_id)
        return cache[(user_id, agent_id)]

    return read


def read_only_ports(read: MemoryReader) -> Callable[[str, str], MemoryPorts]:
    """Ports for chat tool skills: the active memories of exactly this owner's agent, nothing else."""

    def ports(user_id: str, agent_id: str) -> MemoryPorts:
        return MemoryPorts(list_active_memories=lambda: read(user_id, agent_id))

    return ports


def read_write_ports(db: Db, user_id: str, agent_id: str, now: datetime) -> MemoryPorts:
    """memory_write / memory_forget bound to this owner and agent: model output cannot name another."""

    def list_active() -> list[MemoryItem]:
        return memory_store.list_active_agent_memories(db, user_id, agent_id)

    def write(title: str, content: str, importance: int) -> tuple[MemoryItem, bool]:
        memory_id = stable_id("memory", user_id, agent_id, " ".join(title.casefold().split()))
        existing = memory_store.get_memory(db, user_id, agent_id, memory_id)
        memory = MemoryItem(
            memory_id=memory_id, user_id=user_id, agent_id=agent_id, title=title, content=content,
            importance=importance, status=MemoryStatus.ACTIVE, source=MemorySource.AUTOMATION,
            created_at=existing.created_at if existing else now, updated_at=now,
        )
        memory_store.put_memory(db, memory)
        return memory, existing is None or existing.status is MemoryStatus.FORGOTTEN

    def forget(memory_id: str, match: str | None) -> MemoryItem | None:
        if match:
            found = rank(match, list_active(), limit=1)
            if not found:
                return None
            memory_id = found[0].memory_id
        existing = memory_store.get_memory(db, user_id, agent_id, memory_id)
        if existing is None or existing.status is not MemoryStatus.ACTIVE:
            return None
        return memory_store.forget_memory(db, user_id, agent_id, memory_id, now)

    return MemoryPorts(list_active_memories=list_active, write_memory=write, forget_memory=forget)
