"""Routes: background jobs (create, list, cancel)."""

from __future__ import annotations

from skillcore.api import http, views
from skillcore.api.app import Routes
from skillcore.api.errors import Response, json_response
from skillcore.api.requests.background import CreateBackgroundJob, JobQuery
from skillcore.api.routes_skills import SkillDeps
from skillcore.db import jobs as job_store
from skillcore.services import background


def register(routes: Routes, deps: SkillDeps) -> None:
    @routes.route("POST", "/rpc/skills/background-jobs")
    def create() -> Response:
        user = http.user_id(routes.event)
        request = http.body(routes.event, CreateBackgroundJob)
        job = background.create_job(
            deps.db, deps.skills, user, skill_id=request.skill_id, agent_id=request.agent_id,
            run_at=request.run_at, note=request.note, now=deps.clock(),
        )
        return json_response(201, views.background_job(job))

    @routes.route("GET", "/rpc/skills/background-jobs")
    def list_jobs() -> Response:
        user = http.user_id(routes.event)
        q = http.parse(JobQuery, http.query(routes.event))
        items, cursor = job_store.list_jobs(deps.db, user, status=q.status, limit=q.limit, cursor=q.cursor)
        return json_response(200, views.page([views.background_job(j) for j in items], cursor))

    @routes.route("POST", "/rpc/skills/background-jobs/<jobId>/cancel")
    def cancel(jobId: str) -> Response:  # noqa: N803 - the path parameter's name
        user = http.user_id(routes.event)
        return json_response(200, views.background_job(background.cancel_job(deps.db, user, jobId, deps.clock())))
