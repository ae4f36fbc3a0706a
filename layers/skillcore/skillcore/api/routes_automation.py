"""Routes: automation jobs (create, list, get, patch, delete) and their runs."""

from __future__ import annotations

from typing import Any

from skillcore.api import http, views
from skillcore.api.app import Routes
from skillcore.api.errors import Response, empty_response, json_response
from skillcore.api.requests import Paging
from skillcore.api.requests.automation import CreateAutomationJob, PatchAutomationJob
from skillcore.api.routes_skills import SkillDeps
from skillcore.automation.models import AutomationConfig, AutomationStatus
from skillcore.db import automation as store
from skillcore.errors import RuleViolation
from skillcore.services import automation


def register(routes: Routes, deps: SkillDeps) -> None:
    @routes.route("POST", "/rpc/automation-jobs")
    def create() -> Response:
        user = http.user_id(routes.event)
        r = http.body(routes.event, CreateAutomationJob)
        job = automation.create_job(
            deps.db, deps.skills, user, title=r.title, schedule_type=r.schedule_type, local_time=r.local_time,
            weekday=r.weekday, timezone=r.timezone, agent_id=r.agent_id,
            config=AutomationConfig(prompt=r.config.prompt, tools=tuple(r.config.tools)), now=deps.clock(),
        )
        return json_response(201, views.automation_job(job))

    @routes.route("GET", "/rpc/automation-jobs")
    def list_jobs() -> Response:
        user = http.user_id(routes.event)
        paging = http.parse(Paging, http.query(routes.event))
        items, cursor = store.list_jobs(deps.db, user, limit=paging.limit, cursor=paging.cursor)
        return json_response(200, views.page([views.automation_job(j) for j in items], cursor))

    @routes.route("GET", "/rpc/automation-jobs/<jobId>")
    def get_job(jobId: str) -> Response:  # noqa: N803 - the path parameter's name
        user = http.user_id(routes.event)
        return json_response(200, views.automation_job(automation.owned_job(deps.db, user, jobId)))

    @routes.route("PATCH", "/rpc/automation-jobs/<jobId>")
    def patch_job(jobId: str) -> Response:  # noqa: N803
        user = http.user_id(routes.event)
        r = http.body(routes.event, PatchAutomationJob)
        changes: dict[str, Any] = {k: v for k, v in r.model_dump(exclude_unset=True).items() if k != "config"}
        if not r.model_fields_set:
            raise RuleViolation("nothing to change", details={"errors": [{"path": "body", "message": "empty patch"}]})
        if "status" in changes:
            changes["status"] = AutomationStatus(changes["status"])
        if r.config is not None:
            changes["config"] = AutomationConfig(prompt=r.config.prompt, tools=tuple(r.config.tools))
        job = automation.patch_job(deps.db, deps.skills, user, jobId, changes, deps.clock())
        return json_response(200, views.automation_job(job))

    @routes.route("DELETE", "/rpc/automation-jobs/<jobId>")
    def delete_job(jobId: str) -> Response:  # noqa: N803
        automation.delete_job(deps.db, http.user_id(routes.event), jobId)
        return empty_response()

    @routes.route("GET", "/rpc/automation-jobs/<jobId>/runs")
    def list_runs(jobId: str) -> Response:  # noqa: N803
        user = http.user_id(routes.event)
        paging = http.parse(Paging, http.query(routes.event))
        items, cursor = automation.list_runs(deps.db, user, jobId, limit=paging.limit, cursor=paging.cursor)
        return json_response(200, views.page([views.automation_run(r) for r in items], cursor))
