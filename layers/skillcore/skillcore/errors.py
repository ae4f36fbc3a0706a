"""Domain errors. The API layer maps each type to a status and code in one place (api/errors.py)."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """Base class: `code` is the API error code, `details` structured data safe to return."""

    code = "internal"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.details = details or {}


class NotFound(DomainError):
    code = "not_found"


class Conflict(DomainError):
    code = "version_conflict"


class RuleViolation(DomainError):
    """A request that is well formed but breaks a rule (422 with a specific code)."""

    code = "validation_error"


def invalid_cursor() -> RuleViolation:
    """A list's `cursor` that this list never issued (422 `validation_error` on `cursor`)."""
    return RuleViolation("cursor is not valid", details={"errors": [{"path": "cursor", "message": "invalid cursor"}]})


class UpstreamError(DomainError):
    """A service skillcore depends on answered badly or not at all (the model behind the draft generator)."""

    code = "upstream_error"


class UpstreamTimeout(DomainError):
    """A service skillcore calls (a hosted endpoint) did not answer within its deadline."""

    code = "upstream_timeout"


class BadRequest(DomainError):
    code = "bad_request"


class Unauthenticated(DomainError):
    code = "unauthenticated"


class Forbidden(DomainError):
    code = "forbidden"


class PayloadTooLarge(DomainError):
    code = "payload_too_large"


# Outcomes of conditional writes: db/transact.py raises TransactionFailed/ConditionFailed naming the
# operation that lost its condition, and the store or service that composed the write raises one of these.
class AlreadyExists(Conflict):
    code = "already_exists"


class VersionConflict(Conflict):
    code = "version_conflict"


class LeaseLost(Conflict):
    """A job moved on under the worker holding it (another worker, a cancel, an expired lease)."""

    code = "lease_lost"


class ConcurrentUpdate(Conflict):
    """A write kept meeting a concurrent transaction on the same items (TransactionConflict), retries spent."""

    code = "concurrent_update"


class IdempotencyKeyReused(Conflict):
    """An idempotency key (a hosted call's clientCallId) sent again with another request: nothing is done, and
    the first request's answer is not shown (db/idempotency.py's payload check)."""

    code = "idempotency_key_reused"


class QuotaExceeded(RuleViolation):
    """A per-user quota's counter would pass its limit; details say which quota and its limit."""

    code = "quota_exceeded"

    def __init__(self, message: str, *, quota: str, limit: int):
        super().__init__(message, details={"quota": quota, "limit": limit})
