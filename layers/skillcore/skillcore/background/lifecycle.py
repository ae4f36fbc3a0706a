"""The background job lifecycle: one explicit state machine, and the retry policy as a pure value.

    scheduled --claim--> running --finish--> succeeded
    retrying  --claim--> running --transient error / lease expired--> retrying (attempts < max)
                         running --permanent error / attempts == max--> failed
    scheduled, retrying --cancel--> cancelled

Every transition is a conditional write on id + revision + status that bumps the revision (background/job_store.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from msgspec import Struct


class JobStatus(StrEnum):
    SCHEDULED = "scheduled"
    RUNNING = "running"
    RETRYING = "retrying"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    JobStatus.SCHEDULED: frozenset({JobStatus.RUNNING, JobStatus.CANCELLED}),
    JobStatus.RETRYING: frozenset({JobStatus.RUNNING, JobStatus.CANCELLED}),
    JobStatus.RUNNING: frozenset({JobStatus.SUCCEEDED, JobStatus.RETRYING, JobStatus.FAILED}),
    JobStatus.SUCCEEDED: frozenset(),
    JobStatus.FAILED: frozenset(),
    JobStatus.CANCELLED: frozenset(),
}

DUE = frozenset({JobStatus.SCHEDULED, JobStatus.RETRYING})
CANCELLABLE = DUE
FINAL = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED})


class IllegalTransition(ValueError):
    pass


def check_transition(current: JobStatus, target: JobStatus) -> None:
    if target not in TRANSITIONS[current]:
        raise IllegalTransition(f"{current} -> {target} is not a job transition")


class RetryPolicy(Struct, frozen=True):
    """Backoff after the n-th failed attempt: first, first*2, ... capped; permanent at max_attempts."""

    first_delay: timedelta = timedelta(minutes=5)
    max_delay: timedelta = timedelta(minutes=60)

    def delay(self, attempts: int) -> timedelta:
        # Doubled step by step, not as first * 2**n: a large attempt count would overflow timedelta.
        delay = self.first_delay
        for _ in range(max(attempts - 1, 0)):
            if delay >= self.max_delay:
                break
            delay *= 2
        return min(delay, self.max_delay)


class Retry(Struct, frozen=True):
    at: datetime


class Permanent(Struct, frozen=True):
    error_code: str


def decide(policy: RetryPolicy, *, error_code: str, transient: bool, attempts: int, max_attempts: int, now: datetime) -> Retry | Permanent:
    """What to do after attempt number `attempts` failed with `error_code`."""
    if not transient or attempts >= max_attempts:
        return Permanent(error_code)
    return Retry(now + policy.delay(attempts))
