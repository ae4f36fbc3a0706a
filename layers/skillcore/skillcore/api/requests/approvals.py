"""Request models of the approval routes."""

from skillcore.api.requests import Paging, Strict
from skillcore.approvals.models import ApprovalDecision, ApprovalStatus


class ApprovalQuery(Paging):
    status: ApprovalStatus | None = None


class DecideApproval(Strict):
    decision: ApprovalDecision
