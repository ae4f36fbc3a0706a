"""The ports of the memory skills (the recall tool, memory_write, memory_forget): what their handlers may
touch, already bound by the caller to one owner and one agent (memory/ports.py binds them to the store).
A handler never sees a database client, and model output cannot name another owner's memory."""

from __future__ import annotations

from collections.abc import Callable

from msgspec import Struct

from skillcore.memory.models import MemoryItem


class MemoryPorts(Struct, frozen=True):
    list_active_memories: Callable[[], list[MemoryItem]]
    # (title, content, importance) -> (memory, created); absent for read-only callers (chat turns)
    write_memory: Callable[[str, str, int], tuple[MemoryItem, bool]] | None = None
    # (memory_id, match) -> the forgotten memory, or None when nothing of this owner's agent matched
    forget_memory: Callable[[str, str | None], MemoryItem | None] | None = None
