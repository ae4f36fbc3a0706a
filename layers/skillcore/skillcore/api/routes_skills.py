"""Routes: the skills catalog, the per-user switches and the run log."""

from __future__ import annotations

from msgspec import Struct

from skillcore.api import http, views
from skillcore.api.app import Routes
from skillcore.api.errors import Response, json_response
from skillcore.api.requests import Paging
from skillcore.api.requests.skills import AdminAuditQuery, AgentScope, PatchPermission, PatchSkill
from skillcore.clock import Clock
from skillcore.db import audit as audit_store
from skillcore.db import grants as grant_store
from skillcore.db import runs as run_store
from skillcore.db.dynamo import Db
from skillcore.policy.grants import GrantScope
from skillcore.services import permissions
from skillcore.services import skills as skill_service
from skillcore.skills.builtin import Skills


class SkillDeps(Struct, frozen=True):
    db: Db
    skills: Skills
    clock: Clock


def register(routes: Routes, deps: SkillDeps) -> None:
    @routes.route("GET", "/rpc/skills")
    def catalog() -> Response:
        user = http.user_id(routes.event)
        entries = skill_service.catalog(deps.db, deps.skills, user)
        return json_response(200, views.page([views.catalog_item(e) for e in entries], None))

    @routes.route("GET", "/rpc/skills/runs")
    def list_runs() -> Response:
        user = http.user_id(routes.event)
        paging = http.parse(Paging, http.query(routes.event))
        items, cursor = run_store.list_runs(deps.db, user, limit=paging.limit, cursor=paging.cursor)
        return json_response(200, views.page([views.run(r, with_context=True) for r in items], cursor))

    @routes.route("GET", "/rpc/skills/permissions")
    def list_permissions() -> Response:
        user = http.user_id(routes.event)
        paging = http.parse(Paging, http.query(routes.event))
        items, cursor = grant_store.list_grants(deps.db, user, limit=paging.limit, cursor=paging.cursor)
        return json_response(200, views.page([views.grant(g) for g in items], cursor))

    @routes.route("PATCH", "/rpc/skills/permissions")
    def patch_permission() -> Response:
        user = http.user_id(routes.event)
        request = http.body(routes.event, PatchPermission)
        scope = GrantScope.agent(request.scope.agent_id) if isinstance(request.scope, AgentScope) else GrantScope.user()
        grant = permissions.set_permission(
            deps.db, deps.skills, user, skill_id=request.skill_id, code=request.permission_code, scope=scope,
            granted=request.granted, now=deps.clock(),
        )
        return json_response(200, views.grant(grant))

    @routes.route("GET", "/rpc/skills/audit-events")
    def list_audit() -> Response:
        user = http.user_id(routes.event)
        paging = http.parse(Paging, http.query(routes.event))
        items, cursor = audit_store.list_audit(deps.db, user, limit=paging.limit, cursor=paging.cursor)
        return json_response(200, views.page([views.audit_event(e) for e in items], cursor))

    @routes.route("GET", "/rpc/admin/audit-events")
    def admin_audit() -> Response:
        http.require_admin(routes.event)
        q = http.parse(AdminAuditQuery, http.query(routes.event))
        items, cursor = audit_store.list_audit(deps.db, q.user_id, limit=q.limit, cursor=q.cursor)
        return json_response(200, views.page([views.audit_event(e) for e in items], cursor))

    # Registered after the static /rpc/skills/* routes, which must win over the parameter.
    @routes.route("PATCH", "/rpc/skills/<skillId>")
    def patch_skill(skillId: str) -> Response:  # noqa: N803 - the path parameter's name
        user = http.user_id(routes.event)
        request = http.body(routes.event, PatchSkill)
        entry = skill_service.set_enabled(deps.db, deps.skills, user, skillId, request.enabled, deps.clock())
        return json_response(200, views.catalog_item(entry))
