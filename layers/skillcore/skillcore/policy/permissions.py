"""Permission grants (GET/PATCH /rpc/skills/permissions). Every grant and revoke is audited."""

from __future__ import annotations

from datetime import datetime

from skillcore.conversations import agent_store
from skillcore.db.dynamo import Db
from skillcore.errors import AgentNotFound, PermissionNotDeclared, SkillNotFound
from skillcore.ids import new_id
from skillcore.policy import audit_store, grant_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.grants import GrantScope, PermissionGrant
from skillcore.skills.builtin import Skills


def set_permission(
    db: Db, skills: Skills, user_id: str, *, skill_id: str, code: str, scope: GrantScope, granted: bool, now: datetime,
    caller_kind: str | None = None,
) -> PermissionGrant:
    manifest = skills.manifest(skill_id)
    if manifest is None:
        raise SkillNotFound()
    if manifest.requirement(code) is None:
        raise PermissionNotDeclared(
            f"{skill_id} does not declare {code}", {"declared": [p.code for p in manifest.permissions]},
        )
    if scope.agent_id is not None and agent_store.get_agent(db, user_id, scope.agent_id) is None:
        raise AgentNotFound()
    grant = grant_store.set_grant(
        db, user_id=user_id, skill_id=skill_id, skill_version=manifest.version, code=code, scope=scope,
        granted=granted, grant_id=new_id(now), now=now,
    )
    audit_store.put_audit(db, AuditEvent(
        event_id=new_id(now), user_id=user_id, at=now, skill_id=skill_id, skill_version=manifest.version,
        action=AuditAction.PERMISSION_GRANT if granted else AuditAction.PERMISSION_REVOKE,
        decision=Decision.SUCCEEDED, scope=scope, target_id=scope.agent_id, reason="user_request",
        metadata=AuditMetadata(permission_codes=(code,), matched_grant_ids=(grant.grant_id,), caller_kind=caller_kind),
    ))
    return grant
