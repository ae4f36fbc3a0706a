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
from skillcore.approvals.digest import visible

APPROVAL_TTL = timedelta(minutes=10)
# The canonical arguments an approval keeps whole: at most the call body's own limit (64 KiB, api/app.py's
# payload_too_large), so an item stays far below DynamoDB's 400 KB; a call whose canonical arguments are larger
# is refused before anything is asked (hosted/calls.py).
MAX_CANONICAL_BYTES = 64 * 1024
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


class EndpointBinding(Struct, frozen=True, kw_only=True):
    """The endpoint as it was when the approval was asked for: its version (every change of its status, a tool's
    switch, its pending or pinned tool list moves it) and its pinned snapshot's fingerprint. An approval is usable
    only while both are still the endpoint's."""

    endpoint_version: int
    snapshot_fingerprint: str


class Approval(Struct, frozen=True, kw_only=True):
    approval_id: str
    user_id: str
    operation: OperationRef
    # The whole canonical arguments (RFC 8785, digest.py), at most MAX_CANONICAL_BYTES of UTF-8: shown to the
    # owner when deciding (as `arguments_preview`), never audited or logged.
    arguments_canonical: str
    status: ApprovalStatus
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None = None
    used_at: datetime | None = None
    # None only on an approval stored before approvals were bound: never usable.
    binding: EndpointBinding | None = None

    def __post_init__(self) -> None:
        force_setattr(self, "status", ApprovalStatus(self.status))
        if self.status is ApprovalStatus.EXPIRED:
            raise ValueError("expired is derived from expires_at, never stored")
        if len(self.arguments_canonical.encode("utf-8")) > MAX_CANONICAL_BYTES:
            raise ValueError(f"arguments_canonical is at most {MAX_CANONICAL_BYTES} bytes")
        if self.expires_at <= self.created_at:
            raise ValueError("an approval expires after it is created")

    @property
    def arguments_preview(self) -> str:
        """What its owner reads: the whole canonical arguments, hidden characters as visible escapes."""
        return visible(self.arguments_canonical)

    def status_at(self, now: datetime) -> ApprovalStatus:
        """The status a reader sees: a pending or approved approval past its time is expired."""
        if self.status in (ApprovalStatus.PENDING, ApprovalStatus.APPROVED) and now >= self.expires_at:
            return ApprovalStatus.EXPIRED
        return self.status

    def usable_for(self, operation: OperationRef, binding: EndpointBinding, now: datetime) -> bool:
        """Approved, unused, unexpired, for exactly this operation, on the endpoint as it was approved."""
        return (self.status_at(now) is ApprovalStatus.APPROVED and self.operation == operation
                and self.binding == binding)
