"""PolicyGate: the hard boundary between selecting a skill and executing it. A pure decision.

Input: who, which skill and version, the manifest's requirements, the scope candidates (the agent and
the user), the action and its target, the user's grants and, for a per-operation permission, what is known
of this one operation's approval. Output: allowed or not, the grants that matched, the permissions missing,
and a reason (a code for the audit, a sentence for the reply).

A grant narrowed to resources or argument constraints (policy/scopes.py) holds only for the calls within it:
of the grants that match a requirement, the first whose narrowing covers the call counts; when some match
and none covers it, the call is denied with `grant_scope_mismatch` and the first one's `Miss` (what missed:
the agent, the endpoint, the tool or an argument). `call` says what the call touches; without it only the
agent counts (an offer, a context injection, a background job). The narrowing is on the grant items the
caller already read: no request is added.

Risk levels open in steps: L0-L2 under a persistent grant; L3 (external write) only under a **per-operation**
requirement, which needs the persistent grant and, when the operation requires it, an approval of exactly
this operation; a persistent L3 requirement stays closed; L4 is never performed.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from msgspec import Struct

from skillcore.errors import (
    DomainError,
    GrantScopeMismatch,
    GrantScopeMismatchDetails,
    PermissionRequired,
    PermissionRequiredDetails,
)
from skillcore.policy.audit import audit_code
from skillcore.policy.grants import GrantScope, PermissionGrant, same_major
from skillcore.policy.scopes import Miss, ScopedCall, miss
from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel


class Reason(StrEnum):
    ALLOWED = "allowed"
    NO_PERMISSION_NEEDED = "no_permission_needed"
    GRANT_MISSING = "grant_missing"
    GRANT_SCOPE_MISMATCH = "grant_scope_mismatch"
    PER_OPERATION_NOT_OPEN = "per_operation_not_open"
    APPROVAL_REQUIRED = "approval_required"
    RISK_L3_NOT_OPEN = "risk_l3_not_open"
    RISK_L4_FORBIDDEN = "risk_l4_forbidden"


MESSAGES = {
    Reason.ALLOWED: "Allowed by an active permission grant.",
    Reason.NO_PERMISSION_NEEDED: "This skill needs no permission.",
    Reason.GRANT_MISSING: "This skill needs your permission first: grant it on the Skills page.",
    Reason.GRANT_SCOPE_MISMATCH: "This call is outside the scope of your grant: widen it on the Skills page.",
    Reason.PER_OPERATION_NOT_OPEN: "This permission is decided per operation, and no operation was named.",
    Reason.APPROVAL_REQUIRED: "This operation needs your approval first.",
    Reason.RISK_L3_NOT_OPEN: "External or high-impact actions are not available yet.",
    Reason.RISK_L4_FORBIDDEN: "Irreversible actions are never performed by skills.",
}


class OperationApproval(Struct, frozen=True, kw_only=True):
    """One operation under a per-operation permission: whether it needs an approval, and whether a usable one
    (approved, unused, unexpired, bound to this very operation: approvals/rules.py decides) was presented."""

    requires_approval: bool
    approved: bool


class PolicyInput(Struct, frozen=True):
    user_id: str
    skill_id: str
    skill_version: str
    requirements: tuple[PermissionRequirement, ...]
    action: str
    agent_id: str | None = None
    target_id: str | None = None
    grants: tuple[PermissionGrant, ...] = ()
    operation: OperationApproval | None = None
    call: ScopedCall | None = None  # what the call touches, for the grants' narrowing


class PolicyDecision(Struct, frozen=True):
    allowed: bool
    reason: Reason
    matched_grants: tuple[PermissionGrant, ...] = ()  # denied for the scope: the grants that did not cover it
    missing: tuple[str, ...] = ()
    scope: GrantScope | None = None
    miss: Miss | None = None  # grant_scope_mismatch: what fell outside the narrowing

    @property
    def message(self) -> str:
        return MESSAGES[self.reason]


def scope_candidates(agent_id: str | None) -> tuple[GrantScope, ...]:
    """The agent's own scope first (the narrower grant), then the user's."""
    return ((GrantScope.agent(agent_id),) if agent_id else ()) + (GrantScope.user(),)


def _matching_grants(
    grants: Iterable[PermissionGrant], request: PolicyInput, code: str, candidates: tuple[GrantScope, ...]
) -> list[PermissionGrant]:
    """The active grants of this code that hold for this version, in the candidates' order (the narrower first)."""
    grants = tuple(grants)
    return [
        grant for scope in candidates for grant in grants
        if (
            grant.active
            and grant.user_id == request.user_id
            and grant.skill_id == request.skill_id
            and grant.permission_code == code
            and grant.scope == scope
            and same_major(grant.skill_version, request.skill_version)
        )
    ]


def decide(request: PolicyInput) -> PolicyDecision:
    # Blocked risk levels deny whatever grants exist. L3 is open only where every use is decided per
    # operation; a per-operation permission is never decided without its operation.
    per_operation = False
    for requirement in request.requirements:
        if requirement.risk_level is RiskLevel.L4:
            return PolicyDecision(False, Reason.RISK_L4_FORBIDDEN, missing=(requirement.code,))
        if requirement.approval_mode is ApprovalMode.PER_OPERATION:
            if request.operation is None:
                return PolicyDecision(False, Reason.PER_OPERATION_NOT_OPEN, missing=(requirement.code,))
            per_operation = True
        elif requirement.risk_level is RiskLevel.L3:
            return PolicyDecision(False, Reason.RISK_L3_NOT_OPEN, missing=(requirement.code,))

    candidates = scope_candidates(request.agent_id)
    matched: list[PermissionGrant] = []
    missing: list[str] = []
    outside: tuple[PermissionGrant, Miss] | None = None
    for requirement in request.requirements:
        if requirement.approval_mode is ApprovalMode.NONE:
            continue
        found = _matching_grants(request.grants, request, requirement.code, candidates)
        if not found:
            missing.append(requirement.code)
            continue
        misses = [(grant, miss(grant.narrowing, request.agent_id, request.call)) for grant in found]
        covering = next((grant for grant, missed in misses if missed is None), None)
        if covering is not None:
            matched.append(covering)
        elif outside is None:
            grant, missed = misses[0]
            outside = (grant, missed) if missed is not None else None
    if missing:
        return PolicyDecision(False, Reason.GRANT_MISSING, tuple(matched), tuple(missing))
    if outside is not None:
        grant, missed = outside
        return PolicyDecision(False, Reason.GRANT_SCOPE_MISMATCH, (grant,), (grant.permission_code,),
                              scope=grant.scope, miss=missed)
    # The grant comes first (a missing grant is what the user must fix first); then this operation's approval.
    operation = request.operation
    if per_operation and operation is not None and operation.requires_approval and not operation.approved:
        return PolicyDecision(False, Reason.APPROVAL_REQUIRED, tuple(matched), scope=matched[0].scope if matched else None)
    if not matched:
        return PolicyDecision(True, Reason.NO_PERMISSION_NEEDED)
    return PolicyDecision(True, Reason.ALLOWED, tuple(matched), scope=matched[0].scope)


def permission_required_details(
    skill_id: str, missing: tuple[str, ...], requirements: tuple[PermissionRequirement, ...] = ()
) -> PermissionRequiredDetails:
    """`details` of every 422 `permission_required`: which skill needs which permission, so a client can
    offer the very grant (`PATCH /rpc/skills/permissions` takes the same two fields)."""
    codes = list(missing) or [p.code for p in requirements]
    return PermissionRequiredDetails(skillId=skill_id, permissionCode=codes[0] if codes else None,
                                     missingPermissions=codes)


def refusal(skill_id: str, decision: PolicyDecision, requirements: tuple[PermissionRequirement, ...] = ()) -> DomainError:
    """The API error of a denied decision for want of a grant: 403 `grant_scope_mismatch` when a grant exists
    and the call is outside its narrowing, else 422 `permission_required`."""
    if decision.reason is Reason.GRANT_SCOPE_MISMATCH and decision.miss is not None and decision.matched_grants:
        grant = decision.matched_grants[0]
        details = GrantScopeMismatchDetails(skillId=skill_id, permissionCode=grant.permission_code,
                                            grantId=grant.grant_id, mismatch=decision.miss.mismatch.value)
        if decision.miss.argument is not None:
            details["argument"] = decision.miss.argument
        return GrantScopeMismatch(decision.message, details)
    return PermissionRequired(decision.message, permission_required_details(skill_id, decision.missing, requirements))


def mismatch_metadata(decision: PolicyDecision) -> dict[str, str]:
    """The audit metadata of a denial for the scope (AuditMetadata's `scope_mismatch`, `scope_argument`): codes
    and a name the tool's schema declares (a name that is not a code is recorded as a placeholder)."""
    if decision.miss is None:
        return {}
    found = {"scope_mismatch": decision.miss.mismatch.value}
    if decision.miss.argument is not None:
        found["scope_argument"] = audit_code(decision.miss.argument)
    return found
