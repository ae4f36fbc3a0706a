"""Hostile input at the API edge, against the real route tables of both functions: whatever the body or the
query holds, the answer is a documented 4xx in the envelope, never a 500, and no handler runs.

The routes are registered without collaborators (as the OpenAPI generator does): a request that got past the
router's parsing would reach a handler and fail on them, so a 500 here also means "parsing let it through".
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillcore.api.app import Route, Routes
from skillcore_local.openapi import function_routes

TABLES = function_routes()
TABLE_OF: dict[str, Routes] = {r.operation_id: rs for rs in TABLES.values() for r in rs.operations}
ROUTES = [r for rs in TABLES.values() for r in rs.operations]
BODY_ROUTES = [r for r in ROUTES if r.body is not None]
QUERY_ROUTES = [r for r in ROUTES if r.query is not None and "limit" in r.query_model().model_fields]  # the lists


def concrete(route: Route) -> str:
    path = route.path
    for name in route.params:
        path = path.replace("{" + name + "}", "id-1")
    return path


def resolve(route: Route, *, body: str | None = None, query: dict[str, str] | None = None) -> dict[str, Any]:
    routes = TABLE_OF[route.operation_id]
    path = concrete(route)
    event = {
        "rawPath": path,
        "requestContext": {
            "http": {"method": route.method, "path": path},
            "authorizer": {"jwt": {"claims": {"sub": "user-mallory", "cognito:groups": "[admin]",
                                             "auth_time": str(int(time.time()))}}},
        },
        "body": body,
        "queryStringParameters": query,
    }
    response = routes.resolve(event)
    response["json"] = json.loads(response["body"])
    return response


# An integer literal longer than Python converts (sys.int_info.default_max_str_digits is 4,300).
huge_integers = st.builds(
    lambda sign, digits: sign + "9" * digits, st.sampled_from(["", "-"]), st.integers(min_value=4301, max_value=20_000)
)

# JSON text with a placeholder somewhere inside: as a member value, next to other members, inside a list, at
# any depth; the object is what every body route expects at the top.
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)).map(json.dumps)
keys = st.text(min_size=1, max_size=8).map(json.dumps)


def around(inner: str, key: str, other: str, in_list: bool) -> str:
    value = "[1, " + inner + "]" if in_list else inner
    return "{" + f"{key}: {value}, " + json.dumps("other") + f": {other}" + "}"


bodies_with_a_slot = st.recursive(
    st.just("SLOT"), lambda inner: st.builds(around, inner, keys, json_scalars, st.booleans()), max_leaves=5
)


def object_around(text: str) -> str:
    return text if text.startswith("{") else "{\"value\": " + text + "}"


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda r: r.operation_id)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=bodies_with_a_slot, number=huge_integers)
def test_a_huge_integer_anywhere_in_any_body_is_a_bad_request(route: Route, shape: str, number: str) -> None:
    body = object_around(shape.replace("SLOT", number, 1))
    response = resolve(route, body=body)
    if len(body.encode()) > 64 * 1024:
        assert response["statusCode"] == 413
        return
    assert response["statusCode"] == 400, response["json"]
    assert response["json"]["error"]["code"] == "bad_request"


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda r: r.operation_id)
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_a_bad_request(route: Route, constant: str) -> None:
    response = resolve(route, body='{"value": ' + constant + "}")
    assert (response["statusCode"], response["json"]["error"]["code"]) == (400, "bad_request")


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda r: r.operation_id)
@settings(max_examples=20, deadline=None)
@given(number=huge_integers, as_string=st.booleans())
def test_a_huge_number_in_every_field_is_never_a_500(route: Route, number: str, as_string: bool) -> None:
    """Every field of the route's own body model, given a huge number (as a literal or a digit string that pydantic
    may try to parse as an int): 400 or 422, in the envelope."""
    assert route.body_model() is not None
    value = json.dumps(number) if as_string else number
    for field in route.body_model().model_json_schema(by_alias=True)["properties"]:
        response = resolve(route, body="{" + json.dumps(field) + ": " + value + "}")
        assert response["statusCode"] in (400, 422), (field, response["json"])
        if response["statusCode"] == 422:
            assert response["json"]["error"]["code"] == "validation_error"
            assert response["json"]["error"]["details"]["errors"]


@pytest.mark.parametrize("route", QUERY_ROUTES, ids=lambda r: r.operation_id)
@settings(max_examples=15, deadline=None)
@given(number=st.one_of(huge_integers, st.sampled_from(["1e999", "NaN", "-0", "0", "101", "1.5", ""])))
def test_a_bad_limit_on_any_list_is_a_422_on_limit(route: Route, number: str) -> None:
    response = resolve(route, query={"limit": number})
    assert response["statusCode"] == 422, response["json"]
    error = response["json"]["error"]
    assert error["code"] == "validation_error" and "limit" in [e["path"] for e in error["details"]["errors"]]
