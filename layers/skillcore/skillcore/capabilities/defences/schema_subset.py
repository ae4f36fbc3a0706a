"""Defence 3: a binding's `inputSchema` is a small JSON Schema draft-07 subset (docs/contract.md, "User-defined capabilities").

Allowed keywords only: `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`,
the numeric bounds (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`), the length bounds
(`minLength`, `maxLength`, `minItems`, `maxItems`), and the annotations `title`, `description`, `default`,
`examples`. Everything else is refused by name, `$ref`, `$schema`, `$id`, `definitions`, `anyOf`, `allOf`,
`oneOf`, `not`, `if`/`then`/`else`, `pattern`, `format`, `patternProperties`, `dependencies`,
`propertyNames`, `contains`, tuple `items` and every keyword not listed. The root is an object schema
(`"type": "object"`); nesting depth ≤ 6 (the root is depth 1), ≤ 200 schema nodes, ≤ 16 KiB serialised.
Errors: `[{"path", "keyword"}]` where `path` is the JSON Pointer of the offending keyword inside the schema
(`/properties/a/pattern`), answered 422 `schema_not_allowed`.

Two checks, both needed: our own walk (the subset and the limits; the meta-schema allows far more) and then
`jsonschema`'s `Draft7Validator.check_schema` (the allowed keywords' values are well formed: a `type` that
names a type, a `required` that lists strings, ...). The walk runs first, so the library never sees a `$ref`.

No reference is ever resolved, let alone fetched: the walk refuses `$ref`, and every validator built here is
given an empty `referencing.Registry()`, so even a `$ref` that got past would be unresolvable instead of a
network request (jsonschema otherwise still retrieves remote references, with a deprecation warning).
`jsonschema` costs ~100 ms to import, so it is imported inside the functions that need it and never during a
function's cold start.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

SUBSCHEMA_KEYWORDS = frozenset({"properties", "additionalProperties", "items"})
VALUE_KEYWORDS = frozenset({
    "type", "required", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "title", "description", "default", "examples",
})
ALLOWED = SUBSCHEMA_KEYWORDS | VALUE_KEYWORDS
MAX_DEPTH = 6
MAX_NODES = 200
MAX_BYTES = 16 * 1024

ROOT_NOT_OBJECT = "type"  # the keyword an error names when the root is not an object schema
DEPTH = "maxDepth"
NODES = "maxNodes"
SIZE = "maxBytes"


def pointer(parts: list[str | int]) -> str:
    """RFC 6901: `~` is `~0`, `/` is `~1`; the root is ``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def serialised_size(schema: Any) -> int:
    return len(json.dumps(schema, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


class _Walk:
    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []
        self.nodes = 0
        self.too_deep = False

    def error(self, parts: list[str | int], keyword: str) -> None:
        self.errors.append({"path": pointer(parts), "keyword": keyword})

    def schema(self, node: Any, parts: list[str | int], depth: int) -> None:
        self.nodes += 1
        if depth > MAX_DEPTH:
            if not self.too_deep:
                self.error(parts, DEPTH)
                self.too_deep = True
            return
        if isinstance(node, bool):
            return  # `true` / `false` are schemas in draft-07 (anything / nothing)
        if not isinstance(node, dict):
            return  # not a schema at all: check_schema names it
        for keyword, value in node.items():
            if keyword not in ALLOWED:
                self.error([*parts, keyword], keyword)
            elif keyword == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    self.schema(sub, [*parts, keyword, name], depth + 1)
            elif keyword == "items":
                if isinstance(value, list):
                    self.error([*parts, keyword], keyword)  # tuple validation is outside the subset
                else:
                    self.schema(value, [*parts, keyword], depth + 1)
            elif keyword == "additionalProperties" and isinstance(value, dict):
                self.schema(value, [*parts, keyword], depth + 1)


def check(schema: Any) -> list[dict[str, str]]:
    """`[{"path", "keyword"}]`, empty when `schema` is inside the subset and its limits."""
    if serialised_size(schema) > MAX_BYTES:
        return [{"path": "", "keyword": SIZE}]
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [{"path": "/type", "keyword": ROOT_NOT_OBJECT}]
    walk = _Walk()
    walk.schema(schema, [], 1)
    if walk.nodes > MAX_NODES:
        walk.errors.append({"path": "", "keyword": NODES})
    if walk.errors:
        return walk.errors
    return _meta_errors(schema)


def _meta_errors(schema: dict[str, Any]) -> list[dict[str, str]]:
    """The draft-07 meta-schema's verdict (jsonschema's check_schema), as pointer and keyword."""
    from jsonschema import Draft7Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft7Validator.check_schema(schema)
    except SchemaError as error:
        parts = list(error.absolute_path)
        keyword = next((str(p) for p in reversed(parts) if isinstance(p, str) and p in ALLOWED), str(error.validator))
        return [{"path": pointer(parts), "keyword": keyword}]
    return []


def validator(schema: dict[str, Any]) -> Validator:
    """A draft-07 validator of inputs against a checked schema, with an empty registry: no reference is
    resolved from anywhere, least of all the network."""
    from jsonschema import Draft7Validator
    from referencing import Registry

    return Draft7Validator(schema, registry=Registry())


ANNOTATIONS = ("title", "description", "default", "examples")


def _strings(value: Any, parts: list[str | int]) -> list[tuple[str, str]]:
    """(pointer, text) of every string inside a JSON value (an enum's values, a default's nested strings)."""
    if isinstance(value, str):
        return [(pointer(parts), value)]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in _strings(item, [*parts, i])]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _strings(item, [*parts, key])]
    return []


def _subschemas(node: dict[str, Any], parts: list[str | int]) -> list[tuple[Any, list[str | int]]]:
    """The schemas a node holds, by position (a property *named* `description` is a schema, not a text)."""
    found: list[tuple[Any, list[str | int]]] = []
    if isinstance(node.get("properties"), dict):
        found += [(sub, [*parts, "properties", name]) for name, sub in node["properties"].items()]
    for keyword in ("items", "additionalProperties"):
        if isinstance(node.get(keyword), dict):
            found.append((node[keyword], [*parts, keyword]))
    return found


def texts(schema: Any, parts: list[str | int] | None = None) -> list[tuple[str, str]]:
    """(JSON Pointer inside the schema, text) of every free text a schema carries: its annotations (`title`,
    `description`, and the strings of `default` and `examples`) and the strings of `enum` and `const`, which
    stay in the protocol's JSON as part of a call's validity. The text filter reads them all."""
    parts = parts or []
    if not isinstance(schema, dict):
        return []
    found: list[tuple[str, str]] = []
    for keyword in (*ANNOTATIONS, "enum", "const"):
        if keyword in schema:
            found += _strings(schema[keyword], [*parts, keyword])
    for sub, where in _subschemas(schema, parts):
        found += texts(sub, where)
    return found


def structure(schema: Any) -> Any:
    """The schema without its annotation texts (`title`, `description`, `default`, `examples`): types,
    properties, required, bounds, enum and const stay. What a host reads as JSON beside the quoted protocol."""
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in ANNOTATIONS:
            continue
        if keyword == "properties" and isinstance(value, dict):
            kept[keyword] = {name: structure(sub) for name, sub in value.items()}
        elif keyword in ("items", "additionalProperties") and isinstance(value, dict):
            kept[keyword] = structure(value)
        else:
            kept[keyword] = value
    return kept
