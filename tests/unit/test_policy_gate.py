"""PolicyGate: every branch of the pure decision, table-driven."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from skillcore.policy.gate import PolicyInput, Reason, decide
from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant
from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel

T = datetime(2026, 12, 2, tzinfo=UTC)
READ = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT)
WRITE = PermissionRequirement(code="memory:write", risk_level=RiskLevel.L2, approval_mode=ApprovalMode.PERSISTENT)
FREE = PermissionRequirement(code="compute:run", risk_level=RiskLevel.L0, approval_mode=ApprovalMode.NONE)
PER_OP = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PER_OPERATION)
L3 = PermissionRequirement(code="external:write", risk_level=RiskLevel.L3, approval_mode=ApprovalMode.PERSISTENT)
L4 = PermissionRequirement(code="payment:send", risk_level=RiskLevel.L4, approval_mode=ApprovalMode.PERSISTENT)


def grant(code="memory:read", scope=None, *, user="u1", skill="memory-recall", version="1.0.0", status=GrantStatus.ACTIVE, gid="g1"):
    return PermissionGrant(
        grant_id=gid, user_id=user, skill_id=skill, skill_version=version, permission_code=code,
        scope=scope or GrantScope.user(), status=status, granted_at=T, updated_at=T,
    )


def ask(requirements, grants=(), *, version="1.0.0", agent="a1", user="u1"):
    return decide(PolicyInput(
        user_id=user, skill_id="memory-recall", skill_version=version, requirements=tuple(requirements),
        action="tool.execute", agent_id=agent, target_id=agent, grants=tuple(grants),
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
