"""Bounded validation of a hosted call's arguments: what a snapshot's input schema may hold, what arguments may
be, and the validation itself (docs/contract.md "Hosted external workflows").

A remote server writes the schema and a user (or a model) writes the arguments, so neither may make validation
stall, recurse without end or reach out. Three bounds, each checked before the next step runs:

1. The schema (at snapshot time, `check`, and again before each call: a snapshot pinned under older rules is
   refused, not validated). An allow-list, as binding schemas have (capabilities/defences/schema_subset.py),
   widened to what MCP servers commonly emit (Draft 2020-12):
   - structure: `type`, `properties`, `required`, `additionalProperties`, `items` (one schema), `enum`,
     `const`, `anyOf`, `oneOf`, `allOf` (at most MAX_BRANCHES schemas each), `$ref`, and `$defs` /
     `definitions` at the root only;
   - bounds: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength`,
     `maxLength`, `minItems`, `maxItems`, `uniqueItems`, `minProperties`, `maxProperties`;
   - annotations, never asserted: `title`, `description`, `default`, `examples`, `format` (no format checker
     runs), `deprecated`, `readOnly`, `writeOnly`, `$comment`, and `$schema` at the root.
   Everything else is refused by name (`keyword_not_allowed`): `pattern` and `patternProperties` (Python's
   `re` backtracks; no regular expression runs on a user's text, as for binding schemas), `propertyNames`,
   `contains`, `prefixItems`, `not`, `if`/`then`/`else`, `dependent*`, `unevaluated*`, `$id`, `$anchor`,
   `$dynamicRef`, and any unknown key (a `$ref` could otherwise point into one, as `#/x-hidden/0` did).
   A `$ref` must be `#/$defs/<name>` or `#/definitions/<name>` naming an entry of the root (`ref_not_local`);
   the references must not form a cycle (`ref_cycle`: `{"allOf": [{"$ref": "#"}]}` used to recurse until
   Python gave up). Caps: depth MAX_SCHEMA_DEPTH with references followed (`schema_too_deep`),
   MAX_SCHEMA_NODES schema objects (`schema_too_large`), MAX_ENUM values in an `enum` (`enum_too_large`),
   and a fan-out of MAX_FANOUT (`schema_fanout`): the most schemas that can apply to one value of the
   arguments (combinators and references add to it), so the validation's work is at most MAX_FANOUT times the
   arguments' size, whatever the nesting.
2. The arguments, before any keyword runs (`limit_errors`): at most MAX_ARGUMENT_BYTES of JSON (the API's
   body cap), MAX_ARGUMENT_DEPTH deep, MAX_ARGUMENT_NODES values, MAX_ARRAY_ITEMS items in an array,
   MAX_OBJECT_PROPERTIES properties in an object and MAX_STRING_LENGTH characters in a string; each excess
   is a `validation_error` with keyword `limit` and `details.errors[].limit` naming which.
3. The validator: jsonschema-rs (Draft 2020-12, `offline`: no reference is retrieved; formats not asserted),
   compiled once per schema (an LRU of 32), its `uniqueItems` hashing the items (linear) where the pure-Python
   jsonschema compares every pair. Valid arguments cost one `is_valid`; invalid ones one evaluation (its
   `iter_errors` builds every branch's message and took seconds on a wide schema). `make bench` prints the
   worst case measured (scripts/bench_validation.py); the budget is 50 ms, and
   tests/unit/test_hosted_schema_bounds.py fails on any accepted schema that takes a second.

Errors name JSON paths (`$.tags[1]`, as jsonschema wrote them) and keywords, never values.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from skillcore.errors import FieldError
from skillcore.hosted.errors import SnapshotInvalid, SnapshotInvalidDetails

STRUCTURE = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "const",
                       "anyOf", "oneOf", "allOf", "$ref"})
BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
                    "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties"})
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "format", "deprecated", "readOnly",
                         "writeOnly", "$comment"})
ROOT_ONLY = frozenset({"$defs", "definitions", "$schema"})
ALLOWED = STRUCTURE | BOUNDS | ANNOTATIONS
COMBINATORS = ("anyOf", "oneOf", "allOf")
DEFS = ("$defs", "definitions")
LOCAL_REF = re.compile(r"#/(\$defs|definitions)/([A-Za-z0-9_.-]{1,128})")

MAX_SCHEMA_DEPTH = 32
MAX_SCHEMA_NODES = 1000
MAX_ENUM = 256
MAX_BRANCHES = 16
MAX_FANOUT = 8

MAX_ARGUMENT_BYTES = 64 * 1024
MAX_ARGUMENT_DEPTH = 32
MAX_ARGUMENT_NODES = 2048
MAX_ARRAY_ITEMS = 512
MAX_OBJECT_PROPERTIES = 256
MAX_STRING_LENGTH = 16 * 1024
MAX_VALIDATION_ERRORS = 20

# Refusals kept under the rule names they had before the allow-list.
_REFUSED_AS = {"pattern": "regex_keyword", "patternProperties": "regex_keyword", "$id": "remote_ref",
               "$dynamicRef": "remote_ref"}
_JSON_PATH_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*")


class SchemaRefused(Exception):
    """Why a schema is outside the bounds: a rule, the JSON Pointer inside the schema, and the keyword."""

    def __init__(self, rule: str, path: str = "", keyword: str | None = None) -> None:
        super().__init__(rule)
        self.rule, self.path, self.keyword = rule, path, keyword

    def details(self) -> SnapshotInvalidDetails:
        found = SnapshotInvalidDetails(rule=self.rule, path=self.path)
        if self.keyword is not None:
            found["keyword"] = self.keyword
        return found


def _pointer(parts: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class _Graph:
    """The schema's nodes, walked once: the allow-list, the references, the node count."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.nodes = 0

    def walk(self, node: Any, parts: tuple[str | int, ...], nesting: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_SCHEMA_NODES:
            raise SchemaRefused("schema_too_large", _pointer(parts))
        if nesting > MAX_SCHEMA_DEPTH:
            raise SchemaRefused("schema_too_deep", _pointer(parts))
        if isinstance(node, bool):
            return
        if not isinstance(node, dict):
            raise SchemaRefused("schema_not_object", _pointer(parts))
        for keyword, value in node.items():
            here = (*parts, keyword)
            if keyword in ROOT_ONLY and parts:
                raise SchemaRefused("keyword_not_allowed", _pointer(here), keyword)
            if keyword not in ALLOWED and keyword not in ROOT_ONLY:
                raise SchemaRefused(_REFUSED_AS.get(keyword, "keyword_not_allowed"), _pointer(here), keyword)
            if keyword in ("properties", *DEFS):
                if not isinstance(value, dict):
                    raise SchemaRefused("schema_invalid", _pointer(here), keyword)
                for name, sub in value.items():
                    self.walk(sub, (*here, name), nesting + 1)
            elif keyword in ("additionalProperties", "items"):
                self.walk(value, here, nesting + 1)
            elif keyword in COMBINATORS:
                if not isinstance(value, list) or not value:
                    raise SchemaRefused("schema_invalid", _pointer(here), keyword)
                if len(value) > MAX_BRANCHES:
                    raise SchemaRefused("too_many_branches", _pointer(here), keyword)
                for index, sub in enumerate(value):
                    self.walk(sub, (*here, index), nesting + 1)
            elif keyword == "$ref":
                self.target(value, here)
            elif keyword == "enum" and isinstance(value, list) and len(value) > MAX_ENUM:
                raise SchemaRefused("enum_too_large", _pointer(here), keyword)

    def target(self, ref: Any, parts: tuple[str | int, ...]) -> Any:
        match = LOCAL_REF.fullmatch(ref) if isinstance(ref, str) else None
        container = self.root.get(match.group(1)) if match else None
        if match is None or not isinstance(container, dict) or match.group(2) not in container:
            remote = not (isinstance(ref, str) and ref.startswith("#"))
            raise SchemaRefused("remote_ref" if remote else "ref_not_local", _pointer(parts), "$ref")
        return container[match.group(2)]


class _Cost:
    """Per schema, with references followed: (depth, R, K, W). R counts the schemas applied at the schema's
    own value (itself, its combinators' branches and its reference's target, recursively); K bounds those
    applied at any one value below it (each schema applied here reaches a value below through one child, so
    K sums, over them, their children's largest W); W = max(R, K), the most schemas applied at any one value.
    A reference met again while it is being followed is a cycle."""

    def __init__(self, graph: _Graph) -> None:
        self.graph = graph
        self.done: dict[int, tuple[int, int, int, int]] = {}
        self.open: set[int] = set()

    def of(self, node: Any, parts: tuple[str | int, ...]) -> tuple[int, int, int, int]:
        if not isinstance(node, dict):
            return 1, 1, 0, 1
        key = id(node)
        if key in self.done:
            return self.done[key]
        if key in self.open:
            raise SchemaRefused("ref_cycle", _pointer(parts), "$ref")
        if len(self.open) > MAX_SCHEMA_DEPTH:  # the path being followed is already too long: stop descending
            raise SchemaRefused("schema_too_deep", _pointer(parts))
        self.open.add(key)
        depth, applied, below = 1, 1, 0
        children: list[tuple[Any, tuple[str | int, ...]]] = [
            (node[k], (*parts, k)) for k in ("additionalProperties", "items") if k in node]
        children += [(sub, (*parts, "properties", name)) for name, sub in (node.get("properties") or {}).items()]
        for child, where in children:
            child_depth, _, _, child_w = self.of(child, where)
            depth = max(depth, child_depth + 1)
            below = max(below, child_w)
        same: list[tuple[Any, tuple[str | int, ...]]] = [
            (sub, (*parts, k, i)) for k in COMBINATORS for i, sub in enumerate(node.get(k, ()))]
        if "$ref" in node:
            same.append((self.graph.target(node["$ref"], (*parts, "$ref")), (*parts, "$ref")))
        for sub, where in same:
            sub_depth, sub_applied, sub_below, _ = self.of(sub, where)
            depth = max(depth, sub_depth + 1)
            applied += sub_applied
            below += sub_below
        self.open.discard(key)
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaRefused("schema_too_deep", _pointer(parts))
        if max(applied, below) > MAX_FANOUT:
            raise SchemaRefused("schema_fanout", _pointer(parts))
        self.done[key] = (depth, applied, below, max(applied, below))
        return self.done[key]


def check(schema: dict[str, Any]) -> None:
    """Raises SchemaRefused when `schema` is outside the allow-list or its caps."""
    graph = _Graph(schema)
    graph.walk(schema, (), 0)
    _Cost(graph).of(schema, ())


def fanout(schema: dict[str, Any]) -> int:
    """The most schemas that can apply to one value (after `check`)."""
    return _Cost(_Graph(schema)).of(schema, ())[3]


# ---------------------------------------------------------------- the arguments


def _json_path(parts: list[str | int]) -> str:
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _JSON_PATH_NAME.fullmatch(part):
            path += "." + part
        else:
            path += "['" + part.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return path


def limit_errors(arguments: Any) -> list[FieldError]:
    """The arguments' sizes against the caps, without recursion (a deep value cannot exhaust the stack)."""
    errors: list[FieldError] = []

    def over(parts: list[str | int], limit: str) -> None:
        errors.append(FieldError(path=_json_path(parts), keyword="limit", limit=limit))

    try:
        size = len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except (RecursionError, ValueError, TypeError):
        size = MAX_ARGUMENT_BYTES + 1
    if size > MAX_ARGUMENT_BYTES:
        over([], "bytes")
        return errors
    stack: list[tuple[Any, list[str | int]]] = [(arguments, [])]
    nodes = 0
    while stack and len(errors) < MAX_VALIDATION_ERRORS:
        value, parts = stack.pop()
        nodes += 1
        if nodes > MAX_ARGUMENT_NODES:
            over([], "nodes")
            break
        if len(parts) > MAX_ARGUMENT_DEPTH:
            over(parts, "depth")
            continue
        if isinstance(value, str) and len(value) > MAX_STRING_LENGTH:
            over(parts, "length")
        elif isinstance(value, list):
            if len(value) > MAX_ARRAY_ITEMS:
                over(parts, "items")
                continue
            stack.extend((item, [*parts, index]) for index, item in enumerate(value))
        elif isinstance(value, dict):
            if len(value) > MAX_OBJECT_PROPERTIES:
                over(parts, "properties")
                continue
            stack.extend((item, [*parts, name]) for name, item in value.items())
    return sorted(errors, key=lambda e: (e["path"], e["limit"]))


@functools.lru_cache(maxsize=32)
def _compiled(canonical: str) -> Any:
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(json.loads(canonical), validate_formats=False, offline=True)


def validator_of(schema: dict[str, Any]) -> Any:
    """The compiled validator of a checked schema, kept for the next call of the same tool (32 at most)."""
    return _compiled(json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def _keyword(location: str) -> str:
    """The keyword an error names: the first `anyOf` / `oneOf` it failed under (a branch's own failure is not
    the call's), else the keyword that failed."""
    segments = [s.replace("~1", "/").replace("~0", "~") for s in location.split("/")[1:]]
    for index, segment in enumerate(segments):
        if segment in ("anyOf", "oneOf") and (index == 0 or segments[index - 1] not in ("properties", *DEFS)):
            return segment
    return segments[-1] if segments else "false"


def _segments(location: str) -> list[str]:
    return [s.replace("~1", "/").replace("~0", "~") for s in location.split("/")[1:]]


def _at(document: Any, segments: list[str]) -> Any:
    for segment in segments:
        if isinstance(document, list) and segment.isdigit() and int(segment) < len(document):
            document = document[int(segment)]
        elif isinstance(document, dict) and segment in document:
            document = document[segment]
        else:
            return None
    return document


def _instance_path(location: str) -> str:
    return _json_path([int(s) if s.isdigit() else s for s in _segments(location)])


def _keywords(schema: dict[str, Any], arguments: Any, error: dict[str, Any]) -> list[str]:
    """The keyword(s) an evaluation error stands for. jsonschema-rs fuses `properties`, `required` and
    `additionalProperties: false` into one check reported at `/additionalProperties`, whether a property is
    missing or one is extra: which of the two failed is read from the value itself."""
    location = error["schemaLocation"]
    keyword = _keyword(location)
    if keyword != "additionalProperties":
        return [keyword]
    node = _at(schema, _segments(location)[:-1])
    value = _at(arguments, _segments(error["instanceLocation"]))
    if not isinstance(node, dict) or node.get("additionalProperties") is not False or not isinstance(value, dict):
        return [keyword]
    found = []
    if any(name not in value for name in node.get("required") or ()):
        found.append("required")
    if any(name not in (node.get("properties") or {}) for name in value):
        found.append("additionalProperties")
    return found or [keyword]


def validation_errors(schema: dict[str, Any], arguments: Any) -> list[FieldError]:
    """The arguments' sizes first, then the schema's keywords: `[{"path", "keyword"}]`, at most
    MAX_VALIDATION_ERRORS, never a value. `schema` must have passed `check`. Valid arguments cost one
    `is_valid`; only invalid ones are evaluated for their errors (jsonschema-rs's iter_errors builds every
    branch's message and took seconds on a wide schema; its evaluation does not)."""
    over = limit_errors(arguments)
    if over:
        return over[:MAX_VALIDATION_ERRORS]
    validator = validator_of(schema)
    if validator.is_valid(arguments):
        return []
    found = {(_instance_path(e["instanceLocation"]), keyword)
             for e in validator.evaluate(arguments).errors() for keyword in _keywords(schema, arguments, e)}
    errors = [FieldError(path=path, keyword=keyword) for path, keyword in sorted(found)][:MAX_VALIDATION_ERRORS]
    return errors or [FieldError(path="$", keyword="false")]


def schema_refused(error: SchemaRefused, tool: str | None) -> SnapshotInvalid:
    """The API's refusal of a schema outside the bounds (422 `snapshot_invalid`, with rule, path, keyword)."""
    details = error.details()
    if tool is not None:
        details["tool"] = tool
    return SnapshotInvalid(f"the endpoint's tool list is not acceptable: {error.rule}", details)
