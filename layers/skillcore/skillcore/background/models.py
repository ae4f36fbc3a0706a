"""The background job as the domain sees it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from msgspec import Struct

from skillcore.background.lifecycle import JobStatus


class BackgroundJob(Struct, frozen=True, kw_only=True):
    """Built by the jobs store from its items, with explicit conversions."""

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

    @property
    def note(self) -> str:
        return str(self.payload.get("note") or "")
