"""The memory item, shared by the Memories API, memory-recall, memory-context and the automation tools."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

TITLE_MAX = 80
CONTENT_MAX = 1000


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    FORGOTTEN = "forgotten"


class MemorySource(StrEnum):
    USER = "user"
    AUTOMATION = "automation"


class MemoryItem(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    memory_id: str
    user_id: str
    agent_id: str
    title: str = Field(min_length=1, max_length=TITLE_MAX)
    content: str = Field(min_length=1, max_length=CONTENT_MAX)
    importance: int = Field(ge=1, le=5)
    status: MemoryStatus
    source: MemorySource
    created_at: datetime
    updated_at: datetime
