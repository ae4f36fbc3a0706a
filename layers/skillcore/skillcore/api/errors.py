"""Errors -> the API envelope, in one place: each domain error class carries its status and code
(skillcore/errors.py and the features' errors.py), so the answer is read off the error (never its message).
Body: {"error": {"code", "message", "details"}}. Unexpected exceptions become 500 `internal` with a message
that leaks nothing (api/app.py logs them with their type only); a store that stays unavailable becomes 503
`store_unavailable` with `Retry-After`.

Routes and tools document the errors they may answer by listing classes (`errors=(e.AgentNotFound, ...)`),
and the OpenAPI document's error responses (codes per status) are read off the same classes. This module
names every class a route may list, so routes import it alone.
"""

from __future__ import annotations

import json
from typing import Any

from skillcore.approvals.errors import ApprovalNotPending
from skillcore.background.errors import JobNotCancellable, RunAtOutOfRange
from skillcore.capabilities.errors import (
    BindingInUse,
    BindingNameTaken,
    CapabilityActive,
    CapabilityNameTaken,
    CapabilityNotActive,
    DraftHasGaps,
    DraftRevisionConflict,
    ProtocolNotActive,
    SchemaNotAllowed,
    UnknownReference,
    UnsafeText,
)
from skillcore.chat.errors import ClientMessageConflict
from skillcore.errors import (
    RETRY_AFTER_SECONDS,
    AgentNotFound,
    AlreadyExists,
    BadRequest,
    CanaryRunning,
    ConcurrentUpdate,
    DomainError,
    Forbidden,
    GrantScopeMismatch,
    IdempotencyKeyReused,
    Internal,
    InvalidTimezone,
    KeyRevoked,
    NotFound,
    PackageInvalid,
    PayloadTooLarge,
    PermissionNotDeclared,
    PermissionRequired,
    PersonRequired,
    PublisherUnknown,
    QuotaExceeded,
    ReleaseNotPending,
    SignatureInvalid,
    SkillDisabled,
    SkillIdTaken,
    SkillNotFound,
    StoreUnavailableError,
    TrustLevelForbidden,
    Unauthenticated,
    UnknownTool,
    UpgradeNotPending,
    UpstreamError,
    UpstreamTimeout,
    ValidationFailed,
    VersionConflict,
)
from skillcore.hosted.errors import (
    ApprovalRequired,
    EndpointDisabled,
    EndpointNameTaken,
    SnapshotInvalid,
    ToolDrifted,
    UrlNotAllowed,
)
from skillcore.limits.errors import BudgetExhausted, RateLimited

__all__ = [
    "AgentNotFound", "AlreadyExists", "ApprovalNotPending", "ApprovalRequired", "BadRequest", "BindingInUse",
    "BindingNameTaken", "BudgetExhausted", "CanaryRunning", "CapabilityActive", "CapabilityNameTaken", "CapabilityNotActive",
    "ClientMessageConflict", "ConcurrentUpdate", "DraftHasGaps", "DraftRevisionConflict", "EndpointDisabled",
    "EndpointNameTaken", "Forbidden", "GrantScopeMismatch", "IdempotencyKeyReused", "Internal",
    "InvalidTimezone", "JobNotCancellable", "KeyRevoked", "NotFound", "PackageInvalid", "PayloadTooLarge",
    "PermissionNotDeclared", "PermissionRequired", "PersonRequired", "ProtocolNotActive", "PublisherUnknown",
    "QuotaExceeded", "RateLimited", "ReleaseNotPending", "RunAtOutOfRange", "SchemaNotAllowed",
    "SignatureInvalid", "SkillDisabled", "SkillIdTaken", "SkillNotFound", "SnapshotInvalid",
    "StoreUnavailableError", "ToolDrifted", "TrustLevelForbidden", "Unauthenticated", "UnknownReference", "UnknownTool",
    "UnsafeText", "UpgradeNotPending", "UpstreamError", "UpstreamTimeout", "UrlNotAllowed", "ValidationFailed", "VersionConflict",
]

JSON = "application/json; charset=utf-8"

# An API Gateway HTTP API (payload 2.0) Lambda response.
Response = dict[str, Any]

# An error a route or tool may answer, as its contract documents it: its class (status and code with it).
Documented = type[DomainError]


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return {
        "statusCode": status,
        "headers": {"Content-Type": JSON, **(headers or {})},
        "body": json.dumps(body, ensure_ascii=False, separators=(",", ":")),
        "isBase64Encoded": False,
    }


def empty_response(status: int = 204) -> Response:
    return {"statusCode": status, "headers": {}, "body": "", "isBase64Encoded": False}


def error_body(error: DomainError) -> dict[str, Any]:
    """The envelope's body of `error`: the same for HTTP and for an MCP tool's `isError` answer."""
    return {"error": {"code": error.code, "message": error.message, "details": dict(error.details)}}


def headers_of(error: DomainError) -> dict[str, str]:
    """Headers the answer to `error` carries besides Content-Type: `Retry-After` on a 503 and on a 429."""
    if isinstance(error, StoreUnavailableError):
        return {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if isinstance(error, (RateLimited, BudgetExhausted)):
        return {"Retry-After": str(error.details["retryAfterSeconds"])}
    return {}


def answer(error: DomainError, headers: dict[str, str] | None = None) -> Response:
    """The HTTP answer to `error`: its status, its headers and the envelope."""
    return json_response(error.status, error_body(error), {**headers_of(error), **(headers or {})})


def documents(errors: tuple[Documented, ...], error: DomainError) -> bool:
    """Whether a contract that lists `errors` describes the answer to `error` (its class is listed)."""
    return type(error).answered_as() in errors
