"""The rules of installs and rollouts, without a store: compatible upgrades (packages/upgrades.py), which version
serves an install (packages/installs.py `serving`), the canary share, the trust levels' rule (packages/trust.py),
the canary's verdict (packages/rollout.py `judge`) and the ToolRunner's outcome kinds."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from skillcore.errors import TrustLevelForbidden
from skillcore.outcomes.store import Counts, bucket_of, window_buckets
from skillcore.packages import trust, upgrades
from skillcore.packages.installs import InstalledSkill, serving, skill_manifest
from skillcore.packages.models import Install, Permission, Rollout, TrustLevel, VersionRef
from skillcore.packages.rollout import RolloutSettings, judge
from skillcore.settings import Settings
from skillcore.tools.runner import ToolStatus, _outcome

NOW = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)


def perm(code: str, risk: str = "L1") -> Permission:
    return Permission(code=code, risk_level=risk, approval_mode="persistent")


def ref(version: str, *perms: Permission, narrowed: bool = False) -> VersionRef:
    return VersionRef(version=version, release_id=f"r-{version}", permissions=perms, input_narrowed=narrowed)


READ = perm("memory:read")
V1 = ref("1.0.0", READ)


def install(current: VersionRef = V1, previous: VersionRef | None = None) -> Install:
    return Install(user_id="u-1", skill_id="tidy", publisher_id="acme", trust_level=TrustLevel.COMMUNITY,
                   current=current, previous=previous, installed_at=NOW, updated_at=NOW)


@pytest.mark.parametrize(("new", "expected"), [
    (ref("1.1.0", READ), True),
    (ref("1.0.1"), True),  # fewer permissions
    (ref("1.1.0", READ, perm("memory:write", "L2")), False),  # a new permission
    (ref("1.1.0", perm("memory:read", "L2")), False),  # a raised risk
    (ref("1.1.0", READ, narrowed=True), False),  # a narrowed input
    (ref("2.0.0", READ), False),  # a new major
])
def test_a_compatible_upgrade_is_same_major_no_new_permission_no_raised_risk_no_narrowed_input(
        new: VersionRef, expected: bool) -> None:
    assert upgrades.compatible(V1, new) is expected


def test_a_narrowed_input_schema_is_found() -> None:
    old = {"b": {"type": "object", "properties": {"text": {"type": "string"}}, "required": []}}
    assert not upgrades.input_narrowed(old, old)
    widened = {"b": {"type": "object", "properties": {"text": {"type": "string"}, "tag": {"type": "string"}},
                     "required": []}}
    assert not upgrades.input_narrowed(old, widened)
    assert upgrades.input_narrowed(old, {})  # the binding removed
    assert upgrades.input_narrowed(old, {"b": {**old["b"], "required": ["text"]}})
    assert upgrades.input_narrowed(old, {"b": {**old["b"], "properties": {"text": {"type": "string", "maxLength": 5}}}})
    assert upgrades.input_narrowed(old, {"b": {**old["b"], "additionalProperties": False}})


def test_the_canary_share_is_deterministic_and_about_its_percent() -> None:
    users = [f"user-{i}" for i in range(4000)]
    inside = [u for u in users if upgrades.in_canary(u, "1.1.0", 10)]
    assert 300 < len(inside) < 500
    assert inside == [u for u in users if upgrades.in_canary(u, "1.1.0", 10)]
    assert inside != [u for u in users if upgrades.in_canary(u, "1.2.0", 10)]  # a new draw for every version
    assert not any(upgrades.in_canary(u, "1.1.0", 0) for u in users)
    assert all(upgrades.in_canary(u, "1.1.0", 100) for u in users)


def test_which_version_serves() -> None:
    compatible, risky = ref("1.1.0", READ), ref("1.2.0", READ, perm("memory:write", "L2"))
    # a compatible stable version applies by itself
    assert serving(install(), Rollout(skill_id="tidy", stable=compatible), "u-1", 10).serving == compatible
    # a canary reaches only its share
    rollout = Rollout(skill_id="tidy", stable=V1, canary=compatible, canary_since=NOW)
    assert serving(install(), rollout, "u-1", 100).serving == compatible
    assert serving(install(), rollout, "u-1", 100).canary is True
    assert serving(install(), rollout, "u-1", 0).serving == V1
    # an upgrade with a new permission waits for consent; the installed version keeps serving
    waiting = serving(install(), Rollout(skill_id="tidy", stable=risky), "u-1", 10)
    assert (waiting.serving, waiting.pending) == (V1, risky)
    # a rolled back version is never served: the previous one is
    gone = Rollout(skill_id="tidy", stable=V1, rolled_back=("1.2.0",))
    assert serving(install(current=risky, previous=V1), gone, "u-1", 10).serving == V1
    assert serving(install(current=risky, previous=V1), gone, "u-1", 10).pending is None
    assert serving(install(), None, "u-1", 10).serving == V1


def test_the_serving_version_as_a_manifest_is_a_package_source() -> None:
    installed = InstalledSkill(skill_id="tidy-notes", version="1.1.0", release_id="r", permissions=(READ,),
                               publisher_id="acme", trust_level=TrustLevel.VERIFIED, installed_version="1.0.0",
                               installed_at=NOW, updated_at=NOW)
    manifest = skill_manifest(installed)
    assert (manifest.skill_id, manifest.version, manifest.source) == ("tidy-notes", "1.1.0", "package")
    assert [p.code for p in manifest.permissions] == ["memory:read"]


def test_only_the_allowed_trust_levels_ask_for_l3_and_above() -> None:
    high = (READ, perm("hosted_workflow:invoke", "L3"))
    trust.check("verified_publisher", high, trust.DEFAULT_HIGH_RISK)
    trust.check("community", (READ,), trust.DEFAULT_HIGH_RISK)
    with pytest.raises(TrustLevelForbidden) as refused:
        trust.check("community", high, trust.DEFAULT_HIGH_RISK)
    assert refused.value.details == {"trustLevel": "community", "permission": "hosted_workflow:invoke",
                                     "riskLevel": "L3", "allowed": ["builtin", "verified_publisher"]}
    with pytest.raises(TrustLevelForbidden):
        trust.check("verified_publisher", high, ())


def test_the_setting_names_trust_levels() -> None:
    env = {"SKILLS_HIGH_RISK_TRUST_LEVELS": "builtin, community"}
    assert Settings.from_env(env).high_risk_trust_levels == ("builtin", "community")
    assert Settings.from_env({"SKILLS_HIGH_RISK_TRUST_LEVELS": ""}).high_risk_trust_levels == ()
    with pytest.raises(ValueError, match="unknown trust levels: anyone"):
        Settings.from_env({"SKILLS_HIGH_RISK_TRUST_LEVELS": "anyone"})
    with pytest.raises(ValueError, match="SKILLS_CANARY_PERCENT"):
        Settings.from_env({"SKILLS_CANARY_PERCENT": "101"})


SETTINGS = RolloutSettings(canary_percent=10, window_minutes=60, min_calls=20, threshold_percent=20)


@pytest.mark.parametrize(("canary", "stable", "window_passed", "action"), [
    (Counts(calls=19, failures=19), Counts(), True, "wait"),  # too few calls to judge
    (Counts(calls=20, failures=5), Counts(calls=100, failures=1), False, "rollback"),  # 25% against 1%
    (Counts(calls=20, timeouts=2, denials=2), Counts(calls=100, failures=1), False, "wait"),  # 20% against 1%: within
    (Counts(calls=20, failures=1), Counts(calls=100, failures=1), False, "wait"),  # the window has not passed
    (Counts(calls=20, failures=1), Counts(calls=100, failures=1), True, "promote"),
    (Counts(calls=40, failures=30), Counts(calls=40, failures=28), True, "promote"),  # as bad as the previous
])
def test_the_canary_verdict(canary: Counts, stable: Counts, window_passed: bool, action: str) -> None:
    verdict = judge(canary, stable, canary_score=1.0, stable_score=1.0, settings=SETTINGS, window_passed=window_passed)
    assert verdict.action == action


def test_a_lower_eval_score_rolls_back() -> None:
    verdict = judge(Counts(calls=20), Counts(calls=20), canary_score=0.5, stable_score=1.0, settings=SETTINGS,
                    window_passed=True)
    assert (verdict.action, verdict.reason) == ("rollback", "eval_score")


def test_outcome_buckets_and_kinds() -> None:
    assert bucket_of(NOW) == int(NOW.timestamp() // 300)
    assert window_buckets(NOW, 60) == list(range(bucket_of(NOW) - 11, bucket_of(NOW) + 1))
    assert window_buckets(NOW, 60, since=NOW) == [bucket_of(NOW)]
    assert _outcome(ToolStatus.SUCCEEDED, None) == "succeeded"
    assert _outcome(ToolStatus.DENIED, None) == "denied"
    assert _outcome(ToolStatus.FAILED, "timeout") == "timeout"
    assert _outcome(ToolStatus.FAILED, "sandbox_timeout") == "timeout"
    assert _outcome(ToolStatus.FAILED, "handler_error") == "failed"
