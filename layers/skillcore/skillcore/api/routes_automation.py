"""Routes: automation jobs (create, list, get, patch, delete) and their runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillcore import lazy
from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models
from skillcore.api.requests import Paging
from skillcore.api.routes_skills import SkillDeps
from skillcore.api.views import Page
from skillcore.api.views import jobs as views
from skillcore.automation.models import AutomationConfig, AutomationStatus
from skillcore.errors import ValidationFailed

if TYPE_CHECKING:
    from skillcore.api.requests.automation import CreateAutomationJob, PatchAutomationJob
    from skillcore.automation import service as automation
    from skillcore.automation import store
else:  # each loaded by the first request that calls it (skillcore/lazy.py)
    automation = lazy.module("skillcore.automation.service")
    store = lazy.module("skillcore.automation.store")

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.automation")


def register(routes: Routes, deps: SkillDeps) -> None:
    @routes.route("POST", "/rpc/automation-jobs", body=request("CreateAutomationJob"), response=views.AutomationJob,
                  status=201, errors=(e.AgentNotFound, e.InvalidTimezone, e.UnknownTool, e.ConcurrentUpdate))
    def create_automation_job(caller: Caller, body: CreateAutomationJob) -> views.AutomationJob:
        """Create a daily or weekly automation job."""
        job = automation.create_job(
            deps.db, deps.skills, caller.user_id, title=body.title, schedule_type=body.schedule_type,
            local_time=body.local_time, weekday=body.weekday, timezone=body.timezone, agent_id=body.agent_id,
            config=AutomationConfig(prompt=body.config.prompt, tools=tuple(body.config.tools)), now=deps.clock(),
        )
        return views.automation_job(job, automation.default_texts(deps.skills, job))

    @routes.route("GET", "/rpc/automation-jobs", query=Paging, response=Page[views.AutomationJob])
    def list_automation_jobs(caller: Caller, query: Paging) -> Page[views.AutomationJob]:
        """The caller's automation jobs."""
        items, cursor = store.list_jobs(deps.db, caller.user_id, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.automation_job(j, automation.default_texts(deps.skills, j)) for j in items],
                    next_cursor=cursor)

    @routes.route("GET", "/rpc/automation-jobs/<jobId>", response=views.AutomationJob)
    def get_automation_job(caller: Caller, jobId: str) -> views.AutomationJob:  # noqa: N803 - the path parameter
        """One of the caller's automation jobs."""
        job = automation.owned_job(deps.db, caller.user_id, jobId)
        return views.automation_job(job, automation.default_texts(deps.skills, job))

    @routes.route("PATCH", "/rpc/automation-jobs/<jobId>", body=request("PatchAutomationJob"), response=views.AutomationJob,
                  errors=(e.InvalidTimezone, e.UnknownTool, e.VersionConflict, e.ConcurrentUpdate))
    def patch_automation_job(caller: Caller, jobId: str, body: PatchAutomationJob) -> views.AutomationJob:  # noqa: N803
        """Change a job's status, title, schedule or config; nextRunAt is recomputed."""
        if not body.model_fields_set:
            raise ValidationFailed("nothing to change", [{"path": "body", "message": "empty patch"}])
        changes: dict[str, Any] = {k: v for k, v in body.model_dump(exclude_unset=True).items() if k != "config"}
        if "status" in changes:
            changes["status"] = AutomationStatus(changes["status"])
        if body.config is not None:
            changes["config"] = AutomationConfig(prompt=body.config.prompt, tools=tuple(body.config.tools))
        job = automation.patch_job(deps.db, deps.skills, caller.user_id, jobId, changes, deps.clock())
        return views.automation_job(job, automation.default_texts(deps.skills, job))

    @routes.route("DELETE", "/rpc/automation-jobs/<jobId>", response=None, status=204,
                  errors=(e.ConcurrentUpdate,))
    def delete_automation_job(caller: Caller, jobId: str) -> None:  # noqa: N803
        """Delete an automation job."""
        automation.delete_job(deps.db, caller.user_id, jobId)

    @routes.route("GET", "/rpc/automation-jobs/<jobId>/runs", query=Paging, response=Page[views.AutomationRun])
    def list_automation_runs(caller: Caller, jobId: str, query: Paging) -> Page[views.AutomationRun]:  # noqa: N803
        """A job's runs, one per scheduled slot."""
        items, cursor = automation.list_runs(deps.db, caller.user_id, jobId, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.automation_run(r) for r in items], next_cursor=cursor)
