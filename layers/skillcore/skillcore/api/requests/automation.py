"""Request models of the automation job routes."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from skillcore.api.requests import Id, Strict, not_blank

LocalTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]


class AutomationConfigBody(Strict):
    prompt: str = Field(min_length=1, max_length=2000)
    tools: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(max_length=8)

    _prompt = field_validator("prompt")(not_blank)


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
