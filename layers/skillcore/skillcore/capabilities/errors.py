"""Domain errors of user-defined capabilities, with the codes API.md gives them ("User-defined capabilities").

The store raises these when a transaction's named condition fails (reading the item as it was, ALL_OLD); the
service raises the same ones when its own read already shows the state, so both paths answer alike.
"""

from __future__ import annotations

from typing import Any

from skillcore.errors import AlreadyExists, Conflict, NotFound, QuotaExceeded, RuleViolation, VersionConflict

CAPABILITIES_QUOTA = "capabilities"
BINDINGS_QUOTA = "bindings"


def capability_not_found() -> NotFound:
    return NotFound("user capability not found")


def binding_not_found() -> NotFound:
    return NotFound("tool binding not found")


def name_taken() -> AlreadyExists:
    return AlreadyExists("a capability with this name already exists", code="capability_name_taken")


def binding_name_taken() -> AlreadyExists:
    return AlreadyExists("this capability already has a binding with this name", code="binding_name_taken")


def capability_active() -> Conflict:
    return Conflict("an active capability cannot be edited; deactivate it first", code="capability_active")


def capability_not_active() -> RuleViolation:
    return RuleViolation("the capability is not active", code="capability_not_active")


def binding_in_use(steps: list[int]) -> Conflict:
    return Conflict("a step of the workflow uses this binding", code="binding_in_use", details={"steps": steps})


def version_conflict(current: int) -> VersionConflict:
    return VersionConflict("the capability changed since that version", details={"currentVersion": current})


def quota_exceeded(quota: str, limit: int) -> QuotaExceeded:
    return QuotaExceeded(f"at most {limit} {quota}", quota=quota, limit=limit)


def defence_error(code: str, message: str, errors: list[dict[str, Any]]) -> RuleViolation:
    """One of the structural defences refused the input: `unsafe_text`, `unknown_reference`, `schema_not_allowed`."""
    return RuleViolation(message, code=code, details={"errors": errors})


# -- drafts (API.md "Creating a capability by conversation") -----------------------------------------

def draft_not_found() -> NotFound:
    return NotFound("capability draft not found")


def draft_revision_conflict(current: int, status: str, user_capability_id: str | None = None) -> Conflict:
    """The draft is not open at the revision given: another generate or confirm moved it on, or it expired.
    `details` says where it is now (and, once confirmed, which capability it became)."""
    details: dict[str, Any] = {"currentRevision": current, "status": status}
    if user_capability_id:
        details["userCapabilityId"] = user_capability_id
    return Conflict("the draft is not open at that revision", code="draft_revision_conflict", details=details)


def draft_has_gaps(gaps: list[dict[str, str]]) -> RuleViolation:
    return RuleViolation("the draft still has open questions; answer them with generate first",
                         code="draft_has_gaps", details={"gaps": gaps})
