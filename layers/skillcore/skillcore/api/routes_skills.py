"""Routes: the skills catalog, the per-user switches, grants, the run log and the audit trail."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from skillcore import lazy
from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models, require_person
from skillcore.api.requests import Paging
from skillcore.api.views import Page
from skillcore.api.views import chat as run_views
from skillcore.api.views import skills as views
from skillcore.db import paging
from skillcore.skills.manifest import RiskLevel, SkillManifest

if TYPE_CHECKING:
    from skillcore.api.requests.skills import (
        AdminAuditQuery,
        AuditQuery,
        PatchPermission,
        PatchSkill,
    )
    from skillcore.clock import Clock
    from skillcore.conversations import run_store
    from skillcore.db.dynamo import Db
    from skillcore.policy import audit_store, grant_store, grants, permissions
    from skillcore.policy import skills as skill_service
    from skillcore.skills.registries import Skills
else:  # each loaded by the first request that calls it (skillcore/lazy.py)
    run_store = lazy.module("skillcore.conversations.run_store")
    audit_store = lazy.module("skillcore.policy.audit_store")
    grant_store = lazy.module("skillcore.policy.grant_store")
    permissions = lazy.module("skillcore.policy.permissions")
    skill_service = lazy.module("skillcore.policy.skills")
    grants = lazy.module("skillcore.policy.grants")

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.skills")


HIGH_RISK = (RiskLevel.L3, RiskLevel.L4)


class SkillDeps(Struct, frozen=True):
    db: Db
    skills: Skills
    clock: Clock
    # (userId, endpointId) -> that user's endpoint's tools and input schemas, or None: for a grant narrowed to
    # hosted endpoints (policy/scope_checks.py). None: such a narrowing is refused as naming no endpoint.
    endpoint_tools: Callable[[str, str], Mapping[str, Mapping[str, Any]] | None] | None = None
    # userId -> the user's installed catalog skills (packages/installs.py), shown and granted beside the
    # built-in ones. None: no installs.
    installed: Callable[[str], Sequence[skill_service.Installed]] | None = None


def register(routes: Routes, deps: SkillDeps) -> None:
    def installed_of(user_id: str) -> Sequence[skill_service.Installed]:
        return deps.installed(user_id) if deps.installed is not None else ()

    def installed_one(user_id: str, skill_id: str) -> SkillManifest | None:
        if deps.skills.manifest(skill_id) is not None:
            return None
        found = skill_service.find(deps.skills, skill_id, installed_of(user_id))
        return found[0] if found else None

    @routes.route("GET", "/rpc/skills", query=Paging, response=Page[views.CatalogItem])
    def list_skills(caller: Caller, query: Paging) -> Page[views.CatalogItem]:
        """Every registered skill, then the caller's installed catalog skills (their serving version and trust
        level), with the caller's switch and grants."""
        entries = skill_service.catalog(deps.db, deps.skills, caller.user_id,
                                        installed=lambda: installed_of(caller.user_id))
        items, cursor = paging.page(entries, lambda entry: entry.manifest.skill_id, limit=query.limit,
                                    cursor=query.cursor)
        return Page(items=[views.catalog_item(entry) for entry in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/skills/runs", query=Paging, response=Page[run_views.RunRecord])
    def list_skill_runs(caller: Caller, query: Paging) -> Page[run_views.RunRecord]:
        """The caller's recent runs."""
        items, cursor = run_store.list_runs(deps.db, caller.user_id, limit=query.limit, cursor=query.cursor)
        return Page(items=[run_views.run_record(r) for r in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/skills/permissions", query=Paging, response=Page[views.Grant])
    def list_permissions(caller: Caller, query: Paging) -> Page[views.Grant]:
        """The caller's grants, active and revoked."""
        items, cursor = grant_store.list_grants(deps.db, caller.user_id, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.grant(g) for g in items], next_cursor=cursor)

    @routes.route("PATCH", "/rpc/skills/permissions", body=request("PatchPermission"), response=views.Grant,
                  errors=(e.SkillNotFound, e.AgentNotFound, e.NotFound, e.PermissionNotDeclared, e.ValidationFailed,
                          e.VersionConflict, e.ConcurrentUpdate), decision="person")
    def patch_permission(caller: Caller, body: PatchPermission) -> views.Grant:
        """Grant or revoke a permission a skill declares, for the user or one agent, optionally narrowed to
        resources (agents, hosted endpoints and their tools) and argument constraints (`scope.resources`,
        `scope.arguments`). Another user's agent or endpoint is 404, as if it did not exist."""
        installed = installed_one(caller.user_id, body.skill_id)
        manifest = deps.skills.manifest(body.skill_id) or installed
        requirement = manifest.requirement(body.permission_code) if manifest is not None else None
        if body.granted and requirement is not None and requirement.risk_level in HIGH_RISK:
            require_person(caller, recent=True)  # granting L3 or above: a recent sign-in too
        from skillcore.api.requests.skills import AgentScope  # loaded with the body's model, just before

        scope = grants.GrantScope.agent(body.scope.agent_id) if isinstance(body.scope, AgentScope) else grants.GrantScope.user()
        lookup = deps.endpoint_tools
        grant = permissions.set_permission(
            deps.db, deps.skills, caller.user_id, skill_id=body.skill_id, code=body.permission_code, scope=scope,
            granted=body.granted, now=deps.clock(), caller_kind=caller.kind, narrowing=body.scope.narrowing(),
            endpoint_tools=(lambda endpoint_id: lookup(caller.user_id, endpoint_id)) if lookup else None,
            installed=installed,
        )
        return views.grant(grant)

    def audit_page(user_id: str, query: AuditQuery) -> Page[views.AuditEvent]:
        wanted = audit_store.AuditFilter(skill_id=query.skill_id, action=query.action, decision=query.decision,
                                         endpoint_id=query.endpoint_id, since=query.since, until=query.until)
        items, cursor = audit_store.query_audit(deps.db, user_id, wanted, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.audit_event(a) for a in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/skills/audit-events", query=request("AuditQuery"), response=Page[views.AuditEvent])
    def list_audit_events(caller: Caller, query: AuditQuery) -> Page[views.AuditEvent]:
        """The caller's audit events, newest first, filtered by skill, action, outcome, endpoint and time range.
        A filtered page may hold fewer than `limit` events (even none) and still a `nextCursor`: follow it."""
        return audit_page(caller.user_id, query)

    @routes.route("GET", "/rpc/admin/audit-events", query=request("AdminAuditQuery"), response=Page[views.AuditEvent],
                  admin=True)
    def admin_list_audit_events(_: Caller, query: AdminAuditQuery) -> Page[views.AuditEvent]:
        """Operator: one user's audit events, with the same filters."""
        return audit_page(query.user_id, query)

    # The static /rpc/skills/* routes win over this parameter route (the router sorts them first).
    @routes.route("PATCH", "/rpc/skills/<skillId>", body=request("PatchSkill"), response=views.CatalogItem,
                  errors=(e.SkillNotFound, e.ConcurrentUpdate), decision="person")
    def patch_skill(caller: Caller, skillId: str, body: PatchSkill) -> views.CatalogItem:  # noqa: N803
        """Enable or disable a skill for the caller."""
        installed = () if deps.skills.manifest(skillId) is not None else installed_of(caller.user_id)
        return views.catalog_item(skill_service.set_enabled(deps.db, deps.skills, caller.user_id, skillId,
                                                            body.enabled, deps.clock(), installed=installed))
