"""PolicyGate: every branch of the pure decision, table-driven."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from skillcore.policy.gate import OperationApproval, PolicyInput, Reason, decide
from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant
from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel

T = datetime(2026, 12, 2, tzinfo=UTC)
READ = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT)
WRITE = PermissionRequirement(code="memory:write", risk_level=RiskLevel.L2, approval_mode=ApprovalMode.PERSISTENT)
FREE = PermissionRequirement(code="compute:run", risk_level=RiskLevel.L0, approval_mode=ApprovalMode.NONE)
PER_OP = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PER_OPERATION)
L3 = PermissionRequirement(code="external:write", risk_level=RiskLevel.L3, approval_mode=ApprovalMode.PERSISTENT)
L4 = PermissionRequirement(code="payment:send", risk_level=RiskLevel.L4, approval_mode=ApprovalMode.PERSISTENT)
L3_OP = PermissionRequirement(code="hosted_workflow:invoke", risk_level=RiskLevel.L3, approval_mode=ApprovalMode.PER_OPERATION)
L4_OP = PermissionRequirement(code="payment:send", risk_level=RiskLevel.L4, approval_mode=ApprovalMode.PER_OPERATION)
NEEDS_APPROVAL = OperationApproval(requires_approval=True, approved=False)
APPROVED = OperationApproval(requires_approval=True, approved=True)
NO_APPROVAL_NEEDED = OperationApproval(requires_approval=False, approved=False)


def grant(code="memory:read", scope=None, *, user="u1", skill="memory-recall", version="1.0.0", status=GrantStatus.ACTIVE, gid="g1"):
    return PermissionGrant(
        grant_id=gid, user_id=user, skill_id=skill, skill_version=version, permission_code=code,
        scope=scope or GrantScope.user(), status=status, granted_at=T, updated_at=T,
    )


def ask(requirements, grants=(), *, version="1.0.0", agent="a1", user="u1", operation=None):
    return decide(PolicyInput(
        user_id=user, skill_id="memory-recall", skill_version=version, requirements=tuple(requirements),
        action="tool.execute", agent_id=agent, target_id=agent, grants=tuple(grants), operation=operation,
    ))


CASES = [
    # (name, requirements, grants, version, allowed, reason, missing)
    ("no requirements", [], [], "1.0.0", True, Reason.NO_PERMISSION_NEEDED, ()),
    ("approval none", [FREE], [], "1.0.0", True, Reason.NO_PERMISSION_NEEDED, ()),
    ("persistent, no grant", [READ], [], "1.0.0", False, Reason.GRANT_MISSING, ("memory:read",)),
    ("persistent, user grant", [READ], [grant()], "1.0.0", True, Reason.ALLOWED, ()),
    ("persistent, agent grant", [READ], [grant(scope=GrantScope.agent("a1"))], "1.0.0", True, Reason.ALLOWED, ()),
    ("grant for another agent", [READ], [grant(scope=GrantScope.agent("a2"))], "1.0.0", False, Reason.GRANT_MISSING, ("memory:read",)),
    ("revoked grant", [READ], [grant(status=GrantStatus.REVOKED)], "1.0.0", False, Reason.GRANT_MISSING, ("memory:read",)),
    ("another user's grant", [READ], [grant(user="u2")], "1.0.0", False, Reason.GRANT_MISSING, ("memory:read",)),
    ("another skill's grant", [READ], [grant(skill="memory-context")], "1.0.0", False, Reason.GRANT_MISSING, ("memory:read",)),
    ("another code", [READ], [grant(code="memory:write")], "1.0.0", False, Reason.GRANT_MISSING, ("memory:read",)),
    ("minor upgrade keeps the grant", [READ], [grant(version="1.0.0")], "1.3.2", True, Reason.ALLOWED, ()),
    ("major upgrade needs a new grant", [READ], [grant(version="1.0.0")], "2.0.0", False, Reason.GRANT_MISSING, ("memory:read",)),
    ("new code needs its own grant", [READ, WRITE], [grant()], "1.1.0", False, Reason.GRANT_MISSING, ("memory:write",)),
    ("both codes granted", [READ, WRITE], [grant(), grant(code="memory:write", gid="g2")], "1.0.0", True, Reason.ALLOWED, ()),
    ("per operation not open", [PER_OP], [grant()], "1.0.0", False, Reason.PER_OPERATION_NOT_OPEN, ("memory:read",)),
    ("L3 not open even with grant", [L3], [grant(code="external:write")], "1.0.0", False, Reason.RISK_L3_NOT_OPEN, ("external:write",)),
    ("L4 forbidden even with grant", [L4], [grant(code="payment:send")], "1.0.0", False, Reason.RISK_L4_FORBIDDEN, ("payment:send",)),
    ("L4 beside a granted L1", [READ, L4], [grant()], "1.0.0", False, Reason.RISK_L4_FORBIDDEN, ("payment:send",)),
]


HOSTED = grant(code="hosted_workflow:invoke", gid="gh")
OPERATION_CASES = [
    # (name, requirements, grants, operation, allowed, reason, missing)
    ("per operation without its operation", [L3_OP], [HOSTED], None, False, Reason.PER_OPERATION_NOT_OPEN, ("hosted_workflow:invoke",)),
    ("L3 per operation, no grant", [L3_OP], [], APPROVED, False, Reason.GRANT_MISSING, ("hosted_workflow:invoke",)),
    ("L3 per operation, grant, approval missing", [L3_OP], [HOSTED], NEEDS_APPROVAL, False, Reason.APPROVAL_REQUIRED, ()),
    ("L3 per operation, grant and approval", [L3_OP], [HOSTED], APPROVED, True, Reason.ALLOWED, ()),
    ("L3 per operation, tool needs no approval", [L3_OP], [HOSTED], NO_APPROVAL_NEEDED, True, Reason.ALLOWED, ()),
    ("an approval never stands in for the grant", [L3_OP], [grant(code="other:thing")], APPROVED, False, Reason.GRANT_MISSING, ("hosted_workflow:invoke",)),
    ("revoked grant with approval", [L3_OP], [grant(code="hosted_workflow:invoke", status=GrantStatus.REVOKED)], APPROVED, False, Reason.GRANT_MISSING, ("hosted_workflow:invoke",)),
    ("persistent L3 stays closed with an operation", [L3], [grant(code="external:write")], APPROVED, False, Reason.RISK_L3_NOT_OPEN, ("external:write",)),
    ("L4 stays forbidden per operation", [L4_OP], [grant(code="payment:send")], APPROVED, False, Reason.RISK_L4_FORBIDDEN, ("payment:send",)),
    ("L1 per operation with approval", [PER_OP], [grant()], APPROVED, True, Reason.ALLOWED, ()),
    ("grant missing is reported before the approval", [L3_OP, READ], [HOSTED], NEEDS_APPROVAL, False, Reason.GRANT_MISSING, ("memory:read",)),
]


@pytest.mark.parametrize(("name", "requirements", "grants", "operation", "allowed", "reason", "missing"), OPERATION_CASES,
                         ids=[c[0] for c in OPERATION_CASES])
def test_per_operation_decision(name, requirements, grants, operation, allowed, reason, missing):
    decision = ask(requirements, grants, operation=operation)
    assert decision.allowed is allowed
    assert decision.reason is reason
    assert decision.missing == missing
    assert decision.message


def test_approval_required_reports_the_matched_grant():
    decision = ask([L3_OP], [HOSTED], operation=NEEDS_APPROVAL)
    assert decision.matched_grants == (HOSTED,)
    assert decision.scope == GrantScope.user()


@pytest.mark.parametrize(("name", "requirements", "grants", "version", "allowed", "reason", "missing"), CASES, ids=[c[0] for c in CASES])
def test_decision(name, requirements, grants, version, allowed, reason, missing):
    decision = ask(requirements, grants, version=version)
    assert decision.allowed is allowed
    assert decision.reason is reason
    assert decision.missing == missing
    assert decision.message  # always a sentence usable in the reply


def test_agent_scope_preferred_and_reported():
    agent_grant = grant(scope=GrantScope.agent("a1"), gid="ga")
    decision = ask([READ], [grant(gid="gu"), agent_grant])
    assert decision.matched_grants == (agent_grant,)
    assert decision.scope == GrantScope.agent("a1")


def test_without_agent_only_user_scope_counts():
    assert not ask([READ], [grant(scope=GrantScope.agent("a1"))], agent=None).allowed
    assert ask([READ], [grant()], agent=None).allowed


def test_scope_model_rejects_inconsistent_scopes():
    with pytest.raises(ValueError):
        GrantScope(type="user", agent_id="a1")
    with pytest.raises(ValueError):
        GrantScope(type="agent")
