"""The background job lifecycle and the retry policy, on their own: every pair of states of the transition
table (allowed or refused), and `decide()` for each attempt, error kind and the 60-minute cap."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from skillcore.background.lifecycle import (
    CANCELLABLE,
    DUE,
    FINAL,
    TRANSITIONS,
    IllegalTransition,
    JobStatus,
    Permanent,
    Retry,
    RetryPolicy,
    check_transition,
    decide,
)

S = JobStatus
NOW = datetime(2026, 12, 3, 2, 0, tzinfo=UTC)

# The lifecycle as the module's docstring draws it, written out independently of TRANSITIONS.
ALLOWED = {
    (S.SCHEDULED, S.RUNNING), (S.SCHEDULED, S.CANCELLED),
    (S.RETRYING, S.RUNNING), (S.RETRYING, S.CANCELLED),
    (S.RUNNING, S.SUCCEEDED), (S.RUNNING, S.RETRYING), (S.RUNNING, S.FAILED),
}
ALL_PAIRS = list(itertools.product(JobStatus, JobStatus))


def test_the_table_covers_every_status() -> None:
    assert set(TRANSITIONS) == set(JobStatus)


@pytest.mark.parametrize(("current", "target"), sorted(ALLOWED))
def test_allowed_transition(current: JobStatus, target: JobStatus) -> None:
    check_transition(current, target)  # raises if refused
    assert target in TRANSITIONS[current]


@pytest.mark.parametrize(("current", "target"), [p for p in ALL_PAIRS if p not in ALLOWED])
def test_refused_transition(current: JobStatus, target: JobStatus) -> None:
    with pytest.raises(IllegalTransition, match=f"{current} -> {target}"):
        check_transition(current, target)


def test_refused_pairs_include_every_self_loop_and_every_move_out_of_a_final_state() -> None:
    refused = {p for p in ALL_PAIRS if p not in ALLOWED}
    assert {(s, s) for s in JobStatus} <= refused
    assert {(f, t) for f in FINAL for t in JobStatus} <= refused
    assert (S.RUNNING, S.CANCELLED) in refused  # a running job offers no cancel
    assert (S.SCHEDULED, S.SUCCEEDED) in refused  # nothing finishes without being claimed


def test_named_sets() -> None:
    assert {S.SCHEDULED, S.RETRYING} == DUE
    assert CANCELLABLE == DUE
    assert {S.SUCCEEDED, S.FAILED, S.CANCELLED} == FINAL
    assert all(not TRANSITIONS[s] for s in FINAL)
    assert all(S.RUNNING in TRANSITIONS[s] for s in DUE)


# ------------------------------------------------------------------------------------------- the retry policy

@pytest.mark.parametrize(("attempts", "minutes"), [(0, 5), (1, 5), (2, 10), (3, 20), (4, 40), (5, 60), (6, 60), (40, 60)])
def test_delay_doubles_from_five_minutes_and_stops_at_sixty(attempts: int, minutes: int) -> None:
    assert RetryPolicy().delay(attempts) == timedelta(minutes=minutes)


def test_delay_with_another_policy() -> None:
    policy = RetryPolicy(first_delay=timedelta(seconds=30), max_delay=timedelta(minutes=2))
    assert [policy.delay(n) for n in range(1, 6)] == [timedelta(seconds=s) for s in (30, 60, 120, 120, 120)]


@pytest.mark.parametrize(("attempts", "minutes"), [(1, 5), (2, 10)])
def test_transient_error_before_the_last_attempt_is_retried_after_the_backoff(attempts: int, minutes: int) -> None:
    outcome = decide(RetryPolicy(), error_code="transient_error", transient=True, attempts=attempts,
                     max_attempts=3, now=NOW)
    assert outcome == Retry(NOW + timedelta(minutes=minutes))


@pytest.mark.parametrize("attempts", [3, 4])
def test_transient_error_on_or_after_the_last_attempt_is_permanent(attempts: int) -> None:
    outcome = decide(RetryPolicy(), error_code="transient_error", transient=True, attempts=attempts,
                     max_attempts=3, now=NOW)
    assert outcome == Permanent("transient_error")


@pytest.mark.parametrize("attempts", [1, 2, 3])
def test_permanent_error_is_never_retried(attempts: int) -> None:
    outcome = decide(RetryPolicy(), error_code="grant_missing", transient=False, attempts=attempts,
                     max_attempts=3, now=NOW)
    assert outcome == Permanent("grant_missing")


def test_backoff_is_capped_at_sixty_minutes_however_many_attempts_remain() -> None:
    retries = [
        decide(RetryPolicy(), error_code="lease_expired", transient=True, attempts=n, max_attempts=10, now=NOW)
        for n in range(1, 10)
    ]
    delays = [r.at - NOW for r in retries if isinstance(r, Retry)]
    assert len(delays) == 9
    assert delays == [timedelta(minutes=m) for m in (5, 10, 20, 40, 60, 60, 60, 60, 60)]
    assert decide(RetryPolicy(), error_code="lease_expired", transient=True, attempts=10, max_attempts=10,
                  now=NOW) == Permanent("lease_expired")


def test_a_single_attempt_job_fails_on_its_first_transient_error() -> None:
    assert decide(RetryPolicy(), error_code="x", transient=True, attempts=1, max_attempts=1, now=NOW) == Permanent("x")
