"""Which Lambda function serves which route group: the one declaration, read by the functions (through
skillcore/bootstrap.py), the template test (tests/unit/test_template.py checks template.yaml's HttpApi events
against it), the local gateway (skillcore_local/routing.py) and the OpenAPI generator (skillcore_local/openapi.py).

Plain data, cheap to import: a group is named by its module path and imported only by whoever asks for its
routes. The methods and paths are never written here: they come from the routes' own declarations
(`@routes.route(...)` in each `api/routes_*.py`), registered by `routes(logical_id)` without collaborators.

    FUNCTIONS["HostedFunction"] == Served(routes=("skillcore.api.routes_approvals", "skillcore.api.routes_hosted"))

API Gateway sends a function its routes one event each, except where the function declares a greedy route
(`ANY /rpc/{proxy+}`): that one event covers its routes, and a route of its own that needs no token still has
its own event (the proxy is behind the authorizer). `api_routes` says so for each function, as template.yaml
must declare it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple, cast

if TYPE_CHECKING:
    from skillcore.api.app import Routes
    from skillcore.api.toolbox import Toolbox


class Served(NamedTuple):
    """What one function serves."""

    # api/routes_*.py modules, registered in this order (each has `register(routes, deps)`).
    routes: tuple[str, ...] = ()
    # api/tools_*.py modules: the MCP face's tools (each has `register(toolbox, deps)`).
    tools: tuple[str, ...] = ()
    # API Gateway routes besides the routes' own, as "METHOD /path": a greedy proxy, the MCP endpoint.
    gateway: tuple[str, ...] = ()


FUNCTIONS: dict[str, Served] = {
    "RpcFunction": Served(
        # Background routes before the skills routes: their static paths must win over PATCH /rpc/skills/{skillId}.
        routes=("skillcore.api.routes_core", "skillcore.api.routes_background", "skillcore.api.routes_skills",
                "skillcore.api.routes_automation", "skillcore.api.routes_capabilities"),
        # Every other /rpc/ path and method, behind the authorizer: the router's 404s and 405s.
        gateway=("ANY /rpc/{proxy+}",),
    ),
    # The catalog: packages, publishers and releases, a user's installs, the installed code tools' listing. Its own
    # function: the release check's WebAssembly runtime and the package bucket are never RpcFunction's.
    "CatalogFunction": Served(routes=("skillcore.api.routes_packages", "skillcore.api.routes_installs",
                                      "skillcore.api.routes_code_tools")),
    "ChatTurnFunction": Served(routes=("skillcore.api.routes_chat",)),
    "HostedFunction": Served(routes=("skillcore.api.routes_approvals", "skillcore.api.routes_hosted")),
    "McpFunction": Served(
        tools=("skillcore.api.tools_core", "skillcore.api.tools_capabilities", "skillcore.api.tools_hosted",
               "skillcore.api.tools_code"),
        gateway=("POST /mcp",),
    ),
    "ScanFunction": Served(),  # EventBridge's schedule
    "WorkerFunction": Served(),  # the work queue's event source
}


class ApiRoute(NamedTuple):
    """One route of the HTTP API as API Gateway declares it (one HttpApi event of template.yaml)."""

    method: str  # "GET", ... or "ANY"
    path: str  # "/rpc/agents/{agentId}"
    function: str
    auth: bool  # False: no authorizer (`Auth: {Authorizer: NONE}`)


def register(target: Any, modules: tuple[str, ...], deps_of: Any) -> None:
    """`module.register(target, deps_of(module))` for each module, in order."""
    for name in modules:
        importlib.import_module(name).register(target, deps_of(name))


def routes(logical_id: str) -> Routes:
    """The function's routes as its handler registers them, without collaborators (the handlers are never
    called here): their methods, paths and contracts."""
    from skillcore.api.app import Routes

    table = Routes()
    register(table, FUNCTIONS[logical_id].routes, lambda _name: cast(Any, None))
    return table


def tools(logical_id: str) -> Toolbox:
    """The function's MCP tools, registered without collaborators."""
    from skillcore.api.toolbox import Toolbox

    toolbox = Toolbox()
    register(toolbox, FUNCTIONS[logical_id].tools, lambda _name: cast(Any, None))
    return toolbox


def http_functions() -> tuple[str, ...]:
    """The functions with routes of their own (the OpenAPI document's operations)."""
    return tuple(logical_id for logical_id, served in FUNCTIONS.items() if served.routes)


def api_routes() -> list[ApiRoute]:
    """Every route of the HTTP API, per function, as template.yaml declares them."""
    found: list[ApiRoute] = []
    for logical_id, served in FUNCTIONS.items():
        extra = [ApiRoute(method, path, logical_id, True)
                 for method, path in (route.split(" ", 1) for route in served.gateway)]
        greedy = any(route.path.endswith("+}") for route in extra)
        for route in routes(logical_id).operations if served.routes else ():
            if not greedy or not route.auth:
                found.append(ApiRoute(route.method, route.path, logical_id, route.auth))
        found += extra
    return found


def served_elsewhere(logical_id: str) -> list[tuple[str, str]]:
    """(method, path) of the other functions' routes, which API Gateway sends elsewhere but which this
    function's greedy route would otherwise take for paths it has no method of (its 405 names them)."""
    return [(route.method, route.path) for other in http_functions() if other != logical_id
            for route in routes(other).operations]
