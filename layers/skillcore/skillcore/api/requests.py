"""API request models: strict (unknown fields are rejected), camelCase on the wire."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic.alias_generators import to_camel

from skillcore.background.lifecycle import JobStatus
from skillcore.memory.models import MemoryStatus
from skillcore.models import ConversationKind


class Strict(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", alias_generator=to_camel, populate_by_name=False, frozen=True)


def _no_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


class PutProfile(Strict):
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    display_name: str | None = Field(default=None, max_length=60)


class CreateAgent(Strict):
    name: str = Field(min_length=1, max_length=40)
    persona: str = Field(default="", max_length=2000)

    _name = field_validator("name")(_no_blank)


Id = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class CreateConversation(Strict):
    kind: Literal["group"]
    agent_ids: list[Id] = Field(min_length=2, max_length=8)
    title: str | None = Field(default=None, min_length=1, max_length=80)


class PostMessage(Strict):
    client_message_id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    text: str = Field(min_length=1, max_length=4000)
    agent_id: Id | None = None

    _text = field_validator("text")(_no_blank)


class PatchSkill(Strict):
    enabled: bool = Field(strict=True)


class Paging(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    limit: int = Field(default=50, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=2048)


class ConversationQuery(Paging):
    kind: ConversationKind | None = None


class UserScope(Strict):
    type: Literal["user"]


class AgentScope(Strict):
    type: Literal["agent"]
    agent_id: Id


class PatchPermission(Strict):
    skill_id: str = Field(min_length=1, max_length=64)
    permission_code: str = Field(min_length=1, max_length=64)
    scope: UserScope | AgentScope = Field(discriminator="type")
    granted: bool = Field(strict=True)


class CreateMemory(Strict):
    title: str = Field(min_length=1, max_length=80)
    content: str = Field(min_length=1, max_length=1000)
    importance: int = Field(default=3, ge=1, le=5, strict=True)

    _title = field_validator("title", "content")(_no_blank)


class MemoryQuery(Paging):
    status: MemoryStatus = MemoryStatus.ACTIVE


class AdminAuditQuery(Paging):
    user_id: str = Field(alias="userId", min_length=1, max_length=128)


class CreateBackgroundJob(Strict):
    skill_id: str = Field(min_length=1, max_length=64)
    agent_id: Id
    run_at: AwareDatetime
    note: str = Field(default="", max_length=500)


class JobQuery(Paging):
    status: JobStatus | None = None


LocalTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]


class AutomationConfigBody(Strict):
    prompt: str = Field(min_length=1, max_length=2000)
    tools: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(max_length=8)

    _prompt = field_validator("prompt")(_no_blank)


class CreateAutomationJob(Strict):
    title: str = Field(min_length=1, max_length=80)
    schedule_type: Literal["daily", "weekly"]
    local_time: LocalTime
    weekday: int | None = Field(default=None, ge=1, le=7, strict=True)
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    agent_id: Id | None = None
    config: AutomationConfigBody


class PatchAutomationJob(Strict):
    status: Literal["active", "paused"] | None = None
    title: str | None = Field(default=None, min_length=1, max_length=80)
    local_time: LocalTime | None = None
    weekday: int | None = Field(default=None, ge=1, le=7, strict=True)
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    config: AutomationConfigBody | None = None
