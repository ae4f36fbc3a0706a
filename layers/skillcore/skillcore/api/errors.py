"""Errors -> the API envelope, in one place: each domain exception type maps to a status (never by message
text). Body: {"error": {"code", "message", "details"}}. Unexpected exceptions become 500 `internal` with a
message that leaks nothing (api/app.py logs them with their type only).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

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
    errors.UpstreamError: 502,
    errors.UpstreamTimeout: 504,
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


class Documented(NamedTuple):
    """An error a route may answer, as its contract documents it (the OpenAPI document lists them per route)."""

    status: int
    code: str


# What the router itself answers (it adds them to every route they apply to, see api/app.py).
BAD_REQUEST = Documented(400, "bad_request")
UNAUTHENTICATED = Documented(401, "unauthenticated")
FORBIDDEN = Documented(403, "forbidden")
NOT_FOUND = Documented(404, "not_found")
PAYLOAD_TOO_LARGE = Documented(413, "payload_too_large")
VALIDATION_ERROR = Documented(422, "validation_error")
INTERNAL = Documented(500, "internal")

# What services raise (skillcore/errors.py types with their codes).
AGENT_NOT_FOUND = Documented(404, "agent_not_found")
SKILL_NOT_FOUND = Documented(404, "skill_not_found")
VERSION_CONFLICT = Documented(409, "version_conflict")
CONCURRENT_UPDATE = Documented(409, "concurrent_update")
CLIENT_MESSAGE_CONFLICT = Documented(409, "client_message_conflict")
JOB_NOT_CANCELLABLE = Documented(409, "job_not_cancellable")
INVALID_TIMEZONE = Documented(422, "invalid_timezone")
UNKNOWN_TOOL = Documented(422, "unknown_tool")
PERMISSION_REQUIRED = Documented(422, "permission_required")
PERMISSION_NOT_DECLARED = Documented(422, "permission_not_declared")
SKILL_DISABLED = Documented(422, "skill_disabled")
RUN_AT_OUT_OF_RANGE = Documented(422, "run_at_out_of_range")


def status_of(error: errors.DomainError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


# User-defined capabilities (API.md "User-defined capabilities").
CAPABILITY_NAME_TAKEN = Documented(409, "capability_name_taken")
CAPABILITY_ACTIVE = Documented(409, "capability_active")
BINDING_NAME_TAKEN = Documented(409, "binding_name_taken")
BINDING_IN_USE = Documented(409, "binding_in_use")
QUOTA_EXCEEDED = Documented(422, "quota_exceeded")
UNSAFE_TEXT = Documented(422, "unsafe_text")
UNKNOWN_REFERENCE = Documented(422, "unknown_reference")
SCHEMA_NOT_ALLOWED = Documented(422, "schema_not_allowed")
CAPABILITY_NOT_ACTIVE = Documented(422, "capability_not_active")
# A draft's protocol asked for without preview (API.md "Capability catalog and protocols").
CAPABILITY_NOT_ACTIVE_PROTOCOL = Documented(409, "capability_not_active")

# Per-operation approvals (API.md "Approvals").
APPROVAL_NOT_PENDING = Documented(409, "approval_not_pending")
DRAFT_REVISION_CONFLICT = Documented(409, "draft_revision_conflict")
DRAFT_HAS_GAPS = Documented(422, "draft_has_gaps")
UPSTREAM_ERROR = Documented(502, "upstream_error")

# Hosted external workflows (API.md "Hosted external workflows").
ENDPOINT_NAME_TAKEN = Documented(409, "endpoint_name_taken")
URL_NOT_ALLOWED = Documented(422, "url_not_allowed")
SNAPSHOT_INVALID = Documented(422, "snapshot_invalid")
UPSTREAM_TIMEOUT = Documented(504, "upstream_timeout")
ENDPOINT_DISABLED = Documented(409, "endpoint_disabled")
TOOL_DRIFTED = Documented(409, "tool_drifted")
APPROVAL_REQUIRED = Documented(409, "approval_required")
IDEMPOTENCY_KEY_REUSED = Documented(409, "idempotency_key_reused")
