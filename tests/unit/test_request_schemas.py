"""What the document says about request fields is what the server checks: the not-blank rule, written as a JSON
Schema pattern for schemathesis and for clients, accepts exactly the strings `not_blank` accepts."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from skillcore.shapes import NOT_BLANK, not_blank
from skillcore_local.openapi import all_routes

PATTERN = re.compile(NOT_BLANK["pattern"])


def blank(value: str) -> bool:
    try:
        not_blank(value)
    except ValueError:
        return True
    return False


def test_the_pattern_is_not_blank_for_every_character() -> None:
    mismatched = [hex(c) for c in range(sys.maxunicode + 1) if (PATTERN.search(chr(c)) is None) != blank(chr(c))]
    assert mismatched == []


@given(st.text(alphabet=st.sampled_from(" \t\n\x1c\x85\u3000\ufeffa"), max_size=8))
def test_the_pattern_is_not_blank_for_strings(value: str) -> None:
    assert (PATTERN.search(value) is None) == blank(value)


def body_models() -> list[type]:
    seen: dict[str, type] = {}
    for route in all_routes():
        if (body := route.body_model()) is not None:
            seen[body.__name__] = body
    return list(seen.values())


@pytest.mark.parametrize("model", body_models(), ids=lambda m: m.__name__)
def test_a_field_says_it_must_not_be_blank_exactly_when_the_server_refuses_blank(model: type) -> None:
    """Each top-level text field of each body, sent blank: refused as blank by the server iff its schema says so
    (the other fields' errors are ignored; the rule is checked field by field)."""
    schema = model.model_json_schema(by_alias=True)  # type: ignore[attr-defined]
    for name, prop in schema["properties"].items():
        try:
            model.model_validate({name: "  "})  # type: ignore[attr-defined]
            refused = False
        except ValidationError as error:
            refused = any(e["loc"] == (name,) and "blank" in e["msg"] for e in error.errors())
        assert (prop.get("pattern") == NOT_BLANK["pattern"]) == refused, (model.__name__, name)
