"""Request models of the core routes: profile, agents, conversations, memories."""

from typing import Annotated, Literal

from pydantic import Field, field_validator

from skillcore.api.requests import Paging
from skillcore.conversations.models import ConversationKind
from skillcore.memory.models import MemoryStatus
from skillcore.shapes import INTEGRAL, NOT_BLANK, TIMEZONE_MAX, Id, Strict, not_blank

AGENT_NAME_MAX = 40
AGENT_PERSONA_MAX = 2000
MEMORY_TITLE_MAX = 80
MEMORY_CONTENT_MAX = 1000


class PutProfile(Strict):
    timezone: str | None = Field(default=None, min_length=1, max_length=TIMEZONE_MAX)
    display_name: str | None = Field(default=None, max_length=60)
    # The zone of a profile this call creates (when `timezone` is absent); an existing profile keeps its own.
    initial_timezone: str | None = Field(default=None, min_length=1, max_length=TIMEZONE_MAX)


class CreateAgent(Strict):
    name: str = Field(min_length=1, max_length=AGENT_NAME_MAX, json_schema_extra=NOT_BLANK)
    persona: str = Field(default="", max_length=AGENT_PERSONA_MAX)

    _name = field_validator("name")(not_blank)


class CreateConversation(Strict):
    kind: Literal["group"]
    agent_ids: list[Id] = Field(min_length=2, max_length=8, json_schema_extra={"uniqueItems": True})
    title: str | None = Field(default=None, min_length=1, max_length=80)


class ConversationQuery(Paging):
    kind: ConversationKind | None = None


class CreateMemory(Strict):
    title: str = Field(min_length=1, max_length=MEMORY_TITLE_MAX, json_schema_extra=NOT_BLANK)
    content: str = Field(min_length=1, max_length=MEMORY_CONTENT_MAX, json_schema_extra=NOT_BLANK)
    importance: Annotated[int, Field(ge=1, le=5, strict=True), INTEGRAL] = 3

    _title = field_validator("title", "content")(not_blank)


class MemoryQuery(Paging):
    status: MemoryStatus = MemoryStatus.ACTIVE
