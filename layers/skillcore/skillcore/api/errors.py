"""Errors -> the API envelope, in one place, one handler per exception type (never by message text).

Body: {"error": {"code", "message", "details"}}. Unexpected exceptions are 500 `internal` with a message
that leaks nothing; they are logged with their type only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from skillcore import errors
from skillcore.observability import logger

JSON = "application/json; charset=utf-8"

STATUS: dict[type[errors.DomainError], int] = {
    errors.BadRequest: 400,
    errors.Unauthenticated: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.PayloadTooLarge: 413,
    errors.RuleViolation: 422,
}


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(
        status_code=status, content_type=JSON, headers=headers,
        body=json.dumps(body, ensure_ascii=False, separators=(",", ":")) if body is not None else "",
    )


def envelope(status: int, code: str, message: str, details: dict[str, Any] | None = None,
             headers: dict[str, str] | None = None) -> Response:
    return json_response(status, {"error": {"code": code, "message": message, "details": details or {}}}, headers)


def status_of(error: errors.DomainError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


class RouteTable:
    """The routes an app serves, so an unmatched request can be told apart: 405 (path known) or 404."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str]]] = []

    def add(self, method: str, path: str) -> None:
        pattern = "".join(
            "[^/]+" if part.startswith("<") else re.escape(part) for part in re.split(r"(<[^>]+>)", path) if part
        )
        self._routes.append((method.upper(), re.compile(f"^{pattern}/?$")))

    def allowed(self, path: str) -> list[str]:
        return sorted({method for method, pattern in self._routes if pattern.match(path)})


def install(app: APIGatewayHttpResolver, routes: RouteTable) -> None:
    @app.exception_handler(errors.DomainError)
    def _domain(error: errors.DomainError) -> Response:
        return envelope(status_of(error), error.code, error.message, error.details)

    @app.not_found
    def _not_found(_: Exception) -> Response:
        path = app.current_event.path
        allowed = routes.allowed(path)
        if allowed:
            return envelope(405, "method_not_allowed", f"{app.current_event.http_method} is not allowed here",
                            {"allowed": allowed}, headers={"Allow": ", ".join(allowed)})
        return envelope(404, "not_found", "no such route")

    @app.exception_handler(Exception)
    def _unexpected(error: Exception) -> Response:
        logger.exception("unhandled error", extra={"error_type": type(error).__name__})
        return envelope(500, "internal", "internal error")
