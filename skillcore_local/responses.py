"""The HTTP responses the local gateway writes itself (its own routes and errors), in the API's envelope."""

from __future__ import annotations

import json
import sys
import traceback
from dataclasses import dataclass
from typing import Any


@dataclass
class HttpResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""


def json_response(status: int, payload: Any, headers: list[tuple[str, str]] | None = None) -> HttpResponse:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return HttpResponse(status, [("content-type", "application/json; charset=utf-8"), *(headers or [])], body)


def error_response(
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: list[tuple[str, str]] | None = None,
) -> HttpResponse:
    return json_response(
        status, {"error": {"code": code, "message": message, "details": details or {}}}, headers
    )


def method_not_allowed(method: str, path: str, allowed: tuple[str, ...]) -> HttpResponse:
    """405 with Allow, as the Lambda router answers it for /rpc routes."""
    return error_response(
        405,
        "method_not_allowed",
        f"{method} is not allowed on {path}; it accepts {', '.join(allowed)}",
        {"allowed": list(allowed)},
        headers=[("allow", ", ".join(allowed))],
    )


def log_failure(what: str, error: BaseException) -> None:
    """One log line: the error's type and where it was raised, never its message. An exception's text can carry
    stored data (a record's fields, a user's text); the type and the frame are enough to find the bug."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    print(f"ERROR: {what} failed: {type(error).__name__}{where}", file=sys.stderr, flush=True)
