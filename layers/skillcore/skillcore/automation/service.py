"""Automation jobs API: create, list, get, patch (nextRunAt recomputed), delete, runs; the default job."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from msgspec.structs import replace
from pydantic.alias_generators import to_camel

from skillcore.automation import store
from skillcore.automation.models import AutomationConfig, AutomationJob, AutomationRun, AutomationStatus
from skillcore.automation.schedule import Schedule, ScheduleError, ScheduleType, next_run
from skillcore.conversations import agent_store
from skillcore.conversations import profile_store as users
from skillcore.conversations.models import Profile
from skillcore.conversations.profile import DEFAULT_TIMEZONE
from skillcore.db.dynamo import Db
from skillcore.db.errors import ConditionFailed
from skillcore.db.records import UnreadableRecord
from skillcore.db.transact import Op, write
from skillcore.errors import (
    AgentNotFound,
    InvalidTimezone,
    NotFound,
    UnknownTool,
    ValidationFailed,
    VersionConflict,
)
from skillcore.ids import new_id, stable_id
from skillcore.skills.registries import Skills
from skillcore.timezones import valid_timezone


def default_job_id(user_id: str) -> str:
    return stable_id("default-memory-job", user_id)


def _schedule(schedule_type: str, local_time: str, weekday: int | None, timezone: str) -> Schedule:
    if not valid_timezone(timezone):
        raise InvalidTimezone(timezone)
    try:
        return Schedule(schedule_type=ScheduleType(schedule_type), local_time=local_time, weekday=weekday,
                        timezone=timezone)
    except ScheduleError as error:
        raise ValidationFailed("schedule is not valid", [
            {"path": to_camel(error.field), "message": str(error)}
        ]) from error


def _check_tools(skills: Skills, config: AutomationConfig) -> None:
    unknown = [t for t in config.tools if t not in skills.tool_names()]
    if unknown:
        raise UnknownTool("config.tools names a tool that is not registered",
                          {"unknown": unknown, "registered": sorted(skills.tool_names())})


def default_job(skills: Skills, profile: Profile, now: datetime) -> AutomationJob:
    """The user's default job, as the automation skill that runs jobs offers it: daily in the profile's
    zone, all agents. Its id is derived from the user, so it can exist only once."""
    offered = skills.automations.job_runner().default_job
    assert offered is not None  # the registry's job runner is the skill that offers it
    schedule = _schedule("daily", offered.local_time, None, profile.timezone)
    return AutomationJob(
        job_id=default_job_id(profile.user_id), user_id=profile.user_id, title=offered.title,
        schedule_type="daily", local_time=offered.local_time, weekday=None, timezone=profile.timezone,
        agent_id=None, config=AutomationConfig(prompt=offered.prompt, tools=offered.tools),
        status=AutomationStatus.ACTIVE, next_run_at=next_run(schedule, now), is_default=True,
        created_at=now, updated_at=now,
    )


def default_texts(skills: Skills, job: AutomationJob) -> tuple[str, ...]:
    """Which of the default job's texts ("title", "prompt") are still the ones the skill offered: a client shows
    those in the person's own language instead of the stored text (the stored one is Chinese)."""
    offered = skills.automations.job_runner().default_job
    if not job.is_default or offered is None:
        return ()
    return tuple(name for name, same in (("title", job.title == offered.title),
                                         ("prompt", job.config.prompt == offered.prompt)) if same)


def default_job_op(db: Db, skills: Skills) -> Callable[[Profile, datetime], Op]:
    """The conditional Put of the default job, for the first profile's transaction."""

    def op(profile: Profile, now: datetime) -> Op:
        return Op("default_automation_job", store.create_job_op(db, default_job(skills, profile, now)))

    return op


def create_job(
    db: Db, skills: Skills, user_id: str, *, title: str, schedule_type: str, local_time: str, weekday: int | None,
    timezone: str | None, agent_id: str | None, config: AutomationConfig, now: datetime,
) -> AutomationJob:
    _check_tools(skills, config)
    if timezone is None:
        profile = users.get_profile(db, user_id)
        timezone = profile.timezone if profile else DEFAULT_TIMEZONE
    schedule = _schedule(schedule_type, local_time, weekday, timezone)
    if agent_id is not None and agent_store.get_agent(db, user_id, agent_id) is None:
        raise AgentNotFound()
    job = AutomationJob(
        job_id=new_id(now), user_id=user_id, title=title, schedule_type=schedule.schedule_type.value,
        local_time=local_time, weekday=weekday, timezone=timezone, agent_id=agent_id, config=config,
        status=AutomationStatus.ACTIVE, next_run_at=next_run(schedule, now), created_at=now, updated_at=now,
    )
    store.create_job(db, job)
    return job


def owned_job(db: Db, user_id: str, job_id: str) -> AutomationJob:
    job = store.get_job(db, job_id)
    if job is None or job.user_id != user_id:
        raise NotFound("automation job not found")
    return job


def patch_job(db: Db, skills: Skills, user_id: str, job_id: str, changes: dict[str, Any], now: datetime) -> AutomationJob:
    job = owned_job(db, user_id, job_id)
    if "config" in changes:
        _check_tools(skills, changes["config"])
    # The schedule is checked first, for its own errors (invalid_timezone, the field's path); the job
    # record then checks itself as a whole.
    schedule = _schedule(job.schedule_type, changes.get("local_time", job.local_time),
                         changes.get("weekday", job.weekday), changes.get("timezone", job.timezone))
    updated = replace(
        job, **changes, next_run_at=next_run(schedule, now), revision=job.revision + 1, updated_at=now,
        # A rescheduled or paused job abandons a slot it was retrying.
        current_slot=None, slot_attempts=0,
    )
    try:
        write(db, Op("automation_job", store.replace_job_op(db, updated, expected_revision=job.revision)))
    except ConditionFailed as error:
        raise VersionConflict("the job changed meanwhile (it may be running); try again") from error
    return updated


def delete_job(db: Db, user_id: str, job_id: str) -> None:
    try:
        owned_job(db, user_id, job_id)
    except UnreadableRecord:
        # A job that no longer reads can still be deleted by its owner (and only by them).
        if store.owner_of(db, job_id) != user_id:
            raise NotFound("automation job not found") from None
    store.delete_job(db, job_id)


def list_runs(db: Db, user_id: str, job_id: str, *, limit: int, cursor: str | None) -> tuple[list[AutomationRun], str | None]:
    owned_job(db, user_id, job_id)
    return store.list_runs(db, job_id, limit=limit, cursor=cursor)
