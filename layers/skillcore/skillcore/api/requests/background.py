"""Request models of the background job routes."""

from pydantic import AwareDatetime, Field

from skillcore.api.requests import Paging
from skillcore.background.lifecycle import JobStatus
from skillcore.shapes import Id, Strict

NOTE_MAX = 500


class CreateBackgroundJob(Strict):
    skill_id: str = Field(min_length=1, max_length=64)
    agent_id: Id
    run_at: AwareDatetime
    note: str = Field(default="", max_length=NOTE_MAX)


class JobQuery(Paging):
    status: JobStatus | None = None
