"""Bodies of the skills catalog, the permission grants and the audit trail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET, UnsetType
from pydantic.alias_generators import to_camel

from skillcore.api.views import Body, Time, maybe_time, time
from skillcore.policy.audit import AuditAction, Decision
from skillcore.policy.grants import GrantStatus, ScopeType
from skillcore.policy.scopes import ResourceKind
from skillcore.skills.manifest import ApprovalMode, RiskLevel, SkillKind

if TYPE_CHECKING:
    from skillcore.policy.audit import AuditEvent as AuditRecord
    from skillcore.policy.grants import GrantScope as DomainScope
    from skillcore.policy.grants import PermissionGrant
    from skillcore.policy.scopes import Narrowing
    from skillcore.policy.skills import CatalogEntry


class Permission(Body, frozen=True, kw_only=True):
    code: str
    risk_level: RiskLevel
    approval_mode: ApprovalMode
    granted: bool


class CatalogItem(Body, frozen=True, kw_only=True):
    skill_id: str
    version: str
    kind: SkillKind
    name: str
    description: str
    enabled: bool
    permissions: list[Permission]
    # builtin, or an installed catalog skill's: verified_publisher, community
    trust_level: str


class Scope(Body, frozen=True, kw_only=True):
    type: ScopeType
    agent_id: str | UnsetType = UNSET


class ScopeResource(Body, frozen=True, kw_only=True):
    kind: ResourceKind
    id: str
    tools: list[str] | UnsetType = UNSET


class ArgumentConstraint(Body, frozen=True, kw_only=True):
    name: str
    tool: str | UnsetType = UNSET
    enum: list[str | bool | int | float] | UnsetType = UNSET
    maximum: int | float | UnsetType = UNSET
    max_length: int | UnsetType = UNSET


class GrantScope(Body, frozen=True, kw_only=True):
    """The grant's scope: the user or one agent, and what it is narrowed to (absent: unscoped)."""

    type: ScopeType
    agent_id: str | UnsetType = UNSET
    resources: list[ScopeResource] | UnsetType = UNSET
    arguments: list[ArgumentConstraint] | UnsetType = UNSET
    unreadable: bool | UnsetType = UNSET  # a stored narrowing that cannot be read back: the grant covers nothing


class Grant(Body, frozen=True, kw_only=True):
    grant_id: str
    skill_id: str
    skill_version: str
    permission_code: str
    scope: GrantScope
    status: GrantStatus
    granted_at: Time
    revoked_at: Time | UnsetType = UNSET
    updated_at: Time


class AuditEvent(Body, frozen=True, kw_only=True):
    event_id: str
    at: Time
    skill_id: str
    skill_version: str
    action: AuditAction
    decision: Decision
    scope: Scope | UnsetType = UNSET
    target_id: str | UnsetType = UNSET
    reason: str | UnsetType = UNSET
    # The set fields of the audit's typed metadata (policy/audit.py AuditMetadata: codes, ids, digests and
    # counts, never free text), camelCased. Kept open here so that a new metadata field needs no API change.
    metadata: dict[str, Any]


def catalog_item(entry: CatalogEntry) -> CatalogItem:
    m = entry.manifest
    return CatalogItem(
        skill_id=m.skill_id, version=m.version, kind=m.kind, name=m.name, description=m.description,
        enabled=entry.enabled, trust_level=entry.trust_level,
        permissions=[
            Permission(code=p.code, risk_level=p.risk_level, approval_mode=p.approval_mode,
                       granted=p.code in entry.granted)
            for p in m.permissions
        ],
    )


def scope(s: DomainScope) -> Scope:
    return Scope(type=s.type, agent_id=s.agent_id or UNSET)


def grant_scope(s: DomainScope, narrowing: Narrowing | None) -> GrantScope:
    if not narrowing:
        return GrantScope(type=s.type, agent_id=s.agent_id or UNSET)
    return GrantScope(
        type=s.type, agent_id=s.agent_id or UNSET,
        resources=[ScopeResource(kind=r.kind, id=r.id, tools=list(r.tools) if r.tools else UNSET)
                   for r in narrowing.resources] or UNSET,
        arguments=[ArgumentConstraint(
            name=a.name, tool=a.tool if a.tool is not None else UNSET,
            enum=list(a.enum) if a.enum is not None else UNSET,
            maximum=a.maximum if a.maximum is not None else UNSET,
            max_length=a.max_length if a.max_length is not None else UNSET) for a in narrowing.arguments] or UNSET,
        unreadable=True if narrowing.unreadable else UNSET,
    )


def grant(g: PermissionGrant) -> Grant:
    return Grant(grant_id=g.grant_id, skill_id=g.skill_id, skill_version=g.skill_version,
                 permission_code=g.permission_code, scope=grant_scope(g.scope, g.narrowing), status=g.status,
                 granted_at=time(g.granted_at), revoked_at=maybe_time(g.revoked_at) or UNSET,
                 updated_at=time(g.updated_at))


def audit_event(e: AuditRecord) -> AuditEvent:
    return AuditEvent(
        event_id=e.event_id, at=time(e.at), skill_id=e.skill_id, skill_version=e.skill_version, action=e.action,
        decision=e.decision, scope=scope(e.scope) if e.scope else UNSET, target_id=e.target_id or UNSET,
        reason=e.reason or UNSET,
        metadata={to_camel(k): v for k, v in msgspec.to_builtins(e.metadata).items()},  # set fields only
    )
