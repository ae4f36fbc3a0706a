"""Bounded validation of hosted call arguments (hosted/schema_bounds.py): the snapshot's allow-list and caps, the
arguments' caps, and the time any accepted schema may take (under 1 s, whatever hypothesis finds; `make bench`
prints the worst case against its 50 ms budget)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scripts import bench_validation
from skillcore.errors import RuleViolation
from skillcore.hosted import schema_bounds, snapshot
from skillcore.hosted.call_refusals import argument_errors

NOW = datetime(2026, 12, 4, tzinfo=UTC)


def refusal(schema: Any) -> dict[str, Any]:
    with pytest.raises(RuleViolation) as refused:
        snapshot.take([{"name": "t", "description": "", "inputSchema": schema}], NOW)
    assert refused.value.code == "snapshot_invalid"
    return dict(refused.value.details)


# ---------------------------------------------------------------- the issue's cases


def test_a_ref_into_a_place_that_is_no_schema_keyword_is_refused() -> None:
    hidden = {"type": "object", "properties": {"q": {"$ref": "#/x-hidden/0"}},
              "x-hidden": [{"type": "string", "pattern": "^(a+)+$"}]}
    details = refusal(hidden)
    assert details["rule"] in ("ref_not_local", "keyword_not_allowed") and details["tool"] == "t"
    assert details["path"] in ("/properties/q/$ref", "/x-hidden")


def test_a_self_reference_is_refused_before_any_call_can_recurse() -> None:
    assert refusal({"type": "object", "allOf": [{"$ref": "#"}]})["rule"] == "ref_not_local"
    cycle = {"type": "object", "$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"items": {"$ref": "#/$defs/a"}}},
             "properties": {"x": {"$ref": "#/$defs/a"}}}
    assert refusal(cycle)["rule"] == "ref_cycle"


def test_unique_items_on_a_large_array_is_stopped_by_the_items_cap_and_linear_below_it() -> None:
    schema = {"type": "object", "properties": {"rows": {"type": "array", "uniqueItems": True}}}
    snapshot.check_schema(schema, "t")
    big = {"rows": [{"id": i} for i in range(4000)]}  # 4,000 small objects, as in the issue
    started = time.perf_counter()
    assert schema_bounds.validation_errors(schema, big) == [{"path": "$.rows", "keyword": "limit", "limit": "items"}]
    allowed = {"rows": [{"id": i} for i in range(schema_bounds.MAX_ARRAY_ITEMS)]}
    assert schema_bounds.validation_errors(schema, allowed) == []
    duplicated = {"rows": [{"id": 1}] * schema_bounds.MAX_ARRAY_ITEMS}
    assert schema_bounds.validation_errors(schema, duplicated) == [{"path": "$.rows", "keyword": "uniqueItems"}]
    assert time.perf_counter() - started < 1.0


# ---------------------------------------------------------------- the allow-list and the caps


@pytest.mark.parametrize(("schema", "rule", "keyword"), [
    ({"type": "object", "properties": {"x": {"type": "string", "pattern": "a"}}}, "regex_keyword", "pattern"),
    ({"type": "object", "patternProperties": {"^a": {}}}, "regex_keyword", "patternProperties"),
    ({"type": "object", "$id": "https://evil.test/root"}, "remote_ref", "$id"),
    ({"type": "object", "properties": {"x": {"$ref": "https://evil.test/s.json"}}}, "remote_ref", "$ref"),
    ({"type": "object", "properties": {"x": {"$ref": "#/properties/y"}, "y": {}}}, "ref_not_local", "$ref"),
    ({"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}, "$defs": {}}, "ref_not_local", "$ref"),
    ({"type": "object", "properties": {"x": {"$defs": {"a": {}}}}}, "keyword_not_allowed", "$defs"),
    ({"type": "object", "propertyNames": {"maxLength": 3}}, "keyword_not_allowed", "propertyNames"),
    ({"type": "object", "properties": {"x": {"not": {}}}}, "keyword_not_allowed", "not"),
    ({"type": "object", "if": {}, "then": {}}, "keyword_not_allowed", "if"),
    ({"type": "object", "x-order": 1}, "keyword_not_allowed", "x-order"),
    ({"type": "object", "properties": {"x": {"contains": {}}}}, "keyword_not_allowed", "contains"),
    ({"type": "object", "properties": {"x": {"enum": list(range(schema_bounds.MAX_ENUM + 1))}}}, "enum_too_large",
     "enum"),
    ({"type": "object", "anyOf": [{}] * (schema_bounds.MAX_BRANCHES + 1)}, "too_many_branches", "anyOf"),
])
def test_keywords_outside_the_allow_list_are_refused_with_their_path(schema: dict[str, Any], rule: str,
                                                                    keyword: str) -> None:
    details = refusal(schema)
    assert (details["rule"], details.get("keyword")) == (rule, keyword)
    assert details["path"].startswith("/")


def test_depth_size_and_fanout_are_capped() -> None:
    deep: dict[str, Any] = {}
    for _ in range(schema_bounds.MAX_SCHEMA_DEPTH + 1):
        deep = {"items": deep}
    assert refusal({"type": "object", "properties": {"x": deep}})["rule"] == "schema_too_deep"
    chain = {f"d{i}": {"items": {"$ref": f"#/$defs/d{i + 1}"}} for i in range(20)} | {"d20": {}}
    assert refusal({"type": "object", "$defs": chain, "properties": {"x": {"$ref": "#/$defs/d0"}}})["rule"] == \
        "schema_too_deep"
    many = {f"p{i}": {"type": "string"} for i in range(schema_bounds.MAX_SCHEMA_NODES)}
    assert refusal({"type": "object", "properties": many})["rule"] == "schema_too_large"
    # nested anyOf multiplies the schemas applied to one value: 3 x 3 = 9 > MAX_FANOUT
    inner = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "null"}]}
    nested = {"type": "object", "properties": {"x": {"anyOf": [inner, inner, inner]}}}
    assert refusal(nested)["rule"] == "schema_fanout"


def test_what_mcp_servers_commonly_emit_is_accepted() -> None:
    pydantic = {"type": "object", "title": "Args", "$defs": {"Item": {"type": "object", "title": "Item", "properties": {
        "sku": {"type": "string", "title": "Sku", "maxLength": 32}, "qty": {"type": "integer", "minimum": 1}},
        "required": ["sku"]}},
        "properties": {"note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Note"},
                       "item": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]},
                       "when": {"type": "string", "format": "date-time"}},
        "required": ["item"]}
    zod = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False,
           "properties": {"query": {"type": "string", "description": "what to look for"},
                          "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]},
                                   "uniqueItems": True, "maxItems": 5}},
           "required": ["query"]}
    dify = {"type": "object", "properties": {"input": {"type": "string", "description": "the question"}},
            "required": ["input"]}
    for schema in (pydantic, zod, dify):
        assert snapshot.check_schema(schema, "t") is schema
    assert argument_errors(pydantic, {"item": {"sku": "x" * 40}, "note": 3}) == [
        {"path": "$.item", "keyword": "anyOf"}, {"path": "$.item.sku", "keyword": "maxLength"},
        {"path": "$.note", "keyword": "anyOf"}]
    assert argument_errors(zod, {"query": "q", "tags": ["a", "a"], "extra": 1}) == [
        {"path": "$", "keyword": "additionalProperties"}, {"path": "$.tags", "keyword": "uniqueItems"}]


def test_a_schema_pinned_under_older_rules_is_refused_at_call_time_not_run() -> None:
    pinned = {"type": "object", "properties": {"q": {"$ref": "#/x-hidden/0"}},
              "x-hidden": [{"type": "string", "pattern": "^(a+)+$"}]}
    with pytest.raises(RuleViolation) as refused:
        argument_errors(pinned, {"q": "a" * 24 + "!"})
    assert refused.value.code == "snapshot_invalid"


# ---------------------------------------------------------------- the arguments' caps


@pytest.mark.parametrize(("arguments", "path", "limit"), [
    ({"s": "x" * (schema_bounds.MAX_STRING_LENGTH + 1)}, "$.s", "length"),
    ({"o": {f"k{i}": 0 for i in range(schema_bounds.MAX_OBJECT_PROPERTIES + 1)}}, "$.o", "properties"),
    ({"a": [0] * (schema_bounds.MAX_ARRAY_ITEMS + 1)}, "$.a", "items"),
    ({"a": [[0] * 500 for _ in range(5)]}, "$", "nodes"),
    ({"s": ["汉" * 16000] * 2}, "$", "bytes"),
])
def test_arguments_over_a_cap_are_refused_before_any_keyword_runs(arguments: Any, path: str, limit: str) -> None:
    errors = schema_bounds.validation_errors({"type": "object"}, arguments)
    assert {"path": path, "keyword": "limit", "limit": limit} in errors


def test_a_deep_value_is_refused_without_recursion() -> None:
    deep: Any = 0
    for _ in range(100_000):
        deep = [deep]
    errors = schema_bounds.validation_errors({"type": "object"}, {"d": deep})
    assert [e["limit"] for e in errors] == ["bytes"] or any(e["limit"] == "depth" for e in errors)
    shallow: Any = 0
    for _ in range(schema_bounds.MAX_ARGUMENT_DEPTH + 2):
        shallow = [shallow]
    assert any(e["limit"] == "depth" for e in schema_bounds.validation_errors({"type": "object"}, {"d": shallow}))


def test_errors_name_paths_and_keywords_never_values() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3},
                                               "odd key": {"enum": ["a"]}}, "required": ["id"]}
    errors = schema_bounds.validation_errors(schema, {"name": "secret-value", "odd key": "secret-two"})
    assert errors == [{"path": "$", "keyword": "required"}, {"path": "$.name", "keyword": "maxLength"},
                      {"path": "$['odd key']", "keyword": "enum"}]
    assert "secret" not in json.dumps(errors)


# ---------------------------------------------------------------- time: the bench's worst cases, and hypothesis


@pytest.mark.parametrize("case", bench_validation.cases(), ids=lambda c: f"{c[0]} / {c[1]}")
def test_the_benchs_worst_cases_are_accepted_and_take_under_a_second(case: tuple[str, str, Any, Any]) -> None:
    _, _, schema, arguments = case
    snapshot.check_schema(schema, "t")
    assert bench_validation.measure(schema, arguments, runs=1) < 1.0


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False),
                    st.text(max_size=4))
KEYWORD_VALUES: dict[str, Any] = {
    "type": st.sampled_from(["string", "number", "integer", "boolean", "null", "array", "object",
                             ["string", "null"], ["array", "object"]]),
    "enum": st.lists(SCALARS, min_size=1, max_size=5),
    "const": SCALARS,
    "minimum": st.integers(-3, 3), "maximum": st.integers(-3, 3), "exclusiveMinimum": st.integers(-3, 3),
    "exclusiveMaximum": st.integers(-3, 3), "multipleOf": st.sampled_from([1, 2, 0.5]),
    "minLength": st.integers(0, 3), "maxLength": st.integers(0, 3), "minItems": st.integers(0, 3),
    "maxItems": st.integers(0, 3), "uniqueItems": st.booleans(), "minProperties": st.integers(0, 2),
    "maxProperties": st.integers(0, 2), "title": st.text(max_size=3), "format": st.just("date-time"),
}


def _leaf() -> st.SearchStrategy[Any]:
    return st.one_of(st.booleans(), st.fixed_dictionaries({}, optional={k: v for k, v in KEYWORD_VALUES.items()}))


def _schema(defs: list[str]) -> st.SearchStrategy[Any]:
    refs = [st.just({"$ref": f"#/$defs/{name}"}) for name in defs]

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.fixed_dictionaries({"type": st.just("object")}, optional={
                "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
                "additionalProperties": inner, "required": st.lists(st.sampled_from(["a", "b"]), unique=True)}),
            st.fixed_dictionaries({"type": st.just("array")}, optional={"items": inner, "uniqueItems": st.booleans(),
                                                                        "maxItems": st.integers(0, 4)}),
            st.fixed_dictionaries({st.sampled_from(["anyOf", "oneOf", "allOf"]): st.lists(inner, min_size=1,
                                                                                            max_size=4)}),
        )

    return st.recursive(st.one_of(_leaf(), *refs), extend, max_leaves=12)


@st.composite
def accepted_schemas(draw: st.DrawFn) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for index in range(draw(st.integers(0, 3))):
        defs[f"d{index}"] = draw(_schema([f"d{j}" for j in range(index)]))  # acyclic: a def refers back only
    root = draw(_schema(list(defs)))
    schema = {"type": "object", "properties": {"x": root, "y": draw(_schema(list(defs)))}}
    if defs:
        schema["$defs"] = defs
    try:
        snapshot.check_schema(schema, "t")
    except RuleViolation:
        from hypothesis import reject

        reject()
    return schema


JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=6),
                                                     st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner,
                                                                     max_size=4)), max_leaves=40)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(schema=accepted_schemas(), arguments=st.fixed_dictionaries({}, optional={"x": JSON, "y": JSON}))
def test_any_accepted_schema_validates_quickly_and_agrees_with_the_reference_validator(
        schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator
    from referencing import Registry

    started = time.perf_counter()
    errors = schema_bounds.validation_errors(schema, arguments)
    assert time.perf_counter() - started < 1.0
    expected_valid = Draft202012Validator(schema, registry=Registry()).is_valid(arguments)
    assert (errors == []) == expected_valid, errors


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(schema=accepted_schemas(), width=st.integers(1, schema_bounds.MAX_ARRAY_ITEMS),
       seed=st.integers(0, 3))
def test_any_accepted_schema_takes_under_a_second_on_arguments_at_the_caps(schema: dict[str, Any], width: int,
                                                                          seed: int) -> None:
    row: Any = [{"a": [seed, "s"], "b": {"c": None}}, [seed] * 3, "x" * 40, {"a": {"a": {"a": [1, 2]}}}][seed]
    arguments = {"x": [row] * width, "y": {"a": [row, [row]], "b": row}}
    while schema_bounds.limit_errors(arguments) and width > 1:
        width //= 2
        arguments = {"x": [row] * width, "y": {"a": [row, [row]], "b": row}}
    started = time.perf_counter()
    schema_bounds.validation_errors(schema, arguments)
    assert time.perf_counter() - started < 1.0


def test_a_long_chain_of_references_is_refused_without_exhausting_the_stack() -> None:
    chain = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(900)} | {"d900": {"type": "string"}}
    assert refusal({"type": "object", "$defs": chain, "properties": {"x": {"$ref": "#/$defs/d0"}}})["rule"] == \
        "schema_too_deep"


def test_a_missing_and_an_extra_property_are_told_apart_under_additional_properties_false() -> None:
    schema = {"type": "object", "properties": {"t": {"type": "string"}, "o": {"type": "object", "properties": {},
                                                                              "required": ["k"],
                                                                              "additionalProperties": False}},
              "required": ["t"], "additionalProperties": False}
    assert schema_bounds.validation_errors(schema, {}) == [{"path": "$", "keyword": "required"}]
    assert schema_bounds.validation_errors(schema, {"t": "x", "x": 1}) == [
        {"path": "$", "keyword": "additionalProperties"}]
    assert schema_bounds.validation_errors(schema, {"x": 1, "o": {"z": 1}}) == [
        {"path": "$", "keyword": "additionalProperties"}, {"path": "$", "keyword": "required"},
        {"path": "$.o", "keyword": "additionalProperties"}, {"path": "$.o", "keyword": "required"}]
