"""The memory item, shared by the Memories API, the memory skills (recall, context) and the automation tools."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from msgspec import Struct

from skillcore import checks

TITLE_MAX = 80
CONTENT_MAX = 1000


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    FORGOTTEN = "forgotten"


class MemorySource(StrEnum):
    USER = "user"
    AUTOMATION = "automation"


class MemoryItem(Struct, frozen=True, kw_only=True):
    """Its writers validate their input first (request bodies, tool input); the bounds are checked again here
    so that no path can store an empty, oversized or unranked memory."""

    memory_id: str
    user_id: str
    agent_id: str
    title: str
    content: str
    importance: int
    status: MemoryStatus
    source: MemorySource
    created_at: datetime
    updated_at: datetime

    def __post_init__(self) -> None:
        for name, longest in (("title", TITLE_MAX), ("content", CONTENT_MAX)):
            if not checks.text(getattr(self, name), longest):
                raise ValueError(f"memory {name} must be 1 to {longest} characters")
        if not checks.integer(self.importance, 1, 5):
            raise ValueError("memory importance must be an integer from 1 to 5")
