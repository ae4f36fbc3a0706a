"""Automation jobs and their runs, as the domain sees them."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore import checks
from skillcore.automation.schedule import Schedule, ScheduleError, ScheduleType

PROMPT_MAX = 2000
MAX_TOOLS = 8
TITLE_MAX = 80
ID_MAX = 128


class AutomationStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class RunStatus(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"


class AutomationConfig(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How a job runs: the hidden prompt and the tools it may use. Nothing else (unknown fields are a
    TypeError). Checked on construction."""

    prompt: str
    tools: tuple[str, ...]

    def __post_init__(self) -> None:
        if not checks.text(self.prompt, PROMPT_MAX):
            raise ValueError(f"automation prompt must be 1 to {PROMPT_MAX} characters")
        if isinstance(self.tools, str) or not all(isinstance(t, str) for t in self.tools) or len(self.tools) > MAX_TOOLS:
            raise ValueError(f"automation tools must be a list of at most {MAX_TOOLS} tool names")
        force_setattr(self, "tools", tuple(self.tools))  # items come back from DynamoDB as lists


class AutomationJob(Struct, frozen=True, kw_only=True):
    """Built by the automation store from its items, with explicit conversions. Checked on construction
    (and by every `replace`), so no code can store a job its reader would reject: ValueError names the field."""

    job_id: str
    user_id: str
    title: str
    schedule_type: str
    local_time: str
    weekday: int | None
    timezone: str
    agent_id: str | None
    config: AutomationConfig
    status: AutomationStatus
    next_run_at: datetime
    last_run_at: datetime | None = None
    last_run_status: RunStatus | None = None
    is_default: bool = False
    revision: int = 1
    # The slot being worked on (set by a claim, cleared when the slot is done); see automation/runner.py.
    current_slot: datetime | None = None
    slot_attempts: int = 0
    created_at: datetime
    updated_at: datetime

    def __post_init__(self) -> None:
        for name in ("job_id", "user_id"):
            if not checks.text(getattr(self, name), ID_MAX):
                raise ValueError(f"{name} must be 1 to {ID_MAX} characters")
        if not checks.text(self.title, TITLE_MAX) or not self.title.strip():
            raise ValueError(f"title must be 1 to {TITLE_MAX} characters, not blank")
        if self.agent_id is not None and not checks.text(self.agent_id, ID_MAX):
            raise ValueError("agent_id must be None or an id")
        # The schedule fields must make a schedule (raises ScheduleError naming the field).
        schedule_of(self)
        if not checks.instance(self.config, AutomationConfig):
            raise ValueError("config must be an AutomationConfig")
        if not checks.instance(self.status, AutomationStatus):
            raise ValueError("status must be an AutomationStatus")
        if not checks.instance(self.last_run_status, RunStatus, optional=True):
            raise ValueError("last_run_status must be None or a RunStatus")
        for name in ("next_run_at", "created_at", "updated_at"):
            if not checks.aware(getattr(self, name)):
                raise ValueError(f"{name} must be an aware datetime")
        for name in ("last_run_at", "current_slot"):
            if not checks.aware(getattr(self, name), optional=True):
                raise ValueError(f"{name} must be None or an aware datetime")
        if not isinstance(self.is_default, bool):
            raise ValueError("is_default must be a bool")
        if not checks.integer(self.revision, 1):
            raise ValueError("revision must be an integer >= 1")
        if not checks.integer(self.slot_attempts, 0):
            raise ValueError("slot_attempts must be an integer >= 0")


def schedule_of(job: AutomationJob) -> Schedule:
    try:
        kind = ScheduleType(job.schedule_type)
    except ValueError:
        raise ScheduleError("schedule_type", "schedule type must be daily or weekly") from None
    return Schedule(schedule_type=kind, local_time=job.local_time, weekday=job.weekday, timezone=job.timezone)


class AutomationRun(Struct, frozen=True, kw_only=True):
    job_id: str
    run_id: str
    scheduled_slot: datetime
    status: RunStatus
    error_code: str | None = None
    conversation_ids: tuple[str, ...] = ()
    attempts: int = 1
    started_at: datetime
    finished_at: datetime | None = None
    # From the slot to the run's end (the SlotDelay metric's value for this run); internal, not in the
    # runs view (docs/contract.md lists that view's fields). None on records written before it was kept.
    slot_delay_ms: int | None = None

    def __post_init__(self) -> None:
        for name in ("job_id", "run_id"):
            if not checks.text(getattr(self, name), ID_MAX):
                raise ValueError(f"{name} must be 1 to {ID_MAX} characters")
        if not checks.instance(self.status, RunStatus):
            raise ValueError("status must be a RunStatus")
        if self.error_code is not None and not checks.matches(self.error_code, r"[a-z][a-z0-9_]{0,63}"):
            raise ValueError("error_code must be None or a snake_case code")
        if isinstance(self.conversation_ids, str) or not all(checks.text(c, ID_MAX) for c in self.conversation_ids):
            raise ValueError("conversation_ids must be a sequence of ids")
        force_setattr(self, "conversation_ids", tuple(self.conversation_ids))
        if not checks.integer(self.attempts, 0):
            raise ValueError("attempts must be an integer >= 0")
        for name in ("scheduled_slot", "started_at"):
            if not checks.aware(getattr(self, name)):
                raise ValueError(f"{name} must be an aware datetime")
        if not checks.aware(self.finished_at, optional=True):
            raise ValueError("finished_at must be None or an aware datetime")
        if self.slot_delay_ms is not None and not checks.integer(self.slot_delay_ms, 0):
            raise ValueError("slot_delay_ms must be None or an integer >= 0")
