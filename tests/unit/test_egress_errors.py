"""The typed egress outcomes, and finding one inside what a library (the MCP SDK) wraps it in."""

from __future__ import annotations

import pytest

from skillcore.egress.errors import (
    REASONS,
    Refused,
    ResponseTooLarge,
    UpstreamError,
    UpstreamTimeout,
    find_egress_error,
)


def test_found_directly_in_groups_and_in_causes() -> None:
    refused = Refused("address_private")
    assert find_egress_error(refused) is refused
    timeout = UpstreamTimeout()
    group = BaseExceptionGroup("task group", [ValueError("other"), ExceptionGroup("inner", [timeout])])
    assert find_egress_error(group) is timeout
    too_large = ResponseTooLarge(1024)
    try:
        try:
            raise too_large
        except ResponseTooLarge as error:
            raise RuntimeError("the session failed") from error
    except RuntimeError as wrapped:
        assert find_egress_error(wrapped) is too_large
    assert find_egress_error(RuntimeError("nothing of ours")) is None


def test_a_cycle_of_contexts_ends() -> None:
    a, b = ValueError("a"), ValueError("b")
    a.__context__, b.__context__ = b, a
    assert find_egress_error(a) is None


def test_reasons_are_stable_codes() -> None:
    assert len(set(REASONS)) == len(REASONS)
    assert all(r.replace("_", "").isalnum() and r == r.lower() for r in REASONS)
    with pytest.raises(AssertionError):
        Refused("made_up_reason")
    assert (UpstreamTimeout().reason, ResponseTooLarge(1).reason, UpstreamError("tls", "x").reason) == (
        "timeout", "too_large", "tls")
