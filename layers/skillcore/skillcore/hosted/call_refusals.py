"""What a hosted call answers when it is refused (hosted/calls.py's checks), and its arguments' errors: JSON
paths and keywords, never a value."""

from __future__ import annotations

from typing import Any

from skillcore.errors import FieldError, IdempotencyKeyReused, UpstreamTimeout, ValidationFailed
from skillcore.hosted import schema_bounds
from skillcore.hosted.errors import ApprovalRequired, EndpointDisabled, ToolDrifted

MAX_VALIDATION_ERRORS = 20


def endpoint_disabled() -> EndpointDisabled:
    return EndpointDisabled()


def tool_drifted(name: str, reason: str) -> ToolDrifted:
    return ToolDrifted({"toolName": name, "reason": reason})


def approval_required(approval_id: str) -> ApprovalRequired:
    return ApprovalRequired({"approvalId": approval_id})


def validation_failed(errors: list[FieldError]) -> ValidationFailed:
    return ValidationFailed("the arguments do not match the tool's input schema", errors)


def key_reused() -> IdempotencyKeyReused:
    return IdempotencyKeyReused("this clientCallId was already used for another call (another tool or other "
                                "arguments); use a new clientCallId")


def call_in_progress() -> UpstreamTimeout:
    return UpstreamTimeout("an identical call is still waiting for the endpoint")


def argument_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[FieldError]:
    """Each violation as its JSON path and keyword, never a value; bounded (hosted/schema_bounds.py): a schema
    pinned under older rules that is now outside the bounds is refused (`snapshot_invalid`), never run."""
    try:
        schema_bounds.check(schema)
    except schema_bounds.SchemaRefused as refused:
        raise schema_bounds.schema_refused(refused, None) from None
    return schema_bounds.validation_errors(schema, arguments)
