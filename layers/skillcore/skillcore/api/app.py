"""The router of the HTTP functions: API Gateway HTTP API (payload 2.0) events to route handlers.

A small router of our own rather than Powertools' event handler: importing that package loads every
resolver it has (AppSync's pulls in asyncio), about 60 ms of each cold start for nothing we use. This one
does what skillcore needs and no more: static routes before parameter routes, 404 versus 405 (with
Allow), path ids checked before any handler runs, and every error in the API envelope (api/errors.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from msgspec import Struct

from skillcore.api.errors import Response, envelope, status_of
from skillcore.errors import DomainError, NotFound
from skillcore.observability import logger

# Every id skillcore mints or accepts fits this; anything else cannot name a resource (and a key longer
# than DynamoDB allows must never reach it), so it is simply not found.
PATH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Route(Struct, frozen=True):
    method: str
    pattern: re.Pattern[str]
    params: int
    handler: Callable[..., Response]


def _compile(path: str) -> tuple[re.Pattern[str], int]:
    parts = re.split(r"<([A-Za-z_][A-Za-z0-9_]*)>", path)
    regex = "".join(f"(?P<{part}>[^/]+)" if i % 2 else re.escape(part) for i, part in enumerate(parts))
    return re.compile(f"^{regex}/?$"), len(parts) // 2


class Routes:
    def __init__(self) -> None:
        self._routes: list[Route] = []
        self._local = threading.local()

    def route(self, method: str, path: str) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
        pattern, params = _compile(path)

        def register(handler: Callable[..., Response]) -> Callable[..., Response]:
            self._routes.append(Route(method.upper(), pattern, params, handler))
            # Static routes win over parameter routes (PATCH /rpc/skills/permissions over /rpc/skills/<id>).
            self._routes.sort(key=lambda r: r.params)
            return handler

        return register

    @property
    def event(self) -> dict[str, Any]:
        return self._local.event

    def resolve(self, event: dict[str, Any], _context: Any = None) -> Response:
        http = (event.get("requestContext") or {}).get("http") or {}
        method = str(http.get("method", "")).upper()
        path = event.get("rawPath") or http.get("path") or "/"
        self._local.event = event
        try:
            return self._dispatch(method, path)
        except DomainError as error:
            return envelope(status_of(error), error.code, error.message, error.details)
        except Exception as error:  # noqa: BLE001 - the one place an unexpected error becomes a 500
            logger.exception("unhandled error", extra={"error_type": type(error).__name__})
            return envelope(500, "internal", "internal error")
        finally:
            self._local.event = None

    def _dispatch(self, method: str, path: str) -> Response:
        allowed: list[str] = []
        for route in self._routes:
            found = route.pattern.match(path)
            if found is None:
                continue
            if route.method != method:
                allowed.append(route.method)
                continue
            params = found.groupdict()
            if any(not PATH_ID.match(value) for value in params.values()):
                raise NotFound("not found")
            return route.handler(**params)
        if allowed:
            methods = sorted(set(allowed))
            return envelope(405, "method_not_allowed", f"{method} is not allowed here", {"allowed": methods},
                            headers={"Allow": ", ".join(methods)})
        return envelope(404, "not_found", "no such route")


def new_app() -> Routes:
    return Routes()
