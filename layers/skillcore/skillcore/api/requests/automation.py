"""Request models of the automation job routes.

Null is not a value here. On create, an optional field may be left out or be null (both mean "the
default": the profile's time zone, all agents, no weekday). On PATCH a field that is present is a change,
so `null` is a 422 `validation_error` naming the field: no field of a job can be unset, and `weekday: null`
would never mean "clear" usefully (the schedule type cannot be patched, a daily job has no weekday and a
weekly job needs one).
"""

from typing import Annotated, Any, Literal

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

    _title = field_validator("title")(not_blank)


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("must not be null; leave the field out to keep its value")
    return value


class PatchAutomationJob(Strict):
    # `| None` only so that an absent field has a default; an explicit null is refused before validation.
    status: Literal["active", "paused"] | None = None
    title: str | None = Field(default=None, min_length=1, max_length=80)
    local_time: LocalTime | None = None
    weekday: int | None = Field(default=None, ge=1, le=7, strict=True)
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    config: AutomationConfigBody | None = None

    _present_is_not_null = field_validator("*", mode="before")(_not_null)

    @field_validator("title")
    @classmethod
    def _title(cls, value: str | None) -> str | None:
        return None if value is None else not_blank(value)
