"""Background jobs API: create (audited whether allowed or denied), list, cancel (audited)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from msgspec.structs import replace
from pydantic import ValidationError

from skillcore.background import job_store
from skillcore.background.errors import JobNotCancellable, RunAtOutOfRange
from skillcore.background.lifecycle import CANCELLABLE, JobStatus
from skillcore.background.models import BackgroundJob
from skillcore.clock import to_sort_time
from skillcore.conversations import agent_store, message_store
from skillcore.conversations.models import Role
from skillcore.db.dynamo import Db
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact
from skillcore.errors import (
    AgentNotFound,
    DomainError,
    NotFound,
    SkillDisabled,
    SkillNotFound,
    ValidationFailed,
)
from skillcore.ids import new_id
from skillcore.language import choose
from skillcore.policy import audit_store, grant_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.gate import PolicyInput, decide, mismatch_metadata, refusal, scope_candidates
from skillcore.skills.background import JobTarget
from skillcore.skills.registries import Skills

MIN_LEAD = timedelta(minutes=1)
MAX_LEAD = timedelta(days=365)


def _event(user_id: str, skill_id: str, version: str, now: datetime, action: AuditAction, decision: Decision,
           reason: str, *, target: str | None, metadata: AuditMetadata, scope=None) -> AuditEvent:
    return AuditEvent(event_id=new_id(now), user_id=user_id, at=now, skill_id=skill_id, skill_version=version,
                      action=action, decision=decision, scope=scope, target_id=target, reason=reason, metadata=metadata)


# How many of the conversation's latest messages are read for the user's language when the note shows none.
LANGUAGE_MESSAGES = 20


def _language(db: Db, conversation_id: str, note: str) -> str:
    """The user's language (skillcore/language.py): the note's, else their latest messages in the conversation
    (one Query, read only when the note shows none), else the default."""

    def texts() -> Iterator[str]:
        yield note
        for message in reversed(message_store.recent_visible(db, conversation_id, limit=LANGUAGE_MESSAGES)):
            if message.role is Role.USER:
                yield message.text

    return choose(texts()).value


def create_job(
    db: Db, skills: Skills, user_id: str, *, skill_id: str, agent_id: str, run_at: datetime, note: str, now: datetime
) -> BackgroundJob:
    definition = skills.background.latest(skill_id)
    if definition is None:
        raise SkillNotFound("no background skill with this id")
    manifest = definition.manifest
    agent = agent_store.get_agent(db, user_id, agent_id)
    if agent is None:
        raise AgentNotFound()

    def refuse(error: DomainError, reason: str, **meta: Any) -> DomainError:
        """`error`, once the refusal is audited."""
        audit_store.put_audit(db, _event(
            user_id, skill_id, manifest.version, now, AuditAction.BACKGROUND_CREATE, Decision.DENIED, reason,
            target=agent_id, metadata=AuditMetadata(**meta),
        ))
        return error

    disabled, grants = grant_store.read_policy_state(db, user_id, [
        grant_store.grant_key(user_id, skill_id, p.code, scope)
        for p in manifest.permissions for scope in scope_candidates(agent_id)
    ])
    if skill_id in disabled:
        raise refuse(SkillDisabled(), "skill_disabled")
    decision = decide(PolicyInput(
        user_id=user_id, skill_id=skill_id, skill_version=manifest.version, requirements=manifest.permissions,
        action="background.create", agent_id=agent_id, target_id=agent_id, grants=grants,
    ))
    if not decision.allowed:
        raise refuse(refusal(skill_id, decision, manifest.permissions), decision.reason.value,
                     missing_permissions=decision.missing,
                     matched_grant_ids=tuple(g.grant_id for g in decision.matched_grants), **mismatch_metadata(decision))
    if not now + MIN_LEAD <= run_at <= now + MAX_LEAD:
        raise refuse(RunAtOutOfRange(), "run_at_out_of_range")
    try:
        payload = definition.build_payload(JobTarget(
            agent_id=agent.agent_id, agent_name=agent.name, conversation_id=agent.default_conversation_id, note=note,
            language=_language(db, agent.default_conversation_id, note),
        ))
    except ValidationError as error:
        raise ValidationFailed("payload is not valid", [
            {"path": ".".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in error.errors(include_input=False)
        ]) from error
    job_id = new_id(now)
    job = BackgroundJob(
        job_id=job_id, user_id=user_id, skill_id=skill_id, skill_version=manifest.version, agent_id=agent_id,
        conversation_id=agent.default_conversation_id,
        grant_id=decision.matched_grants[0].grant_id if decision.matched_grants else None,
        payload=payload.model_dump(mode="json", by_alias=True), status=JobStatus.SCHEDULED, scheduled_at=run_at,
        next_attempt_at=run_at, attempts=0, max_attempts=definition.max_attempts, revision=1,
        created_at=now, updated_at=now,
    )
    allowed = _event(user_id, skill_id, manifest.version, now, AuditAction.BACKGROUND_CREATE, Decision.ALLOWED,
                     decision.reason.value, target=job_id, scope=decision.scope,
                     metadata=AuditMetadata(job_id=job_id, matched_grant_ids=tuple(g.grant_id for g in decision.matched_grants)))
    transact(db, [Op("job", job_store.put_job_op(db, job)), Op("audit", audit_store.put_audit_op(db, allowed))])
    return job


def owned_job(db: Db, user_id: str, job_id: str) -> BackgroundJob:
    job = job_store.get_job(db, job_id)
    if job is None or job.user_id != user_id:
        raise NotFound("job not found")
    return job


def cancel_job(db: Db, user_id: str, job_id: str, now: datetime) -> BackgroundJob:
    job = owned_job(db, user_id, job_id)
    # A retrying job whose message is already written (its worker died afterwards) has run: not cancellable,
    # or the user would see a message from a job shown as cancelled.
    if job.status not in CANCELLABLE or (
        job.status is JobStatus.RETRYING and message_store.exists(db, job.conversation_id, job.job_id)
    ):
        raise JobNotCancellable(job.status.value)
    op = job_store.transition_op(
        db, job.job_id, revision=job.revision, current=job.status, target=JobStatus.CANCELLED, now=now,
        sets={"completedAt": to_sort_time(now)}, removes=("dueShard", "dueAt"),
    )
    event = _event(user_id, job.skill_id, job.skill_version, now, AuditAction.BACKGROUND_CANCEL, Decision.CANCELLED,
                   "user_request", target=job.job_id, metadata=AuditMetadata(job_id=job.job_id))
    try:
        transact(db, [Op("job", op), Op("audit", audit_store.put_audit_op(db, event))])
    except TransactionFailed as error:
        if error.failed("job") is None:
            raise
        current = owned_job(db, user_id, job_id)  # a scan claimed it a moment ago
        raise JobNotCancellable(current.status.value) from error
    # The transition succeeded on exactly this revision, so the new state is known without reading it.
    return replace(job, status=JobStatus.CANCELLED, revision=job.revision + 1, updated_at=now, completed_at=now)
