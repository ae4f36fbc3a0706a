"""The background worker: recover expired leases, claim due jobs in batches, run each through its
registered handler with the policy re-checked right before the side effect, then finish or retry.

Only the worker whose conditional claim succeeded runs a job. DynamoDB requests per job (measured 6.06
by `make bench`): the claim (1 UpdateItem), the re-check of grants and switches (1 BatchGetItem), the
message with its count (1 TransactWriteItems), the forward-only summary and the agent's last reply
(2 UpdateItems), the completion with its audit events (1 TransactWriteItems), plus the due-index Query
shared by a batch.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from skillcore import faults
from skillcore.background import job_store
from skillcore.background.lifecycle import DUE, JobStatus, Permanent, RetryPolicy, decide
from skillcore.background.models import BackgroundJob
from skillcore.clock import to_sort_time
from skillcore.conversations import agent_store, conversation_store, message_store
from skillcore.conversations.models import Message, Origin, Role, preview
from skillcore.db.dynamo import Db
from skillcore.db.errors import ConditionFailed, StoreError, TransactionCanceled, TransactionFailed
from skillcore.db.records import ScanFailures, UnreadableRecord
from skillcore.db.transact import Op, transact, write
from skillcore.errors import ConcurrentUpdate
from skillcore.ids import new_id
from skillcore.observability import background_job, job_keys, logger
from skillcore.policy import audit_store, grant_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.gate import PolicyInput, scope_candidates
from skillcore.policy.gate import decide as policy_decide
from skillcore.policy.grants import PermissionGrant
from skillcore.skills.background import BackgroundPorts, BackgroundRegistry
from skillcore.work.drain import DEFAULT_BATCH, Drain, Handled, ScanSummary, drain_all
from skillcore.work.fanout import DEFAULT_CONCURRENCY


class _Delivery:
    """`done` once the job's message exists: from then on the job can only succeed. `audited` once this
    attempt's `allowed` decision was written, in the message's own transaction: a worker that dies right
    after its message leaves the audit of the attempt that wrote it complete."""

    done = False
    audited = False


class TransientJobError(Exception):
    """A failure worth retrying (throttling, a timeout, an injected transient fault)."""


class Worker:
    def __init__(
        self, db: Db, registry: BackgroundRegistry, *, batch_size: int = DEFAULT_BATCH,
        retry: RetryPolicy | None = None, rng: random.Random | None = None, concurrency: int = DEFAULT_CONCURRENCY,
    ):
        self._db = db
        self._registry = registry
        self._retry = retry or RetryPolicy()
        self._rng = rng or random.Random()
        self._drain = Drain(batch_size=batch_size, concurrency=concurrency, rng=self._rng)

    # -- the scan: this kind of due work as the drain engine's source (work/drain.py) -------------------
    kind = "background"

    def scan(self, now: datetime, remaining_ms: Callable[[], int] = lambda: 10**9,
             failures: ScanFailures | None = None) -> ScanSummary:
        """Every shard in one invocation (the bench and the tests' scanners). `failures` collects the items
        this scan skipped (one job's failure never stops the others)."""
        summary = ScanSummary()
        drain_all(self, self._db.shards.read, now, remaining_ms, summary,
                  failures if failures is not None else ScanFailures(), self._rng)
        return summary

    def probe(self, shard_no: int, now: datetime) -> tuple[bool, bool]:
        return job_store.probe(self._db, shard_no, now)

    def work_shard(self, shard_no: int, now: datetime, remaining_ms: Callable[[], int], summary: ScanSummary,
                   failures: ScanFailures, *, yield_on_race: bool = False, since: float | None = None) -> bool:
        """Claims and runs the due jobs of one shard while time remains (Drain.shard says when it stops). The
        worker's `concurrency` (settings.worker_concurrency) bounds how many of a batch run at once."""
        return self._drain.shard(self, shard_no, now, remaining_ms, summary, failures, yield_on_race=yield_on_race,
                                 since=since)

    def candidates(self, shard_no: int, now: datetime, limit: int) -> list[job_store.Candidate | UnreadableRecord]:
        return job_store.due_candidates(self._db, shard_no, now, limit=limit)

    def handle(self, candidate: job_store.Candidate | UnreadableRecord, now: datetime, summary: ScanSummary,
               failures: ScanFailures, since: float) -> Handled:
        """One candidate: claimed and run, or skipped (isolated: logged and counted, the scan goes on)."""
        if isinstance(candidate, UnreadableRecord):
            return Handled(progress=self._skip(failures, candidate.item_id, candidate, now))
        gained = 0
        try:
            job = self.claim(candidate, now, summary)
            if job is None:
                return Handled(raced=summary.lost_races > 0)
            gained = 1
            with job_keys(job_id=job.job_id, skill_id=job.skill_id):
                self.run(job, now, summary)
        except Exception as error:  # noqa: BLE001 - isolated: logged, counted, the scan goes on
            gained += self._skip(failures, candidate.job_id, error, now)
        return Handled(progress=gained)

    def recover(self, now: datetime, summary: ScanSummary, failures: ScanFailures | None = None) -> None:
        """Running jobs whose lease expired: their worker died. Retry them (or fail them at maxAttempts)."""
        failures = failures if failures is not None else ScanFailures()
        for shard_no in range(self._db.shards.read):
            self.recover_shard(shard_no, now, summary, failures)

    def recover_shard(self, shard_no: int, now: datetime, summary: ScanSummary, failures: ScanFailures) -> None:
        for candidate in job_store.expired_leases(self._db, shard_no, now, limit=100):
            if isinstance(candidate, UnreadableRecord):
                self._skip(failures, candidate.item_id, candidate, now)
                continue
            try:
                self._recover_one(candidate, now, summary)
            except Exception as error:  # noqa: BLE001 - isolated: logged, counted, the scan goes on
                self._skip(failures, candidate.job_id, error, now)

    def _recover_one(self, candidate: job_store.Candidate, now: datetime, summary: ScanSummary) -> None:
        job = job_store.get_job(self._db, candidate.job_id)
        if job is None or job.status is not JobStatus.RUNNING or (
            job.lease_expires_at is not None and job.lease_expires_at >= now
        ):
            return
        if self.delivered(job):
            # Its worker died after delivering: the job succeeded; finish its bookkeeping.
            self._repair_summary_quietly(job, now)
            self._succeed(job, now, summary, [], reason="already_delivered")
            summary.recovered += 1
            background_job("recovered", "already_delivered")
            return
        if self._fail_attempt(job, now, "lease_expired", transient=True, summary=summary):
            summary.recovered += 1
            background_job("recovered", "lease_expired")

    def _skip(self, failures: ScanFailures, job_id: str, error: BaseException, now: datetime) -> int:
        """Records a job this scan cannot handle; 1 if it was new to this scan (progress), else 0."""
        return int(failures.record(job_store.JOB_KIND, job_id, error,
                                   quarantine=lambda item_id: job_store.quarantine(self._db, item_id, now)))

    def claim(self, candidate: job_store.Candidate, now: datetime, summary: ScanSummary) -> BackgroundJob | None:
        if candidate.status not in DUE:
            return None
        try:
            job = job_store.apply(self._db, job_store.claim_op(self._db, candidate, now))
        except job_store.LeaseLost as lost:
            summary.lost_races += 1
            if lost.details.get("status") == JobStatus.CANCELLED.value:
                summary.cancelled += 1
            return None
        summary.claimed += 1
        return job

    # -- one job ---------------------------------------------------------------------------------------
    def run(self, job: BackgroundJob, now: datetime, summary: ScanSummary) -> None:
        # A retried job may already have written its message (its worker died, or failed, afterwards). A
        # delivered message means the job succeeded: finish the bookkeeping, never re-check or re-send.
        if job.attempts > 1 and self.delivered(job):
            self._repair_summary(job, now)
            return self._succeed(job, now, summary, [], reason="already_delivered")
        definition = self._registry.get(job.skill_id, job.skill_version)
        if definition is None:
            return self._deny(job, now, "version_missing", summary)
        disabled, grants = self._recheck_state(job)
        if job.skill_id in disabled:
            return self._deny(job, now, "skill_disabled", summary)
        decision = policy_decide(PolicyInput(
            user_id=job.user_id, skill_id=job.skill_id, skill_version=job.skill_version,
            requirements=definition.manifest.permissions, action="background.execute", agent_id=job.agent_id,
            target_id=job.conversation_id, grants=grants,
        ))
        if not decision.allowed:
            return self._deny(job, now, decision.reason.value, summary, missing=decision.missing)
        allowed = self._event(job, now, Decision.ALLOWED, decision.reason.value,
                              AuditMetadata(matched_grant_ids=tuple(g.grant_id for g in decision.matched_grants),
                                            job_id=job.job_id, attempt=job.attempts), scope=decision.scope)
        try:
            payload = definition.payload_model.model_validate(job.payload)
        except ValidationError:
            return self._deny(job, now, "invalid_payload", summary)
        delivery = _Delivery()
        try:
            faults.hit(faults.FaultPoint.BACKGROUND_BEFORE_SIDE_EFFECT)
            definition.execute(payload, self._ports(job, now, delivery, allowed))
        except faults.InjectedCrash:
            raise
        except Exception as error:  # noqa: BLE001 - classified below; never shown, never invented around
            logger.warning("background attempt failed", extra={"job_id": job.job_id, "error_type": type(error).__name__})
            if delivery.done:
                # The message is out: the job succeeded. Only the summary may lag, and it is repaired
                # here if possible, else by the conversation's next message (it only moves forward).
                self._repair_summary_quietly(job, now)
                return self._succeed(job, now, summary, [] if delivery.audited else [allowed], reason="succeeded")
            transient = isinstance(
                error, faults.InjectedTransientError | TransientJobError | StoreError | ConcurrentUpdate
            )
            code = "transient_error" if transient else "handler_error"
            self._fail_attempt(job, now, code, transient=transient, summary=summary, pending=[allowed])
            return
        self._succeed(job, now, summary, [] if delivery.audited else [allowed], reason="succeeded")

    def _succeed(self, job: BackgroundJob, now: datetime, summary: ScanSummary, pending: list[AuditEvent],
                 *, reason: str) -> None:
        done = self._event(job, now, Decision.SUCCEEDED, reason, AuditMetadata(job_id=job.job_id, attempt=job.attempts))
        op = job_store.transition_op(
            self._db, job.job_id, revision=job.revision, current=JobStatus.RUNNING, target=JobStatus.SUCCEEDED,
            now=now, sets={"completedAt": to_sort_time(now)}, removes=(*job_store.LEASE_FIELDS, "lastErrorCode"),
        )
        if self._commit(op, [*pending, done]):
            summary.succeeded += 1
            background_job("succeeded", reason)
        else:
            summary.lost_races += 1

    def delivered(self, job: BackgroundJob) -> bool:
        """Whether the job's message exists (its id is the job id): one consistent GetItem."""
        return message_store.exists(self._db, job.conversation_id, job.job_id)

    def _recheck_state(self, job: BackgroundJob) -> tuple[frozenset[str], tuple[PermissionGrant, ...]]:
        """The user's switches and the grants that could apply, in one BatchGetItem."""
        definition = self._registry.get(job.skill_id, job.skill_version)
        assert definition is not None
        grant_keys = [
            grant_store.grant_key(job.user_id, job.skill_id, p.code, scope)
            for p in definition.manifest.permissions for scope in scope_candidates(job.agent_id)
        ]
        return grant_store.read_policy_state(self._db, job.user_id, grant_keys)

    def _ports(self, job: BackgroundJob, now: datetime, delivery: _Delivery, allowed: AuditEvent) -> BackgroundPorts:
        def write_agent_message(text: str) -> None:
            message = Message(
                message_id=job.job_id, conversation_id=job.conversation_id, role=Role.ASSISTANT,
                agent_id=job.agent_id, text=text, origin=Origin.BACKGROUND, created_at=now,
            )
            # The message, its count and the decision that allowed it, atomically: a second write (a retry)
            # changes none of them, and no message exists without the `allowed` event of its attempt.
            try:
                transact(self._db, [
                    Op("message", message_store.put_message_op(self._db, message, job.user_id)),
                    Op("count", conversation_store.count_messages_op(self._db, job.user_id, job.conversation_id, added=1)),
                    Op("allowed", audit_store.put_audit_op(self._db, allowed)),
                ])
                delivery.audited = True
            except TransactionFailed as failed:
                if failed.failed("message") is None:
                    raise
                logger.info("background message already written", extra={"job_id": job.job_id})
            delivery.done = True
            faults.hit(faults.FaultPoint.BACKGROUND_AFTER_MESSAGE)
            self._repair_summary(job, now, text)

        return BackgroundPorts(write_agent_message=write_agent_message)

    def _repair_summary_quietly(self, job: BackgroundJob, now: datetime) -> None:
        try:
            self._repair_summary(job, now)
        except StoreError as error:
            logger.warning("summary repair deferred", extra={"job_id": job.job_id, "error_code": error.code})

    def _repair_summary(self, job: BackgroundJob, now: datetime, text: str | None = None) -> None:
        """Moves the conversation summary and the agent's last reply forward to this message (never back);
        run after every write and again by a retry, it repairs a worker that died in between."""
        if text is None:
            message = message_store.get_message(self._db, job.conversation_id, job.job_id)
            if message is None:
                return
            text, now = message.text, message.created_at
        conversation_store.advance_summary(self._db, job.user_id, job.conversation_id, at=now, preview=preview(text))
        agent_store.advance_last_reply(self._db, job.user_id, job.agent_id, now)

    # -- endings ---------------------------------------------------------------------------------------
    def _deny(self, job: BackgroundJob, now: datetime, reason: str, summary: ScanSummary, missing: tuple[str, ...] = ()) -> None:
        """A permanent refusal before any side effect: failed, no retry, no message."""
        event = self._event(job, now, Decision.DENIED, reason,
                            AuditMetadata(job_id=job.job_id, attempt=job.attempts, missing_permissions=missing))
        op = job_store.transition_op(
            self._db, job.job_id, revision=job.revision, current=JobStatus.RUNNING, target=JobStatus.FAILED, now=now,
            sets={"lastErrorCode": reason, "completedAt": to_sort_time(now)}, removes=job_store.LEASE_FIELDS,
        )
        if self._commit(op, [event]):
            summary.failed += 1
            background_job("failed", reason)
        else:
            summary.lost_races += 1

    def _fail_attempt(
        self, job: BackgroundJob, now: datetime, error_code: str, *, transient: bool, summary: ScanSummary,
        pending: list[AuditEvent] | None = None,
    ) -> bool:
        """Records a failed attempt: retrying after the backoff, or failed for good. False if the job moved on."""
        outcome = decide(self._retry, error_code=error_code, transient=transient, attempts=job.attempts,
                         max_attempts=job.max_attempts, now=now)
        events = [*(pending or []), self._event(
            job, now, Decision.FAILED, error_code, AuditMetadata(job_id=job.job_id, attempt=job.attempts, error_code=error_code)
        )]
        if isinstance(outcome, Permanent):
            target, sets = JobStatus.FAILED, {"lastErrorCode": error_code, "completedAt": to_sort_time(now)}
        else:
            target, sets = JobStatus.RETRYING, job_store.retry_sets(job.job_id, outcome.at, error_code, self._db.shards.write)
        op = job_store.transition_op(
            self._db, job.job_id, revision=job.revision, current=JobStatus.RUNNING, target=target, now=now,
            sets=sets, removes=job_store.LEASE_FIELDS,
        )
        if not self._commit(op, events):
            summary.lost_races += 1
            return False
        if target is JobStatus.FAILED:
            summary.failed += 1
        else:
            summary.retried += 1
        background_job("failed" if target is JobStatus.FAILED else "retried", error_code)
        return True

    def _commit(self, op: dict[str, Any], events: list[AuditEvent]) -> bool:
        """The job transition and its audit events, atomically. False when the job moved on meanwhile."""
        try:
            if not events:
                write(self._db, Op("job", op))
            else:
                transact(self._db, [Op("job", op), *(Op("audit", audit_store.put_audit_op(self._db, e)) for e in events)])
        except (ConditionFailed, TransactionCanceled, ConcurrentUpdate):
            return False  # the job moved on (or the transaction kept being cancelled): left to its lease
        return True

    def _event(self, job: BackgroundJob, now: datetime, decision: Decision, reason: str, metadata: AuditMetadata,
               scope: Any = None) -> AuditEvent:
        return AuditEvent(
            event_id=new_id(now), user_id=job.user_id, at=now, skill_id=job.skill_id, skill_version=job.skill_version,
            action=AuditAction.BACKGROUND_EXECUTE, decision=decision, scope=scope, target_id=job.job_id,
            reason=reason, metadata=metadata,
        )
