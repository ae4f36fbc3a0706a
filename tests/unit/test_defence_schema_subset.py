"""Defence 3, the draft-07 subset of binding input schemas: allowed keywords only, an object root, the size
limits, JSON Pointer paths, the meta-schema through jsonschema, and never a remote reference fetched."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from skillcore.capabilities.defences import schema_subset as ss

GOOD: dict[str, Any] = {
    "type": "object",
    "title": "Append a note",
    "description": "What to write",
    "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "the note"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["work", "home"]}, "maxItems": 5, "minItems": 0},
        "priority": {"type": "integer", "minimum": 1, "maximum": 5, "default": 3, "examples": [1, 5]},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "kind": {"const": "note"},
        "meta": {"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "additionalProperties": False},
        "anything": True,
    },
    "required": ["text"],
    "additionalProperties": False,
}


def test_a_schema_inside_the_subset_passes() -> None:
    assert ss.check(GOOD) == []


def test_additional_properties_may_be_a_schema() -> None:
    assert ss.check({"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}) == []


@pytest.mark.parametrize("keyword", [
    "$ref", "anyOf", "allOf", "oneOf", "not", "if", "then", "else", "pattern", "format", "patternProperties",
    "dependencies", "propertyNames", "contains", "definitions", "$id", "$schema", "$comment", "uniqueItems",
    "multipleOf", "minProperties", "maxProperties", "contentMediaType", "contentEncoding", "readOnly", "x-anything",
])
def test_every_keyword_outside_the_subset_is_refused_with_its_pointer(keyword: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", keyword: {}}}}
    assert ss.check(schema) == [{"path": f"/properties/a/{keyword.replace('/', '~1')}", "keyword": keyword}]


def test_the_spec_example_pointer() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x$"}}}
    assert ss.check(schema) == [{"path": "/properties/a/pattern", "keyword": "pattern"}]


def test_a_refused_keyword_at_the_root_and_deep_in_items() -> None:
    schema = {"type": "object", "anyOf": [], "properties": {"l": {"type": "array", "items": {"type": "object",
              "properties": {"x": {"format": "email"}}}}}}
    assert ss.check(schema) == [{"path": "/anyOf", "keyword": "anyOf"},
                                {"path": "/properties/l/items/properties/x/format", "keyword": "format"}]


def test_pointer_escapes_property_names() -> None:
    schema = {"type": "object", "properties": {"a/b": {"pattern": "x"}, "c~d": {"format": "x"}}}
    assert ss.check(schema) == [{"path": "/properties/a~1b/pattern", "keyword": "pattern"},
                                {"path": "/properties/c~0d/format", "keyword": "format"}]


def test_tuple_items_are_refused() -> None:
    schema = {"type": "object", "properties": {"t": {"type": "array", "items": [{"type": "string"}]}}}
    assert ss.check(schema) == [{"path": "/properties/t/items", "keyword": "items"}]


@pytest.mark.parametrize("schema", [{"type": "string"}, {"type": ["object"]}, {"properties": {}}, [], "object", True, 1])
def test_the_root_must_be_an_object_schema(schema: Any) -> None:
    assert ss.check(schema) == [{"path": "/type", "keyword": "type"}]


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(depth - 1):
        schema = {"type": "object", "properties": {"n": schema}}
    return schema


def test_depth_six_passes_and_seven_is_refused() -> None:
    assert ss.check(nested(6)) == []
    errors = ss.check(nested(7))
    assert errors == [{"path": "/properties/n/properties/n/properties/n/properties/n/properties/n/properties/n",
                       "keyword": ss.DEPTH}]


def test_depth_counts_items_and_additional_properties() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for i in range(6):
        schema = {"type": "array", "items": schema} if i % 2 else {"type": "object", "additionalProperties": schema}
    schema = {"type": "object", "properties": {"x": schema}}
    assert ss.check(schema)[0]["keyword"] == ss.DEPTH


def test_two_hundred_nodes_pass_and_two_hundred_and_one_are_refused() -> None:
    wide = {"type": "object", "properties": {f"p{i}": {} for i in range(199)}}
    assert ss.check(wide) == []
    wider = {"type": "object", "properties": {f"p{i}": {} for i in range(200)}}
    assert ss.check(wider) == [{"path": "", "keyword": ss.NODES}]


def test_sixteen_kib_serialised() -> None:
    base = {"type": "object", "description": ""}
    room = ss.MAX_BYTES - ss.serialised_size(base)
    assert ss.check({**base, "description": "x" * room}) == []
    assert ss.check({**base, "description": "x" * (room + 1)}) == [{"path": "", "keyword": ss.SIZE}]
    # counted in UTF-8 bytes: 3 per CJK character
    assert ss.check({**base, "description": "说" * (room // 3 + 1)}) == [{"path": "", "keyword": ss.SIZE}]


@pytest.mark.parametrize(("schema", "path", "keyword"), [
    ({"type": "object", "properties": {"a": {"type": "strin"}}}, "/properties/a/type", "type"),
    ({"type": "object", "required": "a"}, "/required", "required"),
    ({"type": "object", "required": ["a", "a"]}, "/required", "required"),
    ({"type": "object", "properties": {"a": {"minLength": -1}}}, "/properties/a/minLength", "minLength"),
    ({"type": "object", "properties": {"a": {"maximum": "5"}}}, "/properties/a/maximum", "maximum"),
    ({"type": "object", "properties": {"a": {"enum": "x"}}}, "/properties/a/enum", "enum"),
    ({"type": "object", "properties": {"a": 5}}, "/properties/a", "properties"),
    ({"type": "object", "properties": []}, "/properties", "properties"),
    ({"type": "object", "additionalProperties": "no"}, "/additionalProperties", "additionalProperties"),
])
def test_the_meta_schema_checks_the_allowed_keywords_values(schema: dict[str, Any], path: str, keyword: str) -> None:
    assert ss.check(schema) == [{"path": path, "keyword": keyword}]


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    attempts: list[tuple[Any, ...]] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise AssertionError(f"a network call was made: {args!r}")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


def test_a_remote_ref_is_refused_and_never_fetched(no_network: list[Any]) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.invalid/x"}}}
    assert ss.check(schema) == [{"path": "/properties/a/$ref", "keyword": "$ref"}]
    root = {"$ref": "https://example.invalid/x", "type": "object"}
    assert ss.check(root) == [{"path": "/$ref", "keyword": "$ref"}]
    assert no_network == []


def test_a_validator_built_here_resolves_nothing_even_given_a_remote_ref(no_network: list[Any]) -> None:
    from referencing.exceptions import Unresolvable

    validator = ss.validator({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/x"}}})
    with pytest.raises(Unresolvable):
        validator.validate({"a": 1})
    assert no_network == []


def test_a_checked_schema_validates_inputs() -> None:
    validator = ss.validator(GOOD)
    assert validator.is_valid({"text": "hi", "priority": 2})
    assert not validator.is_valid({"priority": 2})
    assert not validator.is_valid({"text": "hi", "extra": 1})


def test_the_good_schema_round_trips_as_json() -> None:
    assert ss.check(json.loads(json.dumps(GOOD))) == []


def test_texts_and_structure_read_annotations_by_position() -> None:
    from skillcore.capabilities.defences.schema_subset import structure, texts

    schema = {"type": "object", "title": "T", "description": "D",
              "properties": {"description": {"type": "string", "default": "x", "examples": [{"k": "e"}]},
                             "tags": {"type": "array", "items": {"enum": ["a", 1], "title": "I"}},
                             "c": {"const": "k"}},
              "additionalProperties": {"description": "more"}}
    assert texts(schema) == [
        ("/title", "T"), ("/description", "D"), ("/properties/description/default", "x"),
        ("/properties/description/examples/0/k", "e"), ("/properties/tags/items/title", "I"),
        ("/properties/tags/items/enum/0", "a"), ("/properties/c/const", "k"), ("/additionalProperties/description", "more")]
    assert structure(schema) == {"type": "object", "properties": {
        "description": {"type": "string"}, "tags": {"type": "array", "items": {"enum": ["a", 1]}}, "c": {"const": "k"}},
        "additionalProperties": {}}
