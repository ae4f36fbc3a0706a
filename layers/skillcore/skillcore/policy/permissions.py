"""Permission grants (GET/PATCH /rpc/skills/permissions). Every grant and revoke is audited. A grant may be
narrowed (policy/scopes.py), checked before it is stored (policy/scope_checks.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from skillcore.conversations import agent_store
from skillcore.db.dynamo import Db
from skillcore.errors import AgentNotFound, PermissionNotDeclared, SkillNotFound
from skillcore.ids import new_id
from skillcore.policy import audit_store, grant_store, scope_checks
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision, audit_code
from skillcore.policy.grants import GrantScope, PermissionGrant
from skillcore.policy.scopes import Narrowing
from skillcore.skills.manifest import SkillManifest
from skillcore.skills.registries import Skills


def tool_input_schema(skills: Skills, skill_id: str) -> dict[str, Any] | None:
    """A tool skill's input schema (the arguments a narrowing may constrain); None for any other skill."""
    definition = skills.tools.latest(skill_id)
    return definition.input_model.model_json_schema() if definition is not None else None


def check_narrowing(
    db: Db, skills: Skills, user_id: str, *, skill_id: str, scope: GrantScope, narrowing: Narrowing,
    endpoint_tools: scope_checks.EndpointTools | None,
) -> None:
    scope_checks.check(narrowing, scope_checks.ScopeSubject(
        scope_type=scope.type, tool_schema=tool_input_schema(skills, skill_id),
        proxied=skills.proxied.latest(skill_id) is not None,
        agent_exists=lambda agent_id: agent_store.get_agent(db, user_id, agent_id) is not None,
        endpoint_tools=endpoint_tools,
    ))


def set_permission(
    db: Db, skills: Skills, user_id: str, *, skill_id: str, code: str, scope: GrantScope, granted: bool, now: datetime,
    caller_kind: str | None = None, narrowing: Narrowing | None = None,
    endpoint_tools: scope_checks.EndpointTools | None = None, installed: SkillManifest | None = None,
) -> PermissionGrant:
    """Grants or revokes; a grant with a narrowing holds only within it (`endpoint_tools` reads the owner's
    hosted endpoints for a narrowing that names one). `installed`: the caller's installed catalog skill of this
    id (its serving version), granted as a built-in skill is."""
    manifest = skills.manifest(skill_id) or (installed if installed and installed.skill_id == skill_id else None)
    if manifest is None:
        raise SkillNotFound()
    if manifest.requirement(code) is None:
        raise PermissionNotDeclared(
            f"{skill_id} does not declare {code}", {"declared": [p.code for p in manifest.permissions]},
        )
    if scope.agent_id is not None and agent_store.get_agent(db, user_id, scope.agent_id) is None:
        raise AgentNotFound()
    if narrowing and granted:
        check_narrowing(db, skills, user_id, skill_id=skill_id, scope=scope, narrowing=narrowing,
                        endpoint_tools=endpoint_tools)
    grant = grant_store.set_grant(
        db, user_id=user_id, skill_id=skill_id, skill_version=manifest.version, code=code, scope=scope,
        granted=granted, grant_id=new_id(now), now=now, narrowing=narrowing if granted else None,
    )
    resources, arguments = grant.narrowing.audit_codes() if granted and grant.narrowing else ((), ())
    audit_store.put_audit(db, AuditEvent(
        event_id=new_id(now), user_id=user_id, at=now, skill_id=skill_id, skill_version=manifest.version,
        action=AuditAction.PERMISSION_GRANT if granted else AuditAction.PERMISSION_REVOKE,
        decision=Decision.SUCCEEDED, scope=scope, target_id=scope.agent_id, reason="user_request",
        metadata=AuditMetadata(permission_codes=(code,), matched_grant_ids=(grant.grant_id,), caller_kind=caller_kind,
                               scope_resources=tuple(audit_code(r) for r in resources),
                               scope_arguments=tuple(audit_code(a) for a in arguments)),
    ))
    return grant
