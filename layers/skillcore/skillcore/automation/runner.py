"""Automation runs: claim due slots in the scan, run the agent through the normal pipeline, record the run.

The scan and the run's decisions live here; claiming and scheduling in automation/slots.py, the
transcript in automation/transcript.py, the model loop in automation/agent_turn.py. For each target
agent with visible activity on the slot's day or the day before (the job's local days) the agent runs once. The automation
skill that runs jobs (skills.automations.job_runner()) guards the run: without its grant the run is
`skipped` and audited as denied; the model may use only config.tools ∩ the skill's allowlist. A run that
would ask the model over the user's daily model budget (skillcore/limits/) is `skipped` with errorCode
`budget_exhausted`, audited as denied; its model calls are charged to the user's budget.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timedelta

from skillcore.automation import store
from skillcore.automation.agent_turn import AgentTurn, PortsFor, TransientRunError
from skillcore.automation.models import AutomationJob, AutomationStatus, RunStatus
from skillcore.automation.slots import RunOutcome, claim, finish, run_id, slot_delay_ms
from skillcore.automation.transcript import active_conversations, transcript, window_start
from skillcore.background.lifecycle import RetryPolicy
from skillcore.conversations import agent_store, conversation_store
from skillcore.conversations import profile_store as users
from skillcore.conversations.models import AgentCard
from skillcore.db.dynamo import Db
from skillcore.db.errors import StoreError
from skillcore.db.records import ScanFailures, UnreadableRecord
from skillcore.errors import ConcurrentUpdate
from skillcore.ids import new_id
from skillcore.limits.errors import BudgetExhausted
from skillcore.limits.service import Limiter
from skillcore.memory.ports import read_write_ports
from skillcore.model.port import ChatModel, ModelError
from skillcore.observability import automation_run, job_keys, logger, slot_delay
from skillcore.policy import audit_store, grant_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.gate import PolicyInput, decide
from skillcore.skills.registries import Skills
from skillcore.work.drain import DEFAULT_BATCH, Drain, Handled, ScanSummary, drain_all
from skillcore.work.fanout import DEFAULT_CONCURRENCY

__all__ = ["AutomationRunner", "RunOutcome", "TransientRunError"]


class AutomationRunner:
    def __init__(
        self, db: Db, skills: Skills, model: ChatModel, *, retry: RetryPolicy | None = None,
        rng: random.Random | None = None, batch_size: int = DEFAULT_BATCH, ports_for: PortsFor | None = None,
        concurrency: int = DEFAULT_CONCURRENCY, limiter: Limiter | None = None,
    ):
        self._db = db
        self._limiter = limiter  # the user's daily model budget: a run over it is skipped (`budget_exhausted`)
        self._skills = skills
        self._model = model
        self._retry = retry or RetryPolicy()
        self._rng = rng or random.Random()
        self._drain = Drain(batch_size=batch_size, concurrency=concurrency, rng=self._rng)
        self.slot_delays_ms: deque[int] = deque(maxlen=100_000)  # for the bench; the metric is the product's
        # The tools' ports: the job runner's tools are the memory tools, bound to the Memories table.
        self._agent_turn = AgentTurn(
            db, skills, model, ports_for=ports_for or (lambda user, agent, now: read_write_ports(db, user, agent, now)),
            audit=lambda job, now, decision, reason, tools: self._audit(job, now, decision, reason, tools=tools),
        )

    # -- the scan: due slots as the drain engine's source (work/drain.py) ------------------------------
    kind = "automation"

    def scan(self, now: datetime, remaining_ms: Callable[[], int], failures: ScanFailures | None = None) -> int:
        """Runs every due slot it wins while time remains, shard by shard (`work_shard`, the same code a
        WorkerFunction runs for one queue message); returns the number of runs recorded."""
        summary = ScanSummary()
        drain_all(self, self._db.shards.read, now, remaining_ms, summary,
                  failures if failures is not None else ScanFailures(), self._rng)
        return summary.automation_runs

    def probe(self, shard_no: int, now: datetime) -> tuple[bool, bool]:
        return store.probe(self._db, shard_no, now)

    def recover_shard(self, shard_no: int, now: datetime, summary: ScanSummary, failures: ScanFailures) -> None:
        """Nothing to recover: a slot whose run died is claimed again once its claim's lease ends."""

    def work_shard(self, shard_no: int, now: datetime, remaining_ms: Callable[[], int], summary: ScanSummary,
                   failures: ScanFailures, *, yield_on_race: bool = False, since: float | None = None) -> bool:
        """Runs the due slots of one shard (up to `concurrency` at once: a run mostly waits on the model), each
        behind its own conditional claim; whether due slots may be left because time ran short. A job that
        cannot be read or claimed is recorded in `failures` and skipped: it never stops the other users' jobs.
        A run's end is `now` plus the time since `since` (see Drain.shard), including the runs before it."""
        return self._drain.shard(self, shard_no, now, remaining_ms, summary, failures, yield_on_race=yield_on_race,
                                 since=since)

    def candidates(self, shard_no: int, now: datetime, limit: int) -> list[AutomationJob | UnreadableRecord]:
        return store.due_jobs(self._db, shard_no, now, limit=limit)

    def handle(self, job: AutomationJob | UnreadableRecord, now: datetime, summary: ScanSummary,
               failures: ScanFailures, since: float) -> Handled:
        if isinstance(job, UnreadableRecord):
            return Handled(progress=self._skip(failures, job.item_id, job, now))
        if job.status is not AutomationStatus.ACTIVE or job.next_run_at > now:
            return Handled()
        won = 0
        try:
            claimed = self.claim(job, now)
            if claimed is None:
                return Handled()
            won = 1
            skill_id = self._skills.automations.job_runner().manifest.skill_id
            with job_keys(job_id=claimed.job_id, skill_id=skill_id):
                summary.automation_runs += self.run_slot(claimed, now, since=since)
        except Exception as error:  # noqa: BLE001 - isolated: logged, counted, the scan goes on
            won += self._skip(failures, job.job_id, error, now)
        return Handled(progress=won)

    def _skip(self, failures: ScanFailures, job_id: str, error: BaseException, now: datetime) -> int:
        """Records a job this scan cannot handle; 1 if it was new to this scan (progress), else 0."""
        return int(failures.record(store.JOB_KIND, job_id, error,
                                   quarantine=lambda item_id: store.quarantine(self._db, item_id, now)))

    def claim(self, job: AutomationJob, now: datetime) -> AutomationJob | None:
        return claim(self._db, job, now)

    # -- one slot --------------------------------------------------------------------------------------
    def run_slot(self, job: AutomationJob, now: datetime, *, since: float | None = None) -> int:
        assert job.current_slot is not None
        slot = job.current_slot
        started = time.monotonic() if since is None else since
        pending: list[AuditEvent] = []  # written with the run's outcome, in one transaction
        try:
            outcome = self.execute(job, slot, now, pending)
        except (TransientRunError, ModelError, StoreError, ConcurrentUpdate) as error:
            logger.warning("automation run failed", extra={"job_id": job.job_id, "error_type": type(error).__name__})
            outcome = RunOutcome(RunStatus.FAILED, "transient_error", transient=True)
        except Exception as error:  # noqa: BLE001 - recorded as a failed run with its error context
            logger.exception("automation run error", extra={"job_id": job.job_id, "error_type": type(error).__name__})
            outcome = RunOutcome(RunStatus.FAILED, "run_error")
        # The scan's "now" plus the time since it (this run's and the shard's earlier runs'): when the run
        # ended, against when it was due.
        ended = now + timedelta(seconds=time.monotonic() - started)
        self.finish(job, slot, now, outcome, pending, ended=ended)
        delay_ms = slot_delay_ms(slot, ended)
        self.slot_delays_ms.append(delay_ms)
        slot_delay(delay_ms)
        logger.info("automation run finished", extra={"job_id": job.job_id, "run_id": run_id(job, slot),
                                                       "status": outcome.status.value, "slot_delay_ms": delay_ms})
        return 1

    def finish(
        self, job: AutomationJob, slot: datetime, now: datetime, outcome: RunOutcome, pending: list[AuditEvent],
        *, ended: datetime | None = None,
    ) -> None:
        events = list(pending)
        if outcome.status is not RunStatus.SKIPPED:  # a skip's denial was audited when it was decided
            decision = Decision.SUCCEEDED if outcome.status is RunStatus.SUCCEEDED else Decision.FAILED
            events.append(self._event(
                job, now, decision, outcome.error_code or outcome.status.value,
                AuditMetadata(run_id=run_id(job, slot), attempt=job.slot_attempts, error_code=outcome.error_code),
            ))
        finish(self._db, self._retry, job, slot, now, outcome, events, ended=ended)
        automation_run(outcome.status.value, outcome.error_code)

    def execute(self, job: AutomationJob, slot: datetime, now: datetime, pending: list[AuditEvent]) -> RunOutcome:
        definition = self._skills.automations.job_runner()
        manifest = definition.manifest
        disabled = users.get_disabled_skills(self._db, job.user_id)
        if manifest.skill_id in disabled:
            self._audit(job, now, Decision.DENIED, "skill_disabled")
            return RunOutcome(RunStatus.SKIPPED, "skill_disabled")
        grants = tuple(grant_store.all_grants(self._db, job.user_id))
        agents = self._target_agents(job)
        allowed_agents = []
        for agent in agents:
            decision = decide(PolicyInput(
                user_id=job.user_id, skill_id=manifest.skill_id, skill_version=manifest.version,
                requirements=manifest.permissions, action="automation.execute", agent_id=agent.agent_id,
                target_id=job.job_id, grants=grants,
            ))
            if decision.allowed:
                allowed_agents.append(agent)
        if not allowed_agents:
            self._audit(job, now, Decision.DENIED, "grant_missing", missing=tuple(p.code for p in manifest.permissions))
            return RunOutcome(RunStatus.SKIPPED, "grant_missing")
        tools, refused = definition.allowed(tuple(job.config.tools))
        if refused:
            self._audit(job, now, Decision.DENIED, "tool_not_allowed", tools=refused)
        pending.append(self._event(job, now, Decision.ALLOWED, "allowed",
                                   AuditMetadata(tools=tuple(t.tool_id for t in tools))))

        since = window_start(job, slot)  # the slot's days: a run that starts late reads what an on-time one would
        conversations = conversation_store.list_all(self._db, job.user_id)
        touched: list[str] = []
        work = [(agent, active) for agent in allowed_agents
                if (active := active_conversations(conversations, agent.agent_id, since))]
        charged: AbstractContextManager[object] = contextlib.nullcontext()
        if work and self._limiter is not None:
            # The model is about to be asked: within the user's budget of the day, or the run is skipped and says so.
            charged = self._limiter.run_charged(job.user_id, now)
        try:
            with charged:
                for agent, active in work:
                    lines = transcript(self._db, active, agent.agent_id, since)
                    if not lines:
                        continue
                    touched.append(self._agent_turn.run(job, definition, tools, agent, slot, now, lines, grants))
        except BudgetExhausted:
            self._audit(job, now, Decision.DENIED, "budget_exhausted")
            return RunOutcome(RunStatus.SKIPPED, "budget_exhausted")
        if not touched:
            return RunOutcome(RunStatus.SKIPPED, "no_activity")
        return RunOutcome(RunStatus.SUCCEEDED, conversation_ids=touched)

    # -- helpers ------------------------------------------------------------------------------------------
    def _target_agents(self, job: AutomationJob) -> list[AgentCard]:
        if job.agent_id:
            agent = agent_store.get_agent(self._db, job.user_id, job.agent_id)
            return [AgentCard(agent_id=agent.agent_id, name=agent.name, persona=agent.persona)] if agent else []
        agents, cursor = agent_store.list_agents(self._db, job.user_id, limit=100, cursor=None)
        while cursor:
            more, cursor = agent_store.list_agents(self._db, job.user_id, limit=100, cursor=cursor)
            agents += more
        return [AgentCard(agent_id=a.agent_id, name=a.name, persona=a.persona) for a in agents]

    def _audit(self, job: AutomationJob, now: datetime, decision: Decision, reason: str, *,
               missing: tuple[str, ...] = (), tools: tuple[str, ...] = ()) -> None:
        audit_store.put_audit(self._db, self._event(
            job, now, decision, reason, AuditMetadata(missing_permissions=missing, tools=tools)
        ))

    def _event(self, job: AutomationJob, now: datetime, decision: Decision, reason: str,
               metadata: AuditMetadata) -> AuditEvent:
        definition = self._skills.automations.job_runner()
        return AuditEvent(
            event_id=new_id(now), user_id=job.user_id, at=now, skill_id=definition.manifest.skill_id,
            skill_version=definition.manifest.version, action=AuditAction.AUTOMATION_EXECUTE, decision=decision,
            target_id=job.job_id, reason=reason, metadata=metadata,
        )
