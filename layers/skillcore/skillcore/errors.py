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


class BadRequest(DomainError):
    code = "bad_request"


class Unauthenticated(DomainError):
    code = "unauthenticated"


class Forbidden(DomainError):
    code = "forbidden"


class PayloadTooLarge(DomainError):
    code = "payload_too_large"


# Store-level outcomes of conditional writes, translated from ConditionalCheckFailedException in db/dynamo.py.
class AlreadyExists(Conflict):
    code = "already_exists"


class VersionConflict(Conflict):
    code = "version_conflict"
