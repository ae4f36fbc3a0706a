"""The approval record and its lifecycle.

    pending --approve--> approved --use--> used
    pending --deny-----> denied
    pending | approved --(10 minutes)--> expired   (derived from `expires_at`, never written)

Only `pending` may be decided and only `approved` may be used, both before `expires_at`; the store makes each
step a conditional write, so two racing decisions or two racing uses have one winner.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore import checks

APPROVAL_TTL = timedelta(minutes=10)
PREVIEW_MAX_CHARS = 500
_DIGEST = r"[0-9a-f]{64}"


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    USED = "used"
    EXPIRED = "expired"


STORED_STATUSES = (ApprovalStatus.PENDING, ApprovalStatus.APPROVED, ApprovalStatus.DENIED, ApprovalStatus.USED)


class ApprovalDecision(StrEnum):
    APPROVE = "approve"
    DENY = "deny"


class OperationRef(Struct, frozen=True, kw_only=True):
    """What an approval is bound to: the operation exactly, arguments by their canonical digest."""

    endpoint_id: str
    tool_name: str
    arguments_digest: str

    def __post_init__(self) -> None:
        if not checks.matches(self.arguments_digest, _DIGEST):
            raise ValueError("arguments_digest must be a SHA-256 hex digest")


class Approval(Struct, frozen=True, kw_only=True):
    approval_id: str
    user_id: str
    operation: OperationRef
    # The canonical arguments, cut to PREVIEW_MAX_CHARS: shown to the owner when deciding, never audited or logged.
    arguments_preview: str
    status: ApprovalStatus
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None = None
    used_at: datetime | None = None

    def __post_init__(self) -> None:
        force_setattr(self, "status", ApprovalStatus(self.status))
        if self.status is ApprovalStatus.EXPIRED:
            raise ValueError("expired is derived from expires_at, never stored")
        if len(self.arguments_preview) > PREVIEW_MAX_CHARS:
            raise ValueError(f"arguments_preview is at most {PREVIEW_MAX_CHARS} characters")
        if self.expires_at <= self.created_at:
            raise ValueError("an approval expires after it is created")

    def status_at(self, now: datetime) -> ApprovalStatus:
        """The status a reader sees: a pending or approved approval past its time is expired."""
        if self.status in (ApprovalStatus.PENDING, ApprovalStatus.APPROVED) and now >= self.expires_at:
            return ApprovalStatus.EXPIRED
        return self.status

    def usable_for(self, operation: OperationRef, now: datetime) -> bool:
        """Approved, unused, unexpired, and for exactly this operation."""
        return self.status_at(now) is ApprovalStatus.APPROVED and self.operation == operation
