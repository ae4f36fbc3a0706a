"""Bodies of the MCP tools that have no HTTP route of their own (the others answer their route's body)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillcore.api.views import Body

if TYPE_CHECKING:
    from skillcore.skills.memory_recall import RecallOutput


class RecalledMemory(Body, frozen=True, kw_only=True):
    memory_id: str
    title: str
    content: str
    importance: int


class MemoryRecall(Body, frozen=True, kw_only=True):
    memories: list[RecalledMemory]
    browsed: bool  # no question was asked: the most important memories, not matches


def memory_recall(output: RecallOutput) -> MemoryRecall:
    return MemoryRecall(browsed=output.browsed, memories=[
        RecalledMemory(memory_id=m.memory_id, title=m.title, content=m.content, importance=m.importance)
        for m in output.memories
    ])
