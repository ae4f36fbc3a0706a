"""Finer scopes: a grant narrowed to resources and to argument constraints (docs/contract.md "Finer scopes").

A grant's scope says where it holds: the whole user or one agent (its key, policy/grants.py GrantScope). It
may be narrowed further, as structure stored on the grant's own item (so PolicyGate reads nothing more):

- `resources`: the only resources the grant covers, by kind. `agent`: these agents of the owner (a user-wide
  grant held by some agents only); `hosted_endpoint`: these hosted endpoints of the owner and, when `tools` is
  given, only these tools of each. A call must fall within one resource of every kind the list names.
- `arguments`: constraints on named arguments of the tool's input: an allowed set of values (`enum`), a
  `maximum` (numbers) or a `maxLength` (texts: characters; lists: items). For a hosted endpoint's tools each
  names its `tool`. An argument left out is checked with its schema's default; one with neither is refused.

No narrowing is the grant as it always was. A call outside the narrowing is denied with `grant_scope_mismatch`
and one `Mismatch` code (never the value that missed). A narrowing that cannot be read back covers nothing.

This module is the structure and the matcher, pure; policy/scope_checks.py validates a narrowing when it is
granted (known kinds, the owner's resources, arguments the tool declares, values within its schema).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import msgspec
from msgspec import Struct

MAX_RESOURCES = 10
MAX_TOOLS = 20
MAX_ARGUMENTS = 10
MAX_ENUM_VALUES = 20
MAX_TEXT = 200  # characters of one enum value, a tool's or an argument's name


class ResourceKind(StrEnum):
    AGENT = "agent"
    HOSTED_ENDPOINT = "hosted_endpoint"


Scalar = str | bool | int | float


class ScopeResource(Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    kind: ResourceKind
    id: str
    tools: tuple[str, ...] = ()  # hosted_endpoint only: the tools covered (none given: every tool)


class ConstraintKind(StrEnum):
    ENUM = "enum"
    MAXIMUM = "maximum"
    MAX_LENGTH = "maxLength"


class ArgumentConstraint(Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    name: str
    tool: str | None = None  # a hosted endpoint's tool; None for a tool skill's one tool
    enum: tuple[Scalar, ...] | None = None
    maximum: int | float | None = None
    max_length: int | None = None

    @property
    def kinds(self) -> tuple[ConstraintKind, ...]:
        return tuple(k for k, v in ((ConstraintKind.ENUM, self.enum), (ConstraintKind.MAXIMUM, self.maximum),
                                    (ConstraintKind.MAX_LENGTH, self.max_length)) if v is not None)

    @property
    def kind(self) -> ConstraintKind:
        """The one kind it states (scope_checks.py refuses any other number of them)."""
        return self.kinds[0]


class Narrowing(Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    resources: tuple[ScopeResource, ...] = ()
    arguments: tuple[ArgumentConstraint, ...] = ()
    unreadable: bool = False  # stored, but not readable back: covers nothing

    def __bool__(self) -> bool:
        return bool(self.resources or self.arguments or self.unreadable)

    def ids(self, kind: ResourceKind) -> tuple[str, ...]:
        return tuple(r.id for r in self.resources if r.kind is kind)

    def resource(self, kind: ResourceKind, resource_id: str) -> ScopeResource | None:
        return next((r for r in self.resources if r.kind is kind and r.id == resource_id), None)

    def covers_tool(self, endpoint_id: str, tool: str) -> bool:
        """Whether an endpoint's tool is within the resources (its arguments are checked per call)."""
        if self.unreadable:
            return False
        if not self.ids(ResourceKind.HOSTED_ENDPOINT):
            return True
        found = self.resource(ResourceKind.HOSTED_ENDPOINT, endpoint_id)
        return found is not None and (not found.tools or tool in found.tools)

    def audit_codes(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(resources as `kind:id`, constraints as `tool:name:kind`): what the grant's audit event records of it.
        Ids and names only; never a value. Names are checked as codes by the audit itself."""
        return (tuple(f"{r.kind.value}:{r.id}" for r in self.resources),
                tuple(":".join(p for p in (c.tool, c.name, c.kind.value) if p) for c in self.arguments))


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Narrowing)
UNREADABLE = Narrowing(unreadable=True)


def encode(narrowing: Narrowing) -> str:
    return _encoder.encode(narrowing).decode("utf-8")


def decode(text: str) -> Narrowing:
    """The stored narrowing; one that cannot be read (written by hand, by a later version) covers nothing."""
    try:
        return _decoder.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return UNREADABLE


class Mismatch(StrEnum):
    """Why a call falls outside a grant's narrowing: the audit's and the error's code."""

    AGENT = "agent"
    ENDPOINT = "endpoint"
    TOOL = "tool"
    ARGUMENT_MISSING = "argument_missing"
    ARGUMENT_ENUM = "argument_enum"
    ARGUMENT_MAXIMUM = "argument_maximum"
    ARGUMENT_MAX_LENGTH = "argument_max_length"
    UNREADABLE = "scope_unreadable"


class ScopedCall(Struct, frozen=True, kw_only=True):
    """What a call touches, as far as a narrowing can tell. `arguments` None: not a call of a tool (an offer, a
    context injection, a background job), so only the agent and the endpoint given count."""

    endpoint_id: str | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] | None = None
    defaults: Mapping[str, Any] = {}


class Miss(Struct, frozen=True):
    mismatch: Mismatch
    argument: str | None = None  # the constraint's argument name (a name the tool's schema declares)


_MISSING = object()


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def same_value(a: object, b: object) -> bool:
    """JSON equality: a boolean is never a number, 1 and 1.0 are the same number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _number(a) and _number(b):
        return a == b
    return type(a) is type(b) and a == b


def constraint_holds(constraint: ArgumentConstraint, value: object) -> Mismatch | None:
    kind = constraint.kind
    if kind is ConstraintKind.ENUM:
        return None if any(same_value(value, allowed) for allowed in constraint.enum or ()) else Mismatch.ARGUMENT_ENUM
    if kind is ConstraintKind.MAXIMUM:
        limit = constraint.maximum
        return None if _number(value) and limit is not None and value <= limit else Mismatch.ARGUMENT_MAXIMUM  # type: ignore[operator]
    limit = constraint.max_length
    sized = isinstance(value, str | list | tuple)
    return None if sized and limit is not None and len(value) <= limit else Mismatch.ARGUMENT_MAX_LENGTH  # type: ignore[arg-type]


def miss(narrowing: Narrowing | None, agent_id: str | None, call: ScopedCall | None) -> Miss | None:
    """None when the call is within the narrowing (or there is none); otherwise the first reason it is not."""
    if not narrowing:
        return None
    if narrowing.unreadable:
        return Miss(Mismatch.UNREADABLE)
    agents = narrowing.ids(ResourceKind.AGENT)
    if agents and agent_id not in agents:
        return Miss(Mismatch.AGENT)
    if call is None:
        return None
    if call.endpoint_id is not None and narrowing.ids(ResourceKind.HOSTED_ENDPOINT):
        found = narrowing.resource(ResourceKind.HOSTED_ENDPOINT, call.endpoint_id)
        if found is None:
            return Miss(Mismatch.ENDPOINT)
        if found.tools and call.tool not in found.tools:
            return Miss(Mismatch.TOOL)
    if call.arguments is None:
        return None
    for constraint in narrowing.arguments:
        if constraint.tool is not None and constraint.tool != call.tool:
            continue
        value = call.arguments.get(constraint.name, _MISSING)
        if value is _MISSING:
            value = call.defaults.get(constraint.name, _MISSING)
        if value is _MISSING:
            return Miss(Mismatch.ARGUMENT_MISSING, constraint.name)
        failed = constraint_holds(constraint, value)
        if failed is not None:
            return Miss(failed, constraint.name)
    return None


def schema_defaults(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `default` of each top-level property of an input schema (what a left-out argument becomes)."""
    properties = (schema or {}).get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {name: prop["default"] for name, prop in properties.items()
            if isinstance(prop, Mapping) and "default" in prop}
