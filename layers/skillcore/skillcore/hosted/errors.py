"""Domain errors of hosted external workflows, with the codes docs/contract.md gives them ("Hosted external workflows")."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from skillcore.errors import Conflict, RuleViolation


class EndpointNameTaken(Conflict):
    code = "endpoint_name_taken"
    default_message = "an endpoint with this name already exists"


class UrlNotAllowedDetails(TypedDict):
    reason: str  # one of egress/errors.py REASONS


class UrlNotAllowed(RuleViolation):
    code = "url_not_allowed"
    default_message = "the URL is not allowed"
    details: UrlNotAllowedDetails

    def __init__(self, details: UrlNotAllowedDetails) -> None:
        super().__init__(None, details)


class SnapshotInvalidDetails(TypedDict):
    rule: str
    tool: NotRequired[str]
    path: NotRequired[str]  # a JSON Pointer inside the tool's input schema (hosted/schema_bounds.py)
    keyword: NotRequired[str]


class SnapshotInvalid(RuleViolation):
    code = "snapshot_invalid"
    details: SnapshotInvalidDetails

    def __init__(self, message: str, details: SnapshotInvalidDetails) -> None:
        super().__init__(message, details)


class EndpointDisabled(Conflict):
    code = "endpoint_disabled"
    default_message = "the endpoint is disabled"


class ToolDriftedDetails(TypedDict):
    toolName: str
    reason: str


class ToolDrifted(Conflict):
    code = "tool_drifted"
    default_message = "this tool cannot be called now"
    details: ToolDriftedDetails

    def __init__(self, details: ToolDriftedDetails) -> None:
        super().__init__(None, details)


class ApprovalRequiredDetails(TypedDict):
    approvalId: str


class ApprovalRequired(Conflict):
    """The call needs the owner's approval first; `details.approvalId` is the pending approval to decide."""

    code = "approval_required"
    default_message = "this call needs your approval first"
    details: ApprovalRequiredDetails

    def __init__(self, details: ApprovalRequiredDetails) -> None:
        super().__init__(None, details)
