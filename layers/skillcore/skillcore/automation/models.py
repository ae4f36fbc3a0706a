"""Automation jobs and their runs, as the domain sees them."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore import checks

PROMPT_MAX = 2000
MAX_TOOLS = 8


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
    """Built by the automation store from its items, with explicit conversions."""

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
