"""The gateway's routes to the functions, matched the way API Gateway matches: exact and `{param}` routes
beat `{proxy+}`; a method beats `ANY`.

The gateway takes them from the route table (skillcore/api/route_table.py, `table_routes`), the one declaration of
which function serves which route; `http_routes` reads template.yaml's HttpApi events the same way, and
tests/unit/test_template.py checks the two agree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from skillcore_local.invoke import ensure_layer_on_path
from skillcore_local.template import load_template


@dataclass(frozen=True)
class Route:
    method: str  # "GET", ..., or "ANY"
    path: str  # "/rpc/conversations/{conversationId}/messages"
    function: str  # logical id of the target function
    auth: bool  # False for `Auth: {Authorizer: NONE}`
    segments: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "segments", tuple(self.path.strip("/").split("/")) if self.path != "/" else ()
        )

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def greedy(self) -> bool:
        return bool(self.segments) and self.segments[-1].endswith("+}")

    def match(self, method: str, segments: list[str]) -> dict[str, str] | None:
        """Path parameters (URL-decoded) if this route takes the request, else None."""
        if self.method not in ("ANY", method):
            return None
        params: dict[str, str] = {}
        fixed = self.segments[:-1] if self.greedy else self.segments
        if len(segments) < len(fixed) or (not self.greedy and len(segments) != len(fixed)):
            return None
        for pattern, actual in zip(fixed, segments, strict=False):
            if pattern.startswith("{") and pattern.endswith("}"):
                if not actual:
                    return None
                params[pattern[1:-1]] = unquote(actual)
            elif pattern != unquote(actual):
                return None
        if self.greedy:
            rest = "/".join(segments[len(fixed) :])
            if not rest:
                return None
            params[self.segments[-1][1:-2]] = unquote(rest)
        return params

    def specificity(self) -> tuple[int, tuple[int, ...], int]:
        """Lower sorts first: no greedy variable, then literal segments before `{param}`, then a method before ANY."""
        kinds = tuple(1 if s.startswith("{") else 0 for s in self.segments)
        return (1 if self.greedy else 0, kinds, 1 if self.method == "ANY" else 0)


def http_routes(template: dict[str, Any] | None = None) -> list[Route]:
    """Every `Type: HttpApi` event of every function, with the API's default authorizer applied."""
    template = template or load_template()
    resources = template["Resources"]
    routes: list[Route] = []
    for logical_id, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in ((resource.get("Properties") or {}).get("Events") or {}).values():
            if event.get("Type") != "HttpApi":
                continue
            props = event.get("Properties") or {}
            api_ref = props.get("ApiId")
            api = resources.get(api_ref.get("Ref")) if isinstance(api_ref, dict) else None
            api_auth = ((api or {}).get("Properties") or {}).get("Auth") or {}
            authorizer = (props.get("Auth") or {}).get("Authorizer") or api_auth.get("DefaultAuthorizer")
            method = str(props.get("Method", "ANY")).upper()
            routes.append(
                Route(
                    method="ANY" if method in ("ANY", "X-AMAZON-APIGATEWAY-ANY-METHOD") else method,
                    path=str(props.get("Path", "/")),
                    function=logical_id,
                    auth=bool(authorizer) and authorizer != "NONE",
                )
            )
    return routes


def table_routes() -> list[Route]:
    """Every route of the HTTP API as the route table declares it (route_table.api_routes)."""
    ensure_layer_on_path()
    from skillcore.api import route_table

    return [Route(route.method, route.path, route.function, route.auth) for route in route_table.api_routes()]


def match_route(routes: list[Route], method: str, raw_path: str) -> tuple[Route, dict[str, str]] | None:
    segments = raw_path.strip("/").split("/") if raw_path.strip("/") else []
    candidates = [
        (route, params) for route in routes if (params := route.match(method, segments)) is not None
    ]
    if not candidates:
        return None
    return min(candidates, key=lambda candidate: candidate[0].specificity())
