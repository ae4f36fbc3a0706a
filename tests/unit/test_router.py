"""The router: the 404/405 route table, path ids checked first, and each route's declared contract (the caller
from the token, the parsed body and query, the typed answer it encodes, 204s, admin routes, the envelope)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from msgspec import UNSET, Struct, UnsetType
from pydantic import BaseModel, ConfigDict, Field

from skillcore.api import errors as documented
from skillcore.api.app import Caller, Routes
from skillcore.api.requests import Paging
from skillcore.background.errors import JobNotCancellable
from skillcore.shapes import Strict


class Echo(Struct, frozen=True, kw_only=True, rename="camel"):
    route: str
    params: dict[str, str]
    user_id: str | None = None
    maybe: str | UnsetType = UNSET
    nothing: str | None = None


def router() -> Routes:
    routes = Routes()
    for method, path in [
        ("GET", "/rpc/health"),
        ("GET", "/rpc/agents"),
        ("post", "/rpc/agents"),
        ("GET", "/rpc/agents/<agentId>"),
        ("GET", "/rpc/skills/runs"),
        ("PATCH", "/rpc/skills/<skillId>"),
        ("PATCH", "/rpc/skills/permissions"),
        ("POST", "/rpc/skills/background-jobs/<jobId>/cancel"),
    ]:
        label = f"{method.upper()} {path}"

        def handler(caller: Caller | None, _label: str = label, **params: str) -> Echo:
            return Echo(route=_label, params=params, user_id=caller.user_id if caller else None)

        handler.__name__ = label.lower().replace(" ", "_").replace("/", "_").replace("<", "").replace(">", "").replace("-", "_")
        routes.route(method, path, response=Echo, auth=path != "/rpc/health")(handler)
    return routes


def event(method: str, path: str, *, user: str | None = "u-1", groups: str | None = None, body: str | None = None,
          query: dict[str, str] | None = None) -> dict[str, Any]:
    claims: dict[str, Any] = {} if user is None else {"sub": user}
    if groups is not None:
        claims["cognito:groups"] = groups
    return {
        "rawPath": path,
        "requestContext": {"http": {"method": method, "path": path}, "authorizer": {"jwt": {"claims": claims}}},
        "body": body,
        "queryStringParameters": query,
    }


def call(routes: Routes, method: str, path: str, **kwargs: Any) -> tuple[int, dict]:
    response = routes.resolve(event(method, path, **kwargs))
    body = json.loads(response["body"]) if response["body"] else {}
    return response["statusCode"], body | {"allow": response["headers"].get("Allow")}


# -- the route table -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/rpc/health", "GET"),
        ("/rpc/agents/", "GET, POST"),
        ("/rpc/agents/a-1/", "GET"),
        ("/rpc/skills/runs", "GET"),  # the literal route is the resource: PATCH /rpc/skills/{skillId} is another
        ("/rpc/skills/goal-setting", "PATCH"),
        ("/rpc/skills/background-jobs/j-1/cancel", "POST"),
    ],
)
def test_a_known_path_with_another_method_is_405_with_allow(path: str, allowed: str) -> None:
    status, body = call(router(), "DELETE", path)
    assert status == 405 and body["error"]["code"] == "method_not_allowed" and body["allow"] == allowed


@pytest.mark.parametrize(
    "path",
    ["/rpc/agents/a-1/b", "/rpc/agents//", "/rpc/skills/background-jobs//cancel", "/rpc/healthz", "/rpc", "/RPC/health", ""],
)
def test_an_unknown_path_is_404(path: str) -> None:
    status, body = call(router(), "GET", path)
    assert status == 404 and body["error"]["code"] == "not_found"


def test_dispatch_params_and_static_routes_first() -> None:
    routes = router()
    assert call(routes, "GET", "/rpc/agents/a-1")[1]["params"] == {"agentId": "a-1"}
    assert call(routes, "PATCH", "/rpc/skills/permissions")[1]["route"] == "PATCH /rpc/skills/permissions"
    assert call(routes, "PATCH", "/rpc/skills/goal-setting")[1]["params"] == {"skillId": "goal-setting"}


@pytest.mark.parametrize("bad_id", ["x" * 65, "a.b", "a%2Fb", "ü"])
def test_path_ids_are_checked_before_any_handler(bad_id: str) -> None:
    status, body = call(router(), "GET", f"/rpc/agents/{bad_id}")
    assert status == 404 and body["error"]["code"] == "not_found"


def test_route_paths_are_literal_not_regular_expressions() -> None:
    routes = Routes()

    def items(caller: Caller) -> Echo:
        return Echo(route="a", params={})

    def a_plus_b(caller: Caller) -> Echo:
        return Echo(route="b", params={})

    routes.route("GET", "/rpc/v1.0/items", response=Echo)(items)
    routes.route("GET", "/rpc/a+b", response=Echo)(a_plus_b)
    assert call(routes, "GET", "/rpc/v1.0/items")[0] == 200
    assert call(routes, "GET", "/rpc/v1x0/items")[0] == 404
    assert call(routes, "GET", "/rpc/aab")[0] == 404


def test_operations_carry_the_openapi_path_and_a_unique_operation_id() -> None:
    routes = router()
    ops = {(r.method, r.path): r.operation_id for r in routes.operations}
    assert ops[("GET", "/rpc/agents/{agentId}")] == "getRpcAgentsAgentid"
    assert len(set(ops.values())) == len(ops)
    with pytest.raises(ValueError, match="operationId"):
        routes.route("GET", "/rpc/other", response=Echo)(next(r.handler for r in routes.operations))


# -- the caller ------------------------------------------------------------------------------------------------


def test_the_handler_gets_the_caller_from_the_token() -> None:
    status, body = call(router(), "GET", "/rpc/agents", user="u-42")
    assert status == 200 and body["userId"] == "u-42"


@pytest.mark.parametrize("user", [None, "", "  "])
def test_a_route_with_auth_refuses_a_missing_subject(user: str | None) -> None:
    status, body = call(router(), "GET", "/rpc/agents", user=user)
    assert status == 401 and body["error"]["code"] == "unauthenticated"


def test_a_public_route_needs_no_token() -> None:
    status, body = call(router(), "GET", "/rpc/health", user=None)
    assert status == 200 and body["userId"] is None


def admin_router(seen: list[Caller]) -> Routes:
    routes = Routes()

    def admin_only(caller: Caller) -> Echo:
        seen.append(caller)
        return Echo(route="admin", params={})

    routes.route("GET", "/rpc/admin/x", response=Echo, admin=True)(admin_only)
    return routes


@pytest.mark.parametrize("groups", [None, "[]", "[ops]", "administrators"])
def test_an_admin_route_refuses_without_the_group_before_the_handler(groups: str | None) -> None:
    seen: list[Caller] = []
    status, body = call(admin_router(seen), "GET", "/rpc/admin/x", groups=groups)
    assert status == 403 and body["error"]["code"] == "forbidden" and seen == []


def test_an_admin_route_checks_the_token_first() -> None:
    seen: list[Caller] = []
    assert call(admin_router(seen), "GET", "/rpc/admin/x", user=None, groups="[admin]")[0] == 401


def test_an_admin_route_serves_the_admin_group() -> None:
    seen: list[Caller] = []
    assert call(admin_router(seen), "GET", "/rpc/admin/x", groups="[ops admin]")[0] == 200
    assert seen == [Caller("u-1", True)]


# -- body, query and the typed answer --------------------------------------------------------------------------


class Item(Strict):
    name: str = Field(min_length=1, max_length=10)
    count: int = Field(default=1, ge=1, le=5)


class Lookup(BaseModel):
    model_config = ConfigDict(extra="ignore")

    limit: int = Field(default=50, ge=1, le=100)


def body_router(received: list[Any]) -> Routes:
    routes = Routes()

    def create_item(caller: Caller, itemId: str, body: Item) -> Echo:  # noqa: N803
        received.append(body)
        return Echo(route="create", params={"itemId": itemId}, user_id=caller.user_id, maybe=body.name)

    def find_items(caller: Caller, query: Lookup) -> Echo:
        received.append(query)
        return Echo(route="find", params={"limit": str(query.limit)})

    def drop_item(caller: Caller, itemId: str) -> None:  # noqa: N803
        received.append(itemId)

    routes.route("POST", "/rpc/items/<itemId>", body=Item, response=Echo, status=201)(create_item)
    routes.route("GET", "/rpc/items", query=Lookup, response=Echo)(find_items)
    routes.route("DELETE", "/rpc/items/<itemId>", response=None, status=204)(drop_item)
    return routes


def test_the_body_is_parsed_and_the_answer_encoded_with_the_declared_status() -> None:
    received: list[Any] = []
    response = body_router(received).resolve(event("POST", "/rpc/items/i-1", body='{"name": "ab", "count": 2}'))
    assert received == [Item(name="ab", count=2)]
    assert response["statusCode"] == 201
    assert response["headers"] == {"Content-Type": "application/json; charset=utf-8"}
    # UNSET fields are absent, None fields are null, keys are camelCase, text is UTF-8 (not \u escapes).
    assert json.loads(response["body"]) == {
        "route": "create", "params": {"itemId": "i-1"}, "userId": "u-1", "maybe": "ab", "nothing": None,
    }


def test_absent_and_null_optional_fields() -> None:
    response = router().resolve(event("GET", "/rpc/agents", user="ü"))
    assert json.loads(response["body"]) == {"route": "GET /rpc/agents", "params": {}, "userId": "ü", "nothing": None}
    assert '"ü"' in response["body"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (None, 400, "bad_request"),
        ("[]", 400, "bad_request"),
        ('{"name": ', 400, "bad_request"),
        ('{"name": "ab", "count": ' + "9" * 5000 + "}", 400, "bad_request"),
        ('{"name": "ab", "count": NaN}', 400, "bad_request"),
        ('{"name": "ab", "extra": 1}', 422, "validation_error"),
        ('{"name": "ab", "count": 6}', 422, "validation_error"),
        ('{"name": "ab", "count": ' + "9" * 4000 + "}", 422, "validation_error"),
        ('{"name": "' + "x" * 70_000 + '"}', 413, "payload_too_large"),
    ],
    ids=["none", "list", "broken", "huge-int", "nan", "unknown-field", "out-of-range", "big-int", "too-large"],
)
def test_a_bad_body_is_answered_before_the_handler(body: str | None, status: int, code: str) -> None:
    received: list[Any] = []
    got, answer = call(body_router(received), "POST", "/rpc/items/i-1", body=body)
    assert (got, answer["error"]["code"]) == (status, code) and received == []


@pytest.mark.parametrize(
    ("query", "status", "limit"),
    [(None, 200, "50"), ({"limit": "7"}, 200, "7"), ({"limit": "7", "other": "x"}, 200, "7"),
     ({"limit": "0"}, 422, None), ({"limit": "abc"}, 422, None), ({"limit": "9" * 5000}, 422, None),
     ({"limit": "-" + "9" * 5000}, 422, None), ({"limit": "1e999"}, 422, None)],
)
def test_the_query_is_parsed_and_checked(query: dict[str, str] | None, status: int, limit: str | None) -> None:
    received: list[Any] = []
    got, answer = call(body_router(received), "GET", "/rpc/items", query=query)
    assert got == status
    if limit is None:
        assert answer["error"]["code"] == "validation_error" and received == []
        assert answer["error"]["details"]["errors"][0]["path"] == "limit"
    else:
        assert answer["params"] == {"limit": limit}


def test_a_204_route_answers_no_body() -> None:
    received: list[Any] = []
    response = body_router(received).resolve(event("DELETE", "/rpc/items/i-9"))
    assert (response["statusCode"], response["body"], received) == (204, "", ["i-9"])


def test_a_handler_that_returns_another_type_is_a_500_not_an_undocumented_body() -> None:
    routes = Routes()
    routes.route("GET", "/rpc/x", response=Echo)(lambda caller: {"route": "x", "params": {}})
    status, body = call(routes, "GET", "/rpc/x")
    assert status == 500 and body["error"]["code"] == "internal"


def test_a_204_route_cannot_declare_a_body_and_others_must() -> None:
    routes = Routes()
    with pytest.raises(ValueError):
        routes.route("DELETE", "/rpc/x", response=Echo, status=204)
    with pytest.raises(ValueError):
        routes.route("GET", "/rpc/x", response=None)


def test_domain_errors_are_the_envelope() -> None:
    routes = Routes()

    def conflicting(caller: Caller) -> Echo:
        raise JobNotCancellable("running")

    routes.route("POST", "/rpc/x", response=Echo, errors=(documented.JobNotCancellable,))(conflicting)
    status, body = call(routes, "POST", "/rpc/x")
    assert status == 409
    assert body["error"] == {"code": "job_not_cancellable", "message": "a running job cannot be cancelled",
                             "details": {"status": "running"}}


def test_unexpected_errors_are_500_without_internals() -> None:
    routes = Routes()

    def boom(caller: Caller) -> Echo:
        raise RuntimeError("secret detail")

    routes.route("GET", "/rpc/boom", response=Echo)(boom)
    status, body = call(routes, "GET", "/rpc/boom")
    assert status == 500 and body["error"] == {"code": "internal", "message": "internal error", "details": {}}


def test_documented_errors_follow_what_the_route_takes() -> None:
    routes = Routes()

    def a(caller: Caller, aId: str, body: Item) -> Echo:  # noqa: N803
        raise AssertionError("not called")

    def health(caller: None) -> Echo:
        raise AssertionError("not called")

    def b(caller: Caller, query: Paging) -> Echo:
        raise AssertionError("not called")

    routes.route("POST", "/rpc/a/<aId>", body=Item, response=Echo, admin=True,
                 errors=(documented.AgentNotFound,))(a)
    routes.route("GET", "/rpc/health", response=Echo, auth=False, store=False)(health)
    routes.route("GET", "/rpc/b", query=Paging, response=Echo)(b)
    by_path = {route.path: route.documented_errors() for route in routes.operations}
    a, health, b = by_path["/rpc/a/{aId}"], by_path["/rpc/health"], by_path["/rpc/b"]
    assert [(e.status, e.code) for e in a] == [
        (400, "bad_request"), (401, "unauthenticated"), (403, "forbidden"), (404, "not_found"),
        (413, "payload_too_large"), (422, "validation_error"), (429, "rate_limited"), (404, "agent_not_found"),
        (500, "internal"), (503, "store_unavailable"),
    ]
    assert [e.status for e in health] == [500]
    assert [e.status for e in b] == [401, 422, 500, 503]
