"""Request models of the hosted endpoint routes (docs/contract.md "Hosted external workflows"): the shape only; the URL
policy runs in the service (its answer is `url_not_allowed` with a reason, not a shape error)."""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, field_validator

from skillcore.shapes import INTEGRAL, NOT_BLANK, Id, Strict, no_null_properties, not_blank

NAME_MAX = 40
DISPLAY_NAME_MAX = 60
URL_MAX = 2048
TOKEN_MAX = 4096

EndpointName = Annotated[str, StringConstraints(pattern=rf"^[a-z][a-z0-9_]{{2,{NAME_MAX - 1}}}$")]
DisplayName = Annotated[str, StringConstraints(min_length=1, max_length=DISPLAY_NAME_MAX), AfterValidator(not_blank),
                        Field(json_schema_extra=NOT_BLANK)]
ToolName = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Version = Annotated[int, Field(ge=1, strict=True), INTEGRAL]


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("must not be null; leave the field out to keep its value")
    return value


class RegisterEndpoint(Strict):
    name: EndpointName
    display_name: DisplayName
    url: Annotated[str, StringConstraints(min_length=1, max_length=URL_MAX)]
    auth_token: Annotated[str, StringConstraints(min_length=1, max_length=TOKEN_MAX)] | None = None


class ToolSwitches(Strict):
    model_config = ConfigDict(json_schema_extra=no_null_properties)
    _present_is_not_null = field_validator("*", mode="before")(_not_null)
    name: ToolName
    enabled: bool | None = None
    requires_approval: bool | None = None


class UpdateEndpoint(Strict):
    # `| None` only so that an absent field has a default; an explicit null is refused before validation.
    model_config = ConfigDict(json_schema_extra=no_null_properties)
    _present_is_not_null = field_validator("*", mode="before")(_not_null)
    expected_version: Version
    display_name: DisplayName | None = None
    status: Literal["active", "disabled"] | None = None
    tools: Annotated[list[ToolSwitches], Field(max_length=64)] | None = None


class CallTool(Strict):
    """One call of a snapshot tool: `arguments` are checked against the tool's input schema by the service."""

    tool_name: ToolName
    arguments: dict[str, Any]
    client_call_id: Id
    approval_id: Id | None = None


class CallHostedToolArguments(CallTool):
    """The MCP face's `call_hosted_tool`: the route's body with the endpoint's id from its path."""

    endpoint_id: Id


class AcceptSnapshot(Strict):
    expected_version: Version
    fingerprint: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
