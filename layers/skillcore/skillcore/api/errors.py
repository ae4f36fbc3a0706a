"""Errors -> the API envelope, in one place: each domain exception type maps to a status (never by message
text). Body: {"error": {"code", "message", "details"}}. Unexpected exceptions become 500 `internal` with a
message that leaks nothing (api/app.py logs them with their type only).
"""

from __future__ import annotations

import json
from typing import Any

from skillcore import errors

JSON = "application/json; charset=utf-8"

# An API Gateway HTTP API (payload 2.0) Lambda response.
Response = dict[str, Any]

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
    return {
        "statusCode": status,
        "headers": {"Content-Type": JSON, **(headers or {})},
        "body": json.dumps(body, ensure_ascii=False, separators=(",", ":")),
        "isBase64Encoded": False,
    }


def empty_response(status: int = 204) -> Response:
    return {"statusCode": status, "headers": {}, "body": "", "isBase64Encoded": False}


def envelope(status: int, code: str, message: str, details: dict[str, Any] | None = None,
             headers: dict[str, str] | None = None) -> Response:
    return json_response(status, {"error": {"code": code, "message": message, "details": details or {}}}, headers)


def status_of(error: errors.DomainError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500
