"""A grant's narrowing is checked when it is granted (policy/scopes.py has the structure and the matcher).

- the resource kinds the skill can be narrowed by: `agent` for a user-wide grant of any skill (an agent's grant
  is already one agent's), `hosted_endpoint` for a skill whose tools are the user's hosted endpoints;
- the resources are the owner's: another user's agent is 404 `agent_not_found`, another user's endpoint 404
  `not_found`, exactly as if they did not exist;
- argument constraints only where a tool's input schema exists (a tool skill's, or a tool of the one endpoint
  the grant names), only on arguments that schema declares, one kind each (`enum`, `maximum` or `maxLength`),
  of a kind the argument's type allows, with values within the argument's schema;
- counts and sizes bounded, no duplicates.

Everything else is 422 `validation_error` with `details.errors` (paths under `scope`, fixed messages).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from skillcore.errors import AgentNotFound, FieldError, NotFound, ValidationFailed
from skillcore.policy.grants import ScopeType
from skillcore.policy.scopes import (
    MAX_ARGUMENTS,
    MAX_ENUM_VALUES,
    MAX_RESOURCES,
    MAX_TEXT,
    MAX_TOOLS,
    ArgumentConstraint,
    ConstraintKind,
    Narrowing,
    ResourceKind,
    same_value,
)

# An endpoint's tools and their input schemas, for this owner; None: no such endpoint of theirs.
EndpointTools = Callable[[str], Mapping[str, Mapping[str, Any]] | None]


class ScopeSubject:
    """What a narrowing is checked against: the skill's shape and the owner's resources, through ports."""

    def __init__(self, *, scope_type: ScopeType, tool_schema: Mapping[str, Any] | None, proxied: bool,
                 agent_exists: Callable[[str], bool], endpoint_tools: EndpointTools | None):
        self.scope_type = scope_type
        self.tool_schema = tool_schema  # a tool skill's input schema; None for any other skill
        self.proxied = proxied  # the skill's tools are the user's hosted endpoints'
        self.agent_exists = agent_exists
        self.endpoint_tools = endpoint_tools


def _is_type(value: object, name: str) -> bool:
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    return {
        "string": isinstance(value, str),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "array": isinstance(value, list | tuple),
        "object": isinstance(value, Mapping),
        "null": value is None,
    }.get(name, False)


def _branches(prop: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The property's schemas other than null (an optional argument is `anyOf: [X, null]`)."""
    options = prop.get("anyOf", prop.get("oneOf"))
    if isinstance(options, list):
        return [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
    return [prop]


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    return {t for t in declared if isinstance(t, str)} if isinstance(declared, list) else set()


def _bound(schema: Mapping[str, Any], name: str) -> float | None:
    value = schema.get(name)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def fits(schema: Mapping[str, Any], value: object) -> bool:
    """Whether `value` is within an argument's schema, for the keywords a constraint can meet: type, enum,
    const, the numeric bounds and the lengths."""
    types = _types(schema)
    if types and not any(_is_type(value, t) for t in types):
        return False
    if isinstance(schema.get("enum"), list) and not any(same_value(value, e) for e in schema["enum"]):
        return False
    if "const" in schema and not same_value(value, schema["const"]):
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = _bound(schema, "minimum"), _bound(schema, "maximum")
        x_low, x_high = _bound(schema, "exclusiveMinimum"), _bound(schema, "exclusiveMaximum")
        if (low is not None and value < low) or (high is not None and value > high):
            return False
        if (x_low is not None and value <= x_low) or (x_high is not None and value >= x_high):
            return False
    if isinstance(value, str):
        low, high = _bound(schema, "minLength"), _bound(schema, "maxLength")
        if (low is not None and len(value) < low) or (high is not None and len(value) > high):
            return False
    return True


def _constraint_errors(path: str, constraint: ArgumentConstraint, prop: Mapping[str, Any]) -> list[FieldError]:
    branches = _branches(prop)
    kind = constraint.kind
    if kind is ConstraintKind.MAXIMUM:
        maximum = constraint.maximum
        numeric = [b for b in branches if _types(b) & {"number", "integer"}]
        if not numeric:
            return [FieldError(path=f"{path}.maximum", message="the argument is not a number")]
        if not any(fits(b, maximum) for b in numeric):
            return [FieldError(path=f"{path}.maximum", message="not within the argument's schema")]
        return []
    if kind is ConstraintKind.MAX_LENGTH:
        length = constraint.max_length
        if not isinstance(length, int) or isinstance(length, bool) or length < 0:
            return [FieldError(path=f"{path}.maxLength", message="a length is an integer >= 0")]
        sized = [b for b in branches if _types(b) & {"string", "array"}]
        if not sized:
            return [FieldError(path=f"{path}.maxLength", message="the argument is not a text or a list")]
        for b in sized:
            text = "string" in _types(b)
            low, high = _bound(b, "minLength" if text else "minItems"), _bound(b, "maxLength" if text else "maxItems")
            if (low is None or length >= low) and (high is None or length <= high):
                return []
        return [FieldError(path=f"{path}.maxLength", message="not within the argument's schema")]
    values = constraint.enum or ()
    if not 1 <= len(values) <= MAX_ENUM_VALUES:
        return [FieldError(path=f"{path}.enum", message=f"1 to {MAX_ENUM_VALUES} values")]
    errors: list[FieldError] = []
    for i, value in enumerate(values):
        if isinstance(value, str) and len(value) > MAX_TEXT:
            errors.append(FieldError(path=f"{path}.enum[{i}]", message=f"at most {MAX_TEXT} characters"))
        elif any(same_value(value, other) for other in values[:i]):
            errors.append(FieldError(path=f"{path}.enum[{i}]", message="a duplicate value"))
        elif not any(fits(b, value) for b in branches):
            errors.append(FieldError(path=f"{path}.enum[{i}]", message="not within the argument's schema"))
    return errors


def _properties(schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    properties = (schema or {}).get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _duplicates(names: Sequence[object]) -> list[int]:
    return [i for i, name in enumerate(names) if name in names[:i]]


def check(narrowing: Narrowing, subject: ScopeSubject) -> None:
    """Raises the refusal a narrowing deserves (module docstring), or returns: it may be stored."""
    errors: list[FieldError] = []
    resources, arguments = narrowing.resources, narrowing.arguments
    if len(resources) > MAX_RESOURCES:
        errors.append(FieldError(path="scope.resources", message=f"at most {MAX_RESOURCES} resources"))
    if len(arguments) > MAX_ARGUMENTS:
        errors.append(FieldError(path="scope.arguments", message=f"at most {MAX_ARGUMENTS} constraints"))
    if errors:
        raise ValidationFailed("the scope is not valid", errors)
    for i in _duplicates([(r.kind, r.id) for r in resources]):
        errors.append(FieldError(path=f"scope.resources[{i}]", message="a duplicate resource"))
    for i, resource in enumerate(resources):
        path = f"scope.resources[{i}]"
        if resource.kind is ResourceKind.AGENT and subject.scope_type is not ScopeType.USER:
            errors.append(FieldError(path=f"{path}.kind", message="an agent's grant is already one agent's"))
        if resource.kind is ResourceKind.HOSTED_ENDPOINT and not subject.proxied:
            errors.append(FieldError(path=f"{path}.kind", message="this skill does not call hosted endpoints"))
        if resource.tools and resource.kind is not ResourceKind.HOSTED_ENDPOINT:
            errors.append(FieldError(path=f"{path}.tools", message="only an endpoint has tools"))
        if len(resource.tools) > MAX_TOOLS:
            errors.append(FieldError(path=f"{path}.tools", message=f"at most {MAX_TOOLS} tools"))
        errors += [FieldError(path=f"{path}.tools[{j}]", message="a duplicate tool")
                   for j in _duplicates(list(resource.tools))]
    if errors:
        raise ValidationFailed("the scope is not valid", errors)

    # The owner's resources, as if nothing else existed (404, whatever another user holds).
    missing = [r.id for r in resources if r.kind is ResourceKind.AGENT and not subject.agent_exists(r.id)]
    if missing:
        raise AgentNotFound(details={"agentIds": missing})
    endpoint_tools: dict[str, Mapping[str, Mapping[str, Any]]] = {}
    for resource in resources:
        if resource.kind is ResourceKind.HOSTED_ENDPOINT:
            tools = subject.endpoint_tools(resource.id) if subject.endpoint_tools else None
            if tools is None:
                raise NotFound("hosted endpoint not found")
            endpoint_tools[resource.id] = tools
    for i, resource in enumerate(resources):
        known = endpoint_tools.get(resource.id, {}) if resource.kind is ResourceKind.HOSTED_ENDPOINT else {}
        errors += [FieldError(path=f"scope.resources[{i}].tools[{j}]", message="not a tool of this endpoint")
                   for j, tool in enumerate(resource.tools) if tool not in known]
    errors += _argument_errors(narrowing, subject, endpoint_tools)
    if errors:
        raise ValidationFailed("the scope is not valid", errors)


def _argument_errors(narrowing: Narrowing, subject: ScopeSubject,
                     endpoint_tools: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[FieldError]:
    errors: list[FieldError] = []
    endpoints = narrowing.ids(ResourceKind.HOSTED_ENDPOINT)
    seen: list[tuple[str | None, str]] = []
    for i, constraint in enumerate(narrowing.arguments):
        path = f"scope.arguments[{i}]"
        if len(constraint.kinds) != 1:
            errors.append(FieldError(path=path, message="exactly one of enum, maximum, maxLength"))
            continue
        if (constraint.tool, constraint.name) in seen:
            errors.append(FieldError(path=path, message="a second constraint on this argument"))
            continue
        seen.append((constraint.tool, constraint.name))
        if subject.proxied:
            if len(endpoints) != 1:
                errors.append(FieldError(path=path, message="an argument constraint needs exactly one endpoint"))
                continue
            if constraint.tool is None:
                errors.append(FieldError(path=f"{path}.tool", message="name the endpoint's tool"))
                continue
            resource = narrowing.resource(ResourceKind.HOSTED_ENDPOINT, endpoints[0])
            tools = endpoint_tools.get(endpoints[0], {})
            if constraint.tool not in tools or (resource and resource.tools and constraint.tool not in resource.tools):
                errors.append(FieldError(path=f"{path}.tool", message="not a tool this grant covers"))
                continue
            schema: Mapping[str, Any] | None = tools[constraint.tool]
        else:
            if subject.tool_schema is None:
                errors.append(FieldError(path=path, message="this skill has no tool input to constrain"))
                continue
            if constraint.tool is not None:
                errors.append(FieldError(path=f"{path}.tool", message="this skill has one tool: leave it out"))
                continue
            schema = subject.tool_schema
        prop = _properties(schema).get(constraint.name)
        if not isinstance(prop, Mapping):
            errors.append(FieldError(path=f"{path}.name", message="not an argument the tool declares"))
            continue
        errors += _constraint_errors(path, constraint, prop)
    return errors
