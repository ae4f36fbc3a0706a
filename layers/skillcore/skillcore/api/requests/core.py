"""Request models of the core routes: profile, agents, conversations, memories."""

from typing import Literal

from pydantic import Field, field_validator

from skillcore.api.requests import Id, Paging, Strict, not_blank
from skillcore.memory.models import MemoryStatus
from skillcore.models import ConversationKind


class PutProfile(Strict):
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    display_name: str | None = Field(default=None, max_length=60)


class CreateAgent(Strict):
    name: str = Field(min_length=1, max_length=40)
    persona: str = Field(default="", max_length=2000)

    _name = field_validator("name")(not_blank)


class CreateConversation(Strict):
    kind: Literal["group"]
    agent_ids: list[Id] = Field(min_length=2, max_length=8)
    title: str | None = Field(default=None, min_length=1, max_length=80)


class ConversationQuery(Paging):
    kind: ConversationKind | None = None


class CreateMemory(Strict):
    title: str = Field(min_length=1, max_length=80)
    content: str = Field(min_length=1, max_length=1000)
    importance: int = Field(default=3, ge=1, le=5, strict=True)

    _title = field_validator("title", "content")(not_blank)


class MemoryQuery(Paging):
    status: MemoryStatus = MemoryStatus.ACTIVE
