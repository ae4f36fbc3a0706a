"""The user-capability structure as a user (or the drafter's model) writes it: the create body's shape, the
workflow's steps, a tool binding and a draft answer. These are the domain's input models: the create and
update routes take them as their bodies, and the drafter gives their JSON Schema to the model and validates
its proposal with them, so the document, the routes and the drafter cannot disagree on the shape.

The shape only: the structural defences (text filter, references, schema subset) run after these, in the
service, because their answers are rule codes (`unsafe_text`, `unknown_reference`, `schema_not_allowed`).
"""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, field_validator, model_validator

from skillcore.capabilities.models import MAX_BINDINGS_PER_CAPABILITY, MAX_STEPS
from skillcore.shapes import INTEGRAL, NOT_BLANK, Strict, not_blank

NAME_MAX = 40
TEXT_MAX = 500
TRIGGER_MAX = 40
MAX_TRIGGERS = 10
DISPLAY_NAME_MAX = 60
ANSWER_MAX = 500

CapabilityName = Annotated[str, StringConstraints(pattern=rf"^[a-z][a-z0-9_]{{2,{NAME_MAX - 1}}}$")]
BindingName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{1,39}$")]
HostProfile = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,39}$")]
PlatformCapabilityId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9:_.-]{0,63}$")]
Instruction = Annotated[str, StringConstraints(min_length=1, max_length=TEXT_MAX), Field(json_schema_extra=NOT_BLANK)]
Trigger = Annotated[str, StringConstraints(min_length=1, max_length=TRIGGER_MAX), Field(json_schema_extra=NOT_BLANK)]
Version = Annotated[int, Field(ge=1, strict=True), INTEGRAL]


def _texts_not_blank(values: list[str]) -> list[str]:
    for value in values:
        not_blank(value)
    return values


def _unique(values: list[str]) -> list[str]:
    if len(set(values)) != len(values):
        raise ValueError("items must be unique")
    return values


class PlatformStepInput(Strict):
    kind: Literal["platformCapability"]
    capability_id: PlatformCapabilityId
    instruction: Instruction

    _text = field_validator("instruction")(not_blank)


class LocalToolStepInput(Strict):
    kind: Literal["localTool"]
    tool_name: BindingName
    host_profile: HostProfile
    instruction: Instruction

    _text = field_validator("instruction")(not_blank)


Step = Annotated[PlatformStepInput | LocalToolStepInput, Field(discriminator="kind")]


class WorkflowInput(Strict):
    objective: str = Field(min_length=1, max_length=TEXT_MAX, json_schema_extra=NOT_BLANK)
    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)
    completion_criteria: str = Field(min_length=1, max_length=TEXT_MAX, json_schema_extra=NOT_BLANK)

    _texts = field_validator("objective", "completion_criteria")(not_blank)


class ToolBindingInput(Strict):
    name: BindingName
    host_profile: HostProfile
    mcp_server_id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")
    mcp_tool_name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,128}$")
    # Only its type here: the draft-07 subset and its limits are the schema defence's (schema_not_allowed).
    input_schema: dict[str, Any]
    requires_user_confirmation: bool = Field(default=True, strict=True)


class CapabilityFields(Strict):
    display_name: str = Field(min_length=1, max_length=DISPLAY_NAME_MAX, json_schema_extra=NOT_BLANK)
    when_to_use: list[Trigger] = Field(min_length=1, max_length=MAX_TRIGGERS)
    workflow: WorkflowInput
    platform_capability_ids: list[PlatformCapabilityId] = Field(
        max_length=20, json_schema_extra={"uniqueItems": True}
    )

    _name = field_validator("display_name")(not_blank)
    _triggers = field_validator("when_to_use")(_texts_not_blank)
    _ids = field_validator("platform_capability_ids")(_unique)


class CreateUserCapability(CapabilityFields):
    name: CapabilityName
    # Two bindings with one name are 409 binding_name_taken (the service), as on the binding route: a JSON
    # Schema cannot say "unique by name".
    tool_bindings: list[ToolBindingInput] = Field(default_factory=list, max_length=MAX_BINDINGS_PER_CAPABILITY)



MAX_ANSWERS = 20


class DraftAnswerInput(Strict):
    # The document says what the validator below enforces: an answer carries a text, a binding, or both.
    model_config = Strict.model_config | ConfigDict(
        json_schema_extra={"anyOf": [
            {"required": ["text"], "properties": {"text": {"type": "string"}}},
            {"required": ["binding"], "properties": {"binding": {"type": "object"}}},
            {"required": ["drop"], "properties": {"drop": {"const": True}}}]})
    gap_id: str = Field(min_length=1, max_length=64)
    text: str | None = Field(default=None, min_length=1, max_length=ANSWER_MAX, json_schema_extra=NOT_BLANK)
    binding: ToolBindingInput | None = None
    # The step the gap is about is removed from the draft (a gap about a step only: `/workflow/steps/<i>...`).
    drop: Literal[True] | None = None

    @field_validator("text")
    @classmethod
    def _text(cls, value: str | None) -> str | None:
        return None if value is None else not_blank(value)

    @model_validator(mode="after")
    def _something(self) -> "DraftAnswerInput":
        if self.text is None and self.binding is None and self.drop is None:
            raise ValueError("an answer needs a text, a binding or drop")
        if self.drop and (self.text is not None or self.binding is not None):
            raise ValueError("an answer that drops its step carries nothing else")
        return self
