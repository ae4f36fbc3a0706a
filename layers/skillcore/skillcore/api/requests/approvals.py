"""Request models of the approval routes."""

from skillcore.api.requests import Paging
from skillcore.approvals.models import ApprovalDecision, ApprovalStatus
from skillcore.shapes import Strict


class ApprovalQuery(Paging):
    status: ApprovalStatus | None = None


class DecideApproval(Strict):
    decision: ApprovalDecision
