"""Bodies of the background job and automation job routes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from msgspec import UNSET, UnsetType

from skillcore.api.views import Body, Time, maybe_time, time
from skillcore.automation.models import AutomationStatus, RunStatus
from skillcore.background.lifecycle import JobStatus

if TYPE_CHECKING:
    from skillcore.automation import models as automation
    from skillcore.background.models import BackgroundJob as BackgroundRecord


class BackgroundJob(Body, frozen=True, kw_only=True):
    job_id: str
    skill_id: str
    skill_version: str
    agent_id: str
    conversation_id: str
    status: JobStatus
    scheduled_at: Time
    next_attempt_at: Time
    attempts: int
    max_attempts: int
    note: str
    last_error_code: str | UnsetType = UNSET
    created_at: Time
    updated_at: Time
    completed_at: Time | UnsetType = UNSET


class AutomationConfig(Body, frozen=True, kw_only=True):
    prompt: str
    tools: list[str]


class AutomationJob(Body, frozen=True, kw_only=True):
    job_id: str
    title: str
    schedule_type: Literal["daily", "weekly"]
    local_time: str
    weekday: int | UnsetType = UNSET
    timezone: str
    agent_id: str | UnsetType = UNSET
    config: AutomationConfig
    status: AutomationStatus
    next_run_at: Time
    last_run_at: Time | UnsetType = UNSET
    last_run_status: RunStatus | UnsetType = UNSET
    is_default: bool
    # The default job's texts still as offered ("title", "prompt"): a client may show them in its own language.
    default_texts: list[Literal["title", "prompt"]]
    created_at: Time
    updated_at: Time


class AutomationRun(Body, frozen=True, kw_only=True):
    run_id: str
    scheduled_slot: Time
    status: RunStatus
    error_code: str | UnsetType = UNSET
    conversation_ids: list[str]
    attempts: int
    started_at: Time
    finished_at: Time | None


def background_job(j: BackgroundRecord) -> BackgroundJob:
    return BackgroundJob(
        job_id=j.job_id, skill_id=j.skill_id, skill_version=j.skill_version, agent_id=j.agent_id,
        conversation_id=j.conversation_id, status=j.status, scheduled_at=time(j.scheduled_at),
        next_attempt_at=time(j.next_attempt_at), attempts=j.attempts, max_attempts=j.max_attempts, note=j.note,
        last_error_code=j.last_error_code or UNSET, created_at=time(j.created_at), updated_at=time(j.updated_at),
        completed_at=maybe_time(j.completed_at) or UNSET,
    )


def automation_job(j: automation.AutomationJob, default_texts: tuple[str, ...] = ()) -> AutomationJob:
    return AutomationJob(
        job_id=j.job_id, title=j.title, schedule_type=j.schedule_type,  # type: ignore[arg-type]  # checked on write
        local_time=j.local_time, weekday=j.weekday if j.weekday is not None else UNSET, timezone=j.timezone,
        agent_id=j.agent_id or UNSET, config=AutomationConfig(prompt=j.config.prompt, tools=list(j.config.tools)),
        status=j.status, next_run_at=time(j.next_run_at), last_run_at=maybe_time(j.last_run_at) or UNSET,
        last_run_status=j.last_run_status or UNSET, is_default=j.is_default,
        default_texts=list(default_texts),  # type: ignore[arg-type]  # "title" and "prompt" only
        created_at=time(j.created_at), updated_at=time(j.updated_at),
    )


def automation_run(r: automation.AutomationRun) -> AutomationRun:
    return AutomationRun(
        run_id=r.run_id, scheduled_slot=time(r.scheduled_slot), status=r.status, error_code=r.error_code or UNSET,
        conversation_ids=list(r.conversation_ids), attempts=r.attempts, started_at=time(r.started_at),
        finished_at=maybe_time(r.finished_at),
    )
