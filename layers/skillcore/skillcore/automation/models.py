"""Automation jobs and their runs, as the domain sees them."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

PROMPT_MAX = 2000


class AutomationStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class RunStatus(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"


class AutomationConfig(BaseModel):
    """How a job runs: the hidden prompt and the tools it may use. Nothing else (`extra="forbid"`)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    prompt: str = Field(min_length=1, max_length=PROMPT_MAX)
    tools: tuple[str, ...] = Field(max_length=8)


class AutomationJob(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

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


class AutomationRun(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    job_id: str
    run_id: str
    scheduled_slot: datetime
    status: RunStatus
    error_code: str | None = None
    conversation_ids: tuple[str, ...] = ()
    attempts: int = 1
    started_at: datetime
    finished_at: datetime | None = None
