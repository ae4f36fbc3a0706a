"""The router's 405: Allow names the methods of the resource the path is, and those another function serves."""

from __future__ import annotations

from msgspec import Struct

from skillcore.api.app import Routes


class Ok(Struct):
    ok: bool = True


def _routes() -> Routes:
    routes = Routes()

    @routes.route("GET", "/rpc/skills/runs", response=Ok)
    def list_runs(caller: object) -> Ok:
        return Ok()

    @routes.route("PATCH", "/rpc/skills/<skillId>", response=Ok)
    def patch_skill(caller: object, skillId: str) -> Ok:  # noqa: N803 - the path parameter's name
        return Ok()

    @routes.route("GET", "/rpc/conversations/<conversationId>/messages", response=Ok)
    def list_messages(caller: object, conversationId: str) -> Ok:  # noqa: N803
        return Ok()

    routes.served_elsewhere("POST", "/rpc/conversations/<conversationId>/messages")
    return routes


def _call(routes: Routes, method: str, path: str) -> dict[str, object]:
    event = {
        "rawPath": path,
        "requestContext": {
            "http": {"method": method, "path": path},
            "authorizer": {"jwt": {"claims": {"sub": "u"}}},
        },
    }
    return routes.resolve(event)


def test_a_static_path_is_its_own_resource_not_a_value_of_a_parameter_route() -> None:
    answer = _call(_routes(), "OPTIONS", "/rpc/skills/runs")
    assert answer["statusCode"] == 405
    assert answer["headers"]["Allow"] == "GET"  # not "GET, PATCH": /rpc/skills/{skillId} is another resource
    assert _call(_routes(), "PATCH", "/rpc/skills/runs")["statusCode"] == 405
    assert _call(_routes(), "PATCH", "/rpc/skills/memory-recall")["statusCode"] == 200


def test_allow_names_the_methods_another_function_serves_on_the_path() -> None:
    answer = _call(_routes(), "PUT", "/rpc/conversations/c1/messages")
    assert answer["statusCode"] == 405
    assert answer["headers"]["Allow"] == "GET, POST"
    assert _call(_routes(), "GET", "/rpc/conversations/c1/messages")["statusCode"] == 200


def test_a_path_only_another_function_serves_is_a_405_not_a_404() -> None:
    routes = _routes()
    routes.served_elsewhere("GET", "/rpc/approvals")
    routes.served_elsewhere("POST", "/rpc/approvals/<approvalId>")
    answer = _call(routes, "TRACE", "/rpc/approvals")
    assert answer["statusCode"] == 405
    assert answer["headers"]["Allow"] == "GET"
    assert _call(routes, "DELETE", "/rpc/approvals/a1")["headers"]["Allow"] == "POST"
    assert _call(routes, "TRACE", "/rpc/nothing-here")["statusCode"] == 404


def test_routes_served_elsewhere_are_asked_for_on_the_first_answer_that_needs_them_and_once() -> None:
    routes = _routes()
    asked: list[int] = []

    def elsewhere() -> list[tuple[str, str]]:
        asked.append(1)
        return [("GET", "/rpc/approvals"), ("POST", "/rpc/approvals/{approvalId}")]

    routes.served_elsewhere_from(elsewhere)
    assert _call(routes, "GET", "/rpc/skills/runs")["statusCode"] == 200
    assert asked == []  # a request a route takes never needs them
    assert _call(routes, "TRACE", "/rpc/approvals")["headers"]["Allow"] == "GET"
    assert _call(routes, "DELETE", "/rpc/approvals/a1")["headers"]["Allow"] == "POST"
    assert _call(routes, "TRACE", "/rpc/nothing-here")["statusCode"] == 404
    assert asked == [1]


def test_rpc_functions_allow_names_the_hosted_and_chat_routes_from_the_route_table() -> None:
    from skillcore.api import route_table

    routes = route_table.routes("RpcFunction")
    routes.served_elsewhere_from(lambda: route_table.served_elsewhere("RpcFunction"))
    assert _call(routes, "PUT", "/rpc/hosted-endpoints/e1")["headers"]["Allow"] == "DELETE, GET, PATCH"
    assert _call(routes, "GET", "/rpc/hosted-endpoints/e1/calls")["headers"]["Allow"] == "POST"
    assert _call(routes, "PUT", "/rpc/conversations/c1/messages")["headers"]["Allow"] == "GET, POST"
