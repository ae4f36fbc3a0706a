"""Request models of the skill, permission and audit routes."""

import re
from typing import Annotated, Literal

from pydantic import (
    AwareDatetime,
    Field,
    JsonValue,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from skillcore.api.requests import Paging
from skillcore.policy import scopes
from skillcore.policy.audit import AuditAction, Decision
from skillcore.shapes import INTEGRAL, Id, Strict


class PatchSkill(Strict):
    enabled: bool = Field(strict=True)


_NAME = Field(min_length=1, max_length=scopes.MAX_TEXT)
Finite = StrictInt | Annotated[StrictFloat, Field(allow_inf_nan=False)]


class NarrowToResource(Strict):
    """One resource the grant is narrowed to: one of the owner's agents, or hosted endpoints (and their tools)."""

    kind: scopes.ResourceKind
    id: Id
    tools: list[Annotated[str, _NAME]] | None = Field(default=None, max_length=scopes.MAX_TOOLS)


class ConstrainArgument(Strict):
    """A constraint on one named argument of the tool's input: exactly one of `enum`, `maximum`, `maxLength`."""

    name: str = _NAME
    tool: str | None = Field(default=None, min_length=1, max_length=scopes.MAX_TEXT)
    enum: list[StrictBool | StrictInt | Annotated[StrictFloat, Field(allow_inf_nan=False)]
               | Annotated[StrictStr, Field(max_length=scopes.MAX_TEXT)]] | None = Field(
        default=None, min_length=1, max_length=scopes.MAX_ENUM_VALUES)
    maximum: Finite | None = None
    max_length: Annotated[int, Field(ge=0, strict=True), INTEGRAL] | None = None  # 10 or 10.0, as JSON has it

    @model_validator(mode="after")
    def _one_kind(self) -> "ConstrainArgument":
        if sum(v is not None for v in (self.enum, self.maximum, self.max_length)) != 1:
            raise ValueError("exactly one of enum, maximum, maxLength")
        return self


class _Narrowed(Strict):
    resources: list[NarrowToResource] | None = Field(default=None, max_length=scopes.MAX_RESOURCES)
    arguments: list[ConstrainArgument] | None = Field(default=None, max_length=scopes.MAX_ARGUMENTS)

    def narrowing(self) -> scopes.Narrowing | None:
        """The narrowing asked for (policy/scopes.py), or None: the grant is unscoped."""
        if not self.resources and not self.arguments:
            return None
        return scopes.Narrowing(
            resources=tuple(scopes.ScopeResource(kind=r.kind, id=r.id, tools=tuple(r.tools or ()))
                            for r in self.resources or ()),
            arguments=tuple(scopes.ArgumentConstraint(name=a.name, tool=a.tool,
                                                      enum=tuple(a.enum) if a.enum is not None else None,
                                                      maximum=a.maximum, max_length=a.max_length)
                            for a in self.arguments or ()),
        )


class UserScope(_Narrowed):
    type: Literal["user"]


class AgentScope(_Narrowed):
    type: Literal["agent"]
    agent_id: Id


class PatchPermission(Strict):
    skill_id: str = Field(min_length=1, max_length=64)
    permission_code: str = Field(min_length=1, max_length=64)
    scope: UserScope | AgentScope = Field(discriminator="type")
    granted: bool = Field(strict=True)

    @model_validator(mode="after")
    def _narrowed_when_granted(self) -> "PatchPermission":
        if not self.granted and self.scope.narrowing() is not None:
            raise ValueError("a revoke names the grant by its scope's type (and agent): no resources or arguments")
        return self


# An action's value, or a family: a prefix of one ending in "." (`hosted_endpoint.`, `user_capability.binding.`).
AUDIT_ACTIONS = frozenset(a.value for a in AuditAction)
AUDIT_ACTION_FAMILIES = frozenset(
    ".".join(parts[:n]) + "." for parts in (a.split(".") for a in AUDIT_ACTIONS) for n in range(1, len(parts))
)
_AUDIT_CODE = r"^[A-Za-z0-9][A-Za-z0-9:_.#@/+-]{0,127}$"


_ACTION_VALUES: list[JsonValue] = [*sorted(AUDIT_ACTIONS | AUDIT_ACTION_FAMILIES)]  # the query's enum
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class AuditQuery(Paging):
    """The audit's filters (docs/contract.md "Audit and runs"): each one given narrows the list; `from` is
    inclusive and `to` exclusive, both times with an offset."""

    skill_id: str | None = Field(default=None, alias="skillId", min_length=1, max_length=128, pattern=_AUDIT_CODE,
                                 description="The event's skillId, exactly.")
    # The document lists the values (an enum) that the validator below accepts, so a client sees them all.
    action: str | None = Field(default=None, min_length=1, max_length=64, pattern=r"^[a-z_]+(\.[a-z_]+)*\.?$",
                               json_schema_extra={"enum": _ACTION_VALUES},
                               description='An action (`tool.execute`) or a family: a prefix ending in "." '
                                           "(`hosted_endpoint.`).")
    decision: Decision | None = Field(default=None, description="The outcome.")
    endpoint_id: str | None = Field(default=None, alias="endpointId", min_length=1, max_length=128,
                                    pattern=_AUDIT_CODE, description="A hosted endpoint's events (metadata.endpointId).")
    since: AwareDatetime | None = Field(default=None, alias="from",
                                        description="Inclusive; a time with an offset (a naive time is 422).")
    until: AwareDatetime | None = Field(default=None, alias="to",
                                        description="Exclusive; a time with an offset (not after `from`: an empty range, no events).")

    @field_validator("action")
    @classmethod
    def _known_action(cls, value: str | None) -> str | None:
        if value is not None and value not in AUDIT_ACTIONS and value not in AUDIT_ACTION_FAMILIES:
            raise ValueError("not an audit action nor a family of them (a prefix ending in '.')")
        return value

    @field_validator("since", "until", mode="before")
    @classmethod
    def _a_time_not_a_number(cls, value: object) -> object:
        # A query string is text, and pydantic's lax mode would read "0.5" as seconds since the epoch (UTC):
        # the document says a date-time with an offset, and nothing else is one.
        if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
            raise ValueError("a time with an offset (ISO 8601), not a number")
        return value


class AdminAuditQuery(AuditQuery):
    user_id: str = Field(alias="userId", min_length=1, max_length=128)
