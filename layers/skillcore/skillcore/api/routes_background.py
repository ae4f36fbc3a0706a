"""Routes: background jobs (create, list, cancel)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillcore import lazy
from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models
from skillcore.api.routes_skills import SkillDeps
from skillcore.api.views import Page
from skillcore.api.views import jobs as views

if TYPE_CHECKING:
    from skillcore.api.requests.background import CreateBackgroundJob, JobQuery
    from skillcore.background import job_store
    from skillcore.background import service as background
else:  # each loaded by the first request that calls it (skillcore/lazy.py)
    job_store = lazy.module("skillcore.background.job_store")
    background = lazy.module("skillcore.background.service")

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.background")


def register(routes: Routes, deps: SkillDeps) -> None:
    @routes.route("POST", "/rpc/skills/background-jobs", body=request("CreateBackgroundJob"), response=views.BackgroundJob,
                  status=201, errors=(e.SkillNotFound, e.AgentNotFound, e.SkillDisabled, e.PermissionRequired,
                                      e.GrantScopeMismatch, e.RunAtOutOfRange, e.ConcurrentUpdate))
    def create_background_job(caller: Caller, body: CreateBackgroundJob) -> views.BackgroundJob:
        """Schedule a background skill run (a goal check-in reminder)."""
        job = background.create_job(
            deps.db, deps.skills, caller.user_id, skill_id=body.skill_id, agent_id=body.agent_id,
            run_at=body.run_at, note=body.note, now=deps.clock(),
        )
        return views.background_job(job)

    @routes.route("GET", "/rpc/skills/background-jobs", query=request("JobQuery"), response=Page[views.BackgroundJob])
    def list_background_jobs(caller: Caller, query: JobQuery) -> Page[views.BackgroundJob]:
        """The caller's background jobs, newest first."""
        items, cursor = job_store.list_jobs(deps.db, caller.user_id, status=query.status, limit=query.limit,
                                            cursor=query.cursor)
        return Page(items=[views.background_job(j) for j in items], next_cursor=cursor)

    @routes.route("POST", "/rpc/skills/background-jobs/<jobId>/cancel", response=views.BackgroundJob,
                  errors=(e.JobNotCancellable, e.VersionConflict, e.ConcurrentUpdate))
    def cancel_background_job(caller: Caller, jobId: str) -> views.BackgroundJob:  # noqa: N803 - the path parameter
        """Cancel a job that has not started."""
        return views.background_job(background.cancel_job(deps.db, caller.user_id, jobId, deps.clock()))
