"""The background job as the domain sees it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from msgspec import Struct

from skillcore import checks
from skillcore.background.lifecycle import JobStatus

ID_MAX = 128


class BackgroundJob(Struct, frozen=True, kw_only=True):
    """Built by the jobs store from its items, with explicit conversions. Checked on construction (and by
    every `replace`), so no code can store a job its reader would reject: ValueError names the field."""

    job_id: str
    user_id: str
    skill_id: str
    skill_version: str
    agent_id: str
    conversation_id: str
    grant_id: str | None
    payload: dict[str, Any]
    status: JobStatus
    scheduled_at: datetime
    next_attempt_at: datetime
    attempts: int
    max_attempts: int
    revision: int
    lease_expires_at: datetime | None = None
    last_error_code: str | None = None
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None = None

    def __post_init__(self) -> None:
        for name in ("job_id", "user_id", "skill_id", "skill_version", "agent_id", "conversation_id"):
            if not checks.text(getattr(self, name), ID_MAX):
                raise ValueError(f"{name} must be 1 to {ID_MAX} characters")
        if self.grant_id is not None and not checks.text(self.grant_id, ID_MAX):
            raise ValueError("grant_id must be None or an id")
        if not isinstance(self.payload, dict):
            raise ValueError("payload must be a dict")
        if not checks.instance(self.status, JobStatus):
            raise ValueError("status must be a JobStatus")
        for name in ("scheduled_at", "next_attempt_at", "created_at", "updated_at"):
            if not checks.aware(getattr(self, name)):
                raise ValueError(f"{name} must be an aware datetime")
        for name in ("lease_expires_at", "completed_at"):
            if not checks.aware(getattr(self, name), optional=True):
                raise ValueError(f"{name} must be None or an aware datetime")
        if not checks.integer(self.attempts, 0):
            raise ValueError("attempts must be an integer >= 0")
        if not checks.integer(self.max_attempts, 1):
            raise ValueError("max_attempts must be an integer >= 1")
        if not checks.integer(self.revision, 1):
            raise ValueError("revision must be an integer >= 1")
        if self.last_error_code is not None and not checks.matches(self.last_error_code, r"[a-z][a-z0-9_]{0,63}"):
            raise ValueError("last_error_code must be None or a snake_case code")

    @property
    def note(self) -> str:
        return str(self.payload.get("note") or "")
