"""Building a resolver: routes are registered through `Routes` so 404 and 405 can be told apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from skillcore.api import errors


class Routes:
    def __init__(self, app: APIGatewayHttpResolver):
        self.app = app
        self.table = errors.RouteTable()

    def route(self, method: str, path: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        self.table.add(method, path)
        return self.app.route(path, method=method.upper())

    @property
    def event(self) -> dict[str, Any]:
        return self.app.current_event.raw_event


def new_app() -> Routes:
    # Powertools' own validation is off: bodies are parsed by skillcore.api.http, so every error keeps the
    # API envelope (its default 422 body does not).
    app = APIGatewayHttpResolver()
    routes = Routes(app)
    errors.install(app, routes.table)
    return routes
