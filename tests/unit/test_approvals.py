"""Approvals, pure: the canonical digest an approval is bound to, the preview (whole, hidden characters escaped),
the binding to the endpoint's version and fingerprint, and the derived lifecycle."""

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
    hidden,
    non_finite,
    visible,
)
from skillcore.approvals.models import (
    APPROVAL_TTL,
    MAX_CANONICAL_BYTES,
    Approval,
    ApprovalStatus,
    EndpointBinding,
    OperationRef,
)

T = datetime(2026, 12, 3, 2, 0, tzinfo=UTC)


def op(endpoint: str = "ep1", tool: str = "run_workflow", arguments: dict | None = None) -> OperationRef:
    return OperationRef(endpoint_id=endpoint, tool_name=tool, arguments_digest=arguments_digest(arguments or {"q": 1}))


BOUND = EndpointBinding(endpoint_version=3, snapshot_fingerprint="f" * 64)


def approval(status: ApprovalStatus = ApprovalStatus.PENDING, operation: OperationRef | None = None,
             binding: EndpointBinding | None = BOUND) -> Approval:
    return Approval(approval_id="A1", user_id="u1", operation=operation or op(), arguments_canonical="{}",
                    status=status, created_at=T, expires_at=T + APPROVAL_TTL, binding=binding)


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


def test_preview_is_the_whole_canonical_text_never_cut() -> None:
    assert arguments_preview({"b": "二", "a": 1}) == '{"a":1,"b":"二"}'
    long = arguments_preview({"text": "x" * 20000, "recipient": "bob@example.com"})
    assert long == '{"recipient":"bob@example.com","text":"' + "x" * 20000 + '"}'
    padded = {"aaa": "x" * 5000, "zzz_recipient": "alice"}
    assert arguments_preview(padded) != arguments_preview({**padded, "zzz_recipient": "mallory"})
    assert arguments_preview(padded).endswith('"zzz_recipient":"alice"}')


@pytest.mark.parametrize(("char", "shown"), [
    ("\u202e", "\\u{202E}"), ("\u202a", "\\u{202A}"), ("\u2066", "\\u{2066}"), ("\u2069", "\\u{2069}"),
    ("\u200e", "\\u{200E}"), ("\u200f", "\\u{200F}"), ("\u061c", "\\u{061C}"),
    ("\u200b", "\\u{200B}"), ("\u200d", "\\u{200D}"), ("\u2060", "\\u{2060}"), ("\ufeff", "\\u{FEFF}"),
    ("\u00ad", "\\u{00AD}"), ("\u034f", "\\u{034F}"), ("\ufe0f", "\\u{FE0F}"), ("\U000e0041", "\\u{E0041}"),
    ("\U000e0001", "\\u{E0001}"), ("\u3164", "\\u{3164}"), ("\u180e", "\\u{180E}"), ("\u2028", "\\u{2028}"),
    ("\u2029", "\\u{2029}"), ("\x7f", "\\u{007F}"), ("\x85", "\\u{0085}"), ("\ue000", "\\u{E000}"),
])
def test_hidden_characters_are_shown_as_escapes(char: str, shown: str) -> None:
    assert hidden(char)
    assert visible(f"a{char}b") == f"a{shown}b"


@pytest.mark.parametrize("char", ["a", "二", "é", " ", "\u00a0", "😀", "\\", "{", "\u0301"])
def test_ordinary_characters_are_shown_as_themselves(char: str) -> None:
    assert not hidden(char)
    assert visible(char) == char


def test_an_escape_written_in_an_argument_cannot_pass_for_a_hidden_character() -> None:
    """In canonical JSON a backslash is always doubled: the text `\\u{202E}` typed by a caller stays apart from
    the escape of a real U+202E."""
    typed = arguments_preview({"to": "\\u{202E}"})
    real = arguments_preview({"to": "\u202e"})
    assert typed == '{"to":"\\\\u{202E}"}' and real == '{"to":"\\u{202E}"}' and typed != real


def test_a_bidi_override_cannot_reorder_what_the_owner_reads() -> None:
    shown = arguments_preview({"recipient": "alice\u202e@evil.example\u202c", "amount": 5})
    assert shown == '{"amount":5,"recipient":"alice\\u{202E}@evil.example\\u{202C}"}'
    assert all(not hidden(c) for c in shown)


def test_pending_and_approved_expire_after_ten_minutes_decided_ones_do_not() -> None:
    later = T + timedelta(minutes=10)
    assert approval().status_at(T + timedelta(minutes=9, seconds=59)) is ApprovalStatus.PENDING
    assert approval().status_at(later) is ApprovalStatus.EXPIRED
    assert approval(ApprovalStatus.APPROVED).status_at(later) is ApprovalStatus.EXPIRED
    assert approval(ApprovalStatus.DENIED).status_at(later) is ApprovalStatus.DENIED
    assert approval(ApprovalStatus.USED).status_at(later) is ApprovalStatus.USED


def test_usable_only_approved_unexpired_and_for_the_very_operation() -> None:
    approved = approval(ApprovalStatus.APPROVED)
    assert approved.usable_for(op(), BOUND, T)
    assert not approved.usable_for(op(arguments={"q": 2}), BOUND, T)
    assert not approved.usable_for(op(tool="other"), BOUND, T)
    assert not approved.usable_for(op(endpoint="ep2"), BOUND, T)
    assert not approved.usable_for(op(), BOUND, T + APPROVAL_TTL)
    for status in (ApprovalStatus.PENDING, ApprovalStatus.DENIED, ApprovalStatus.USED):
        assert not approval(status).usable_for(op(), BOUND, T)


def test_usable_only_on_the_endpoint_version_and_snapshot_it_was_asked_on() -> None:
    approved = approval(ApprovalStatus.APPROVED)
    assert not approved.usable_for(op(), EndpointBinding(endpoint_version=4, snapshot_fingerprint="f" * 64), T)
    assert not approved.usable_for(op(), EndpointBinding(endpoint_version=3, snapshot_fingerprint="e" * 64), T)
    # one stored before approvals were bound is never usable
    assert not approval(ApprovalStatus.APPROVED, binding=None).usable_for(op(), BOUND, T)


def test_the_approval_id_changes_with_the_binding() -> None:
    from skillcore.approvals.store import approval_id

    other = EndpointBinding(endpoint_version=4, snapshot_fingerprint="f" * 64)
    assert approval_id("u1", op(), "c1", BOUND) == approval_id("u1", op(), "c1", BOUND)
    assert approval_id("u1", op(), "c1", BOUND) != approval_id("u1", op(), "c1", other)


def test_the_whole_arguments_are_kept_up_to_the_body_limit() -> None:
    whole = '{"t":"' + "x" * (MAX_CANONICAL_BYTES - 8) + '"}'
    assert approval().__class__(approval_id="A", user_id="u", operation=op(), arguments_canonical=whole,
                                status=ApprovalStatus.PENDING, created_at=T,
                                expires_at=T + APPROVAL_TTL).arguments_preview == whole


def test_records_refuse_what_cannot_be() -> None:
    with pytest.raises(ValueError):
        approval(ApprovalStatus.EXPIRED)
    with pytest.raises(ValueError):
        OperationRef(endpoint_id="e", tool_name="t", arguments_digest="not-a-digest")
    with pytest.raises(ValueError):
        Approval(approval_id="A", user_id="u", operation=op(), arguments_canonical="x" * (MAX_CANONICAL_BYTES + 1),
                 status=ApprovalStatus.PENDING, created_at=T, expires_at=T + APPROVAL_TTL)
