"""Approvals, pure: the canonical digest an approval is bound to, the preview, and the derived lifecycle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcore.approvals.digest import (
    MAX_SAFE_INTEGER,
    arguments_digest,
    arguments_preview,
    canonical,
    non_finite,
)
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


I_JSON = st.recursive(
    st.none() | st.booleans() | st.text() | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), I_JSON, max_size=5))
def test_canonical_is_rfc8785_for_every_i_json_value(arguments: dict) -> None:
    assert canonical(arguments) == rfc8785.dumps(arguments)


def test_integers_past_the_double_range_keep_their_exact_digits() -> None:
    """Valid JSON (and valid for "type": "integer") but outside I-JSON: each keeps a digest of its own."""
    big = MAX_SAFE_INTEGER + 2  # as a double it would round to MAX_SAFE_INTEGER + 1
    assert canonical({"n": big, "m": [-(2**70)]}) == b'{"m":[-1180591620717411303424],"n":9007199254740993}'
    assert len({arguments_digest({"n": n}) for n in (big - 1, big, big + 1)}) == 3
    # a double names the value it holds: float(big) is 2**53, the same number as big - 1
    assert arguments_digest({"n": float(big)}) == arguments_digest({"n": big - 1})
    assert canonical({"n": 641910568744889630015526512099328}) == b'{"n":641910568744889630015526512099328}'


def test_nan_and_infinities_are_found_by_path_and_have_no_canonical_form() -> None:
    arguments = {"ok": [1.5, 2**60, True], "deep": [{"x": float("nan")}, {"y": [float("-inf")]}], "z": float("inf")}
    assert non_finite(arguments) == ["$.deep[0].x", "$.deep[1].y[0]", "$.z"]
    assert non_finite({"ok": [MAX_SAFE_INTEGER + 1, 1e300, "NaN"]}) == []
    with pytest.raises(ValueError):
        canonical({"n": float("nan")})


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
