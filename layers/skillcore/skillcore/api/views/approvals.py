"""Bodies of the approval routes (docs/contract.md "Approvals")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from msgspec import Meta

from skillcore.api.views import Body, Time, maybe_time, time
from skillcore.approvals.models import Approval as ApprovalRecord
from skillcore.approvals.models import ApprovalStatus


class Approval(Body, frozen=True, kw_only=True):
    approval_id: str
    endpoint_id: str
    tool_name: str
    arguments_digest: str
    # Shown to the owner only (these routes answer the owner alone); never audited or logged. The whole canonical
    # arguments (at most 64 KiB of them), never cut, hidden characters escaped (approvals/digest.py `visible`).
    arguments_preview: Annotated[str, Meta(description=(
        "The whole canonical arguments (RFC 8785, at most 64 KiB), never cut; bidi controls, invisible and other "
        "default-ignorable characters written as \\u{XXXX}. Shown to the owner only."))]
    status: ApprovalStatus
    created_at: Time
    expires_at: Time
    decided_at: Time | None
    # The endpoint as it was when asked: the approval is usable only while both are still the endpoint's.
    endpoint_version: int | None
    snapshot_fingerprint: str | None


def approval(record: ApprovalRecord, now: datetime) -> Approval:
    return Approval(
        approval_id=record.approval_id, endpoint_id=record.operation.endpoint_id,
        tool_name=record.operation.tool_name, arguments_digest=record.operation.arguments_digest,
        arguments_preview=record.arguments_preview, status=record.status_at(now), created_at=time(record.created_at),
        expires_at=time(record.expires_at), decided_at=maybe_time(record.decided_at),
        endpoint_version=record.binding.endpoint_version if record.binding else None,
        snapshot_fingerprint=record.binding.snapshot_fingerprint if record.binding else None,
    )
