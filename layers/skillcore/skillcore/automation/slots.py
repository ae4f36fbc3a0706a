"""Claiming a due slot and scheduling what comes after it.

The job item is its own queue entry and lease. A claim is one conditional write on job id + revision that
records the slot (`currentSlot`) and moves `nextRunAt` a lease ahead, so overlapping scans run a slot once
(dedupe key: job id + slot, also the run record's key) and a worker that dies leaves a job that is due
again when the lease ends, to retry the same slot. A job that missed several slots runs once, for the
latest. Transient failures retry the same slot with the background backoff while the next slot is still
ahead; the run record, the job's next state and the run's audit events are written in one transaction.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from msgspec import Struct, field
from msgspec.structs import replace

from skillcore.automation import store
from skillcore.automation.models import AutomationJob, AutomationRun, RunStatus
from skillcore.automation.schedule import Schedule, ScheduleType, latest_slot_at_or_before, next_run
from skillcore.background.lifecycle import RetryPolicy
from skillcore.clock import to_sort_time
from skillcore.db.dynamo import Db
from skillcore.db.errors import ConditionFailed, TransactionCanceled
from skillcore.db.transact import Op, transact, write
from skillcore.errors import ConcurrentUpdate
from skillcore.ids import stable_id
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditEvent

LEASE = timedelta(minutes=2)
MAX_SLOT_ATTEMPTS = 3


class RunOutcome(Struct):
    status: RunStatus
    error_code: str | None = None
    conversation_ids: list[str] = field(default_factory=list)
    transient: bool = False


def schedule_of(job: AutomationJob) -> Schedule:
    return Schedule(schedule_type=ScheduleType(job.schedule_type), local_time=job.local_time, weekday=job.weekday,
                    timezone=job.timezone)


def slot_delay_ms(slot: datetime, ended: datetime) -> int:
    """From the slot to the run's end, in ms (0 for a run that ended before its slot, a skewed clock)."""
    return max(0, int((ended - slot).total_seconds() * 1000))


def run_id(job: AutomationJob, slot: datetime) -> str:
    return stable_id(job.job_id, to_sort_time(slot))


def claim(db: Db, job: AutomationJob, now: datetime) -> AutomationJob | None:
    """The job with its slot claimed (retrying the current slot while attempts and time allow), or None
    when another scan won it."""
    schedule = schedule_of(job)
    retrying = (
        job.current_slot is not None and job.slot_attempts < MAX_SLOT_ATTEMPTS
        and next_run(schedule, job.current_slot) > now
    )
    if retrying:
        assert job.current_slot is not None
        slot, attempts = job.current_slot, job.slot_attempts + 1
    else:
        due = next_run(schedule, job.current_slot) if job.current_slot else job.next_run_at
        slot, attempts = latest_slot_at_or_before(schedule, min(due, now), now), 1
    claimed = replace(job, current_slot=slot, slot_attempts=attempts, next_run_at=now + LEASE,
                      revision=job.revision + 1, updated_at=now)
    try:
        write(db, Op("automation_job", store.replace_job_op(db, claimed, expected_revision=job.revision)))
    except ConditionFailed:
        return None  # another scan won this slot
    return claimed


def finish(
    db: Db, retry: RetryPolicy, job: AutomationJob, slot: datetime, now: datetime, outcome: RunOutcome,
    events: list[AuditEvent], *, ended: datetime | None = None,
) -> None:
    """Records the slot's run and moves the job on: to a retry of the same slot, or to its next slot.
    `ended`: when the run ended (the scan's "now" plus the time the run took; default `now`); the record keeps
    it as finishedAt and the slot delay (slot to end) as slotDelayMs."""
    ended = ended or now
    schedule = schedule_of(job)
    regular_next = next_run(schedule, max(slot, now))
    retry_at = now + retry.delay(job.slot_attempts)
    keep_slot = (
        outcome.status is RunStatus.FAILED and outcome.transient
        and job.slot_attempts < MAX_SLOT_ATTEMPTS and retry_at < regular_next
    )
    updated = replace(
        job,
        next_run_at=retry_at if keep_slot else regular_next,
        current_slot=slot if keep_slot else None,
        slot_attempts=job.slot_attempts if keep_slot else 0,
        last_run_at=now, last_run_status=outcome.status, revision=job.revision + 1, updated_at=now,
    )
    run = AutomationRun(
        job_id=job.job_id, run_id=run_id(job, slot), scheduled_slot=slot,
        status=outcome.status, error_code=outcome.error_code, conversation_ids=tuple(outcome.conversation_ids),
        attempts=job.slot_attempts, started_at=now, finished_at=ended,
        slot_delay_ms=slot_delay_ms(slot, ended),
    )
    ops = [
        Op("automation_job", store.replace_job_op(db, updated, expected_revision=job.revision)),
        Op("run", store.put_run_op(db, run)),
        *(Op("audit", audit_store.put_audit_op(db, e)) for e in events),
    ]
    try:
        transact(db, ops)
    except (TransactionCanceled, ConcurrentUpdate):
        # The user edited or deleted the job meanwhile: their change wins; the run record still counts.
        write(db, Op("run", store.put_run_op(db, run)))
