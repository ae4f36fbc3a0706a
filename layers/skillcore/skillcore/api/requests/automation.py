"""Request models of the automation job routes.

Null is not a value here. On create, an optional field may be left out or be null (both mean "the
default": the profile's time zone, all agents, no weekday). On PATCH a field that is present is a change,
so `null` is a 422 `validation_error` naming the field: no field of a job can be unset, and `weekday: null`
would never mean "clear" usefully (the schedule type cannot be patched, a daily job has no weekday and a
weekly job needs one).
"""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, field_validator

from skillcore.automation.models import PROMPT_MAX, TITLE_MAX
from skillcore.shapes import (
    INTEGRAL,
    NOT_BLANK,
    TIMEZONE_MAX,
    Id,
    Strict,
    no_null_properties,
    not_blank,
)

Weekday = Annotated[int, Field(ge=1, le=7, strict=True), INTEGRAL]
LocalTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]


class AutomationConfigBody(Strict):
    prompt: str = Field(min_length=1, max_length=PROMPT_MAX, json_schema_extra=NOT_BLANK)
    tools: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(max_length=8)

    _prompt = field_validator("prompt")(not_blank)


class CreateAutomationJob(Strict):
    # The schedule's rule, in the document: a weekly job needs a weekday, a daily one takes none.
    model_config = ConfigDict(json_schema_extra={
        "if": {"properties": {"scheduleType": {"const": "weekly"}}},
        "then": {"required": ["weekday"], "properties": {"weekday": {"type": "integer", "minimum": 1, "maximum": 7}}},
        "else": {"properties": {"weekday": {"type": "null"}}},
    })

    title: str = Field(min_length=1, max_length=TITLE_MAX, json_schema_extra=NOT_BLANK)
    schedule_type: Literal["daily", "weekly"]
    local_time: LocalTime
    weekday: Weekday | None = None
    timezone: str | None = Field(default=None, min_length=1, max_length=TIMEZONE_MAX)
    agent_id: Id | None = None
    config: AutomationConfigBody

    _title = field_validator("title")(not_blank)


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("must not be null; leave the field out to keep its value")
    return value


def _patch_schema(schema: dict[str, Any]) -> None:
    schema["minProperties"] = 1  # an empty patch changes nothing: a 422
    no_null_properties(schema)


class PatchAutomationJob(Strict):
    model_config = ConfigDict(json_schema_extra=_patch_schema)
    # `| None` only so that an absent field has a default; an explicit null is refused before validation.
    status: Literal["active", "paused"] | None = None
    title: str | None = Field(default=None, min_length=1, max_length=TITLE_MAX, json_schema_extra=NOT_BLANK)
    local_time: LocalTime | None = None
    weekday: Weekday | None = None
    timezone: str | None = Field(default=None, min_length=1, max_length=TIMEZONE_MAX)
    config: AutomationConfigBody | None = None

    _present_is_not_null = field_validator("*", mode="before")(_not_null)

    @field_validator("title")
    @classmethod
    def _title(cls, value: str | None) -> str | None:
        return None if value is None else not_blank(value)
