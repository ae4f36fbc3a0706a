"""Domain errors of per-operation approvals (docs/contract.md "Approvals")."""

from __future__ import annotations

from typing import TypedDict

from skillcore.errors import Conflict


class ApprovalNotPendingDetails(TypedDict):
    status: str  # the approval's status now (approved, denied, used, expired)


class ApprovalNotPending(Conflict):
    code = "approval_not_pending"
    details: ApprovalNotPendingDetails

    def __init__(self, message: str, details: ApprovalNotPendingDetails) -> None:
        super().__init__(message, details)
