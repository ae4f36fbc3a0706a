"""Building a resolver: routes are registered through `Routes` so 404 and 405 can be told apart, and
every path id is checked before a handler runs."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from skillcore.api import errors
from skillcore.errors import NotFound

# Every id skillcore mints or accepts fits this; anything else cannot name a resource (and a key longer
# than DynamoDB allows must never reach it), so it is simply not found.
PATH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _checked(handler: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(handler)
    def wrapper(**path: str) -> Any:
        if any(not PATH_ID.match(value) for value in path.values()):
            raise NotFound("not found")
        return handler(**path)

    return wrapper


class Routes:
    def __init__(self, app: APIGatewayHttpResolver):
        self.app = app
        self.table = errors.RouteTable()

    def route(self, method: str, path: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        self.table.add(method, path)
        register = self.app.route(path, method=method.upper())
        return lambda handler: register(_checked(handler))

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
