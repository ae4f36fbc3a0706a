"""Approvals, pure: the canonical digest an approval is bound to, the preview, and the derived lifecycle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from skillcore.approvals.digest import arguments_digest, arguments_preview, canonical
from skillcore.approvals.models import (
    APPROVAL_TTL,
    PREVIEW_MAX_CHARS,
    Approval,
    ApprovalStatus,
    OperationRef,
)

T = datetime(2026, 12, 3, 2, 0, tzinfo=UTC)


def op(endpoint: str = "ep1", tool: str = "run_workflow", arguments: dict | None = None) -> OperationRef:
    return OperationRef(endpoint_id=endpoint, tool_name=tool, arguments_digest=arguments_digest(arguments or {"q": 1}))


def approval(status: ApprovalStatus = ApprovalStatus.PENDING, operation: OperationRef | None = None) -> Approval:
    return Approval(approval_id="A1", user_id="u1", operation=operation or op(), arguments_preview="{}",
                    status=status, created_at=T, expires_at=T + APPROVAL_TTL)


def test_digest_ignores_key_order_and_number_spelling() -> None:
    assert arguments_digest({"a": 1, "b": [1.0, "x"]}) == arguments_digest({"b": [1, "x"], "a": 1.0})
    assert canonical({"b": 1, "a": {"d": 2, "c": 3}}) == b'{"a":{"c":3,"d":2},"b":1}'


@pytest.mark.parametrize("other", [{"a": 2}, {"a": "1"}, {"a": 1, "b": None}, {"A": 1}, {"a": [1]}])
def test_digest_differs_for_any_other_arguments(other: dict) -> None:
    assert arguments_digest({"a": 1}) != arguments_digest(other)


def test_preview_is_the_canonical_text_cut_to_its_limit() -> None:
    assert arguments_preview({"b": "二", "a": 1}) == '{"a":1,"b":"二"}'
    long = arguments_preview({"text": "x" * 2000})
    assert len(long) == PREVIEW_MAX_CHARS and long.endswith("…")


def test_pending_and_approved_expire_after_ten_minutes_decided_ones_do_not() -> None:
    later = T + timedelta(minutes=10)
    assert approval().status_at(T + timedelta(minutes=9, seconds=59)) is ApprovalStatus.PENDING
    assert approval().status_at(later) is ApprovalStatus.EXPIRED
    assert approval(ApprovalStatus.APPROVED).status_at(later) is ApprovalStatus.EXPIRED
    assert approval(ApprovalStatus.DENIED).status_at(later) is ApprovalStatus.DENIED
    assert approval(ApprovalStatus.USED).status_at(later) is ApprovalStatus.USED


def test_usable_only_approved_unexpired_and_for_the_very_operation() -> None:
    approved = approval(ApprovalStatus.APPROVED)
    assert approved.usable_for(op(), T)
    assert not approved.usable_for(op(arguments={"q": 2}), T)
    assert not approved.usable_for(op(tool="other"), T)
    assert not approved.usable_for(op(endpoint="ep2"), T)
    assert not approved.usable_for(op(), T + APPROVAL_TTL)
    for status in (ApprovalStatus.PENDING, ApprovalStatus.DENIED, ApprovalStatus.USED):
        assert not approval(status).usable_for(op(), T)


def test_records_refuse_what_cannot_be() -> None:
    with pytest.raises(ValueError):
        approval(ApprovalStatus.EXPIRED)
    with pytest.raises(ValueError):
        OperationRef(endpoint_id="e", tool_name="t", arguments_digest="not-a-digest")
    with pytest.raises(ValueError):
        Approval(approval_id="A", user_id="u", operation=op(), arguments_preview="x" * (PREVIEW_MAX_CHARS + 1),
                 status=ApprovalStatus.PENDING, created_at=T, expires_at=T + APPROVAL_TTL)
