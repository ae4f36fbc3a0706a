"""Canary and automatic rollback (docs/packages.md "Canary and automatic rollback").

When an operator approves a version newer than the skill's stable (published) one, it does not publish at once:
the release stays `approved` and becomes the skill's **canary**. Installs whose user falls in the canary share
(packages/upgrades.py `in_canary`, SKILLS_CANARY_PERCENT) and for whom it is a compatible upgrade are served it;
everyone else keeps the stable version. The tool calls of each version are counted (skillcore/outcomes/, by the
ToolRunner) and the scheduled scan evaluates every running canary (`evaluate`, ScanFunction, every 5 minutes):

- since the canary started (the last two windows of SKILLS_ROLLOUT_WINDOW_MINUTES at most), the canary's bad
  outcomes (tool failures, denials, timeouts) per call are compared with the stable version's over the same
  buckets;
- once the canary has SKILLS_ROLLOUT_MIN_CALLS calls, a failure rate more than
  SKILLS_ROLLBACK_THRESHOLD_PERCENT points above the stable version's (or a lower eval score in its release
  report) **rolls it back**: the release becomes `rolled_back` (never served again; every install that served
  it serves its previous version on its next read), the publisher's notice is stored on the release
  (`GET /rpc/releases/{releaseId}` `rollback`: the rule and the counts) and `package.rollback` is audited in
  the publisher account's trail;
- once the window has passed since it started, with enough calls and not worse, it is **promoted**: published,
  the catalog's newest version, the rollout's stable one (`package.promote` audited).

The evaluation runs in the scan rather than on each outcome: a tool call pays one counter update and nothing
more, and one place decides, once per canary per scan, under the rollout's optimistic lock. The first version
of a skill, a version not newer than the stable one, and every approval while SKILLS_CANARY_PERCENT is 0 publish
at once. While a canary runs, approving another version of the same skill is 409 `canary_running`.

DynamoDB requests of one evaluation: 1 Query (the running canaries) + per canary 2 GetItems (its release and the
stable one's, for their eval scores) and one BatchGetItem per 100 counter buckets; a decision is one
TransactWriteItems (release, version, rollout, catalog skill when promoted, audit), after a GetItem of the
catalog skill when promoted.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from msgspec import Struct
from msgspec.structs import replace

from skillcore.db.dynamo import Db
from skillcore.db.transact import Op
from skillcore.errors import ConcurrentUpdate, ReleaseNotPending
from skillcore.ids import new_id
from skillcore.observability import logger
from skillcore.outcomes import store as outcomes
from skillcore.packages import install_store, store, upgrades
from skillcore.packages.models import (
    CatalogSkill,
    CheckReport,
    Release,
    ReleaseState,
    RollbackNotice,
    Rollout,
    VersionRef,
)
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision

ROLLOUT_ACTOR = "rollout"
FAILURE_RATE = "failure_rate"
EVAL_SCORE = "eval_score"


class RolloutSettings(Struct, frozen=True, kw_only=True):
    canary_percent: int = 10
    window_minutes: int = 60
    min_calls: int = 20
    threshold_percent: int = 20


def version_ref(release: Release, *, input_narrowed: bool = False) -> VersionRef:
    return VersionRef(version=release.version, release_id=release.release_id, permissions=release.permissions,
                      input_narrowed=input_narrowed, display_name=release.display_name,
                      when_to_use=release.when_to_use)


def _audit(db: Db, release: Release, action: AuditAction, now: datetime, decision: Decision, *,
           reason: str | None, calls: int | None = None) -> Op:
    event = AuditEvent(event_id=new_id(now), user_id=release.submitted_by, at=now, skill_id=release.skill_id,
                       skill_version=release.version, action=action, decision=decision, target_id=release.release_id,
                       reason=reason, metadata=AuditMetadata(publisher_id=release.publisher_id, status=release.state.value,
                                                             package_sha256=release.digest, results=calls))
    return Op("audit", audit_store.put_audit_op(db, event))


# -- an approval ------------------------------------------------------------------------------------

def starts_canary(rollout: Rollout | None, release: Release, settings: RolloutSettings) -> bool:
    """Whether approving `release` starts a canary instead of publishing it at once."""
    if settings.canary_percent == 0 or rollout is None or rollout.stable is None:
        return False
    return upgrades.newer(release.version, rollout.stable.version)


def approval_ops(db: Db, rollout: Rollout | None, release: Release, *, canary: bool, input_narrowed: bool,
                 now: datetime) -> list[Op]:
    """The rollout's write that goes with an approval: the canary started, or the stable version moved (a
    version published at once that is newer than the stable one)."""
    ref = version_ref(release, input_narrowed=input_narrowed)
    if canary:
        assert rollout is not None
        after = replace(rollout, canary=ref, canary_since=now, revision=rollout.revision + 1)
        return [Op("rollout", install_store.put_rollout_op(db, after, expected_revision=rollout.revision))]
    if rollout is None:
        first = Rollout(skill_id=release.skill_id, stable=ref)
        return [Op("rollout", install_store.put_rollout_op(db, first, expected_revision=None))]
    if rollout.stable is None or upgrades.newer(release.version, rollout.stable.version):
        after = replace(rollout, stable=ref, revision=rollout.revision + 1)
        return [Op("rollout", install_store.put_rollout_op(db, after, expected_revision=rollout.revision))]
    return []


# -- the evaluation ---------------------------------------------------------------------------------

class Verdict(Struct, frozen=True):
    action: str  # wait | promote | rollback
    reason: str | None
    canary: outcomes.Counts
    stable: outcomes.Counts


def _eval_score(report: CheckReport) -> float:
    results = [r for r in report.results if r.check == "evals"]
    if not results or not results[0].cases:
        return 1.0
    return 1 - len(results[0].failed_cases) / results[0].cases


def judge(canary: outcomes.Counts, stable: outcomes.Counts, *, canary_score: float, stable_score: float,
          settings: RolloutSettings, window_passed: bool) -> Verdict:
    """Compare a canary's outcomes with its stable version's (see the module's docstring)."""
    if canary.calls < settings.min_calls:
        return Verdict("wait", None, canary, stable)
    canary_rate = canary.bad / canary.calls
    stable_rate = stable.bad / stable.calls if stable.calls else 0.0
    if (canary_rate - stable_rate) * 100 > settings.threshold_percent:
        return Verdict("rollback", FAILURE_RATE, canary, stable)
    if canary_score < stable_score:
        return Verdict("rollback", EVAL_SCORE, canary, stable)
    return Verdict("promote" if window_passed else "wait", None, canary, stable)


def _decide(db: Db, rollout: Rollout, release: Release, verdict: Verdict, now: datetime) -> None:
    assert rollout.canary is not None and rollout.stable is not None
    if verdict.action == "rollback":
        notice = RollbackNotice(at=now, previous_version=rollout.stable.version, reason=verdict.reason or FAILURE_RATE,
                                calls=verdict.canary.calls, failures=verdict.canary.bad,
                                previous_calls=verdict.stable.calls, previous_failures=verdict.stable.bad)
        after = replace(release, state=ReleaseState.ROLLED_BACK, rollback=notice)
        moved = replace(rollout, canary=None, canary_since=None, revision=rollout.revision + 1,
                        rolled_back=(*rollout.rolled_back, release.version))
        extra = [Op("rollout", install_store.put_rollout_op(db, moved, expected_revision=rollout.revision)),
                 _audit(db, after, AuditAction.PACKAGE_ROLLBACK, now, Decision.FAILED, reason=notice.reason,
                        calls=notice.calls)]
        store.decide(db, release, after, skill=None, latest_sort=None, extra=extra)
        logger.info("canary rolled back", extra={"skill_id": release.skill_id, "release_id": release.release_id,
                                                 "reason": notice.reason})
        return
    after = replace(release, state=ReleaseState.PUBLISHED, published_at=now)
    current, latest_sort = store.get_skill(db, release.skill_id)
    skill = CatalogSkill(
        skill_id=release.skill_id, publisher_id=release.publisher_id, trust_level=release.trust_level,
        latest_version=release.version, latest_release_id=release.release_id, display_name=release.display_name,
        description=release.description, permissions=release.permissions, published_at=now,
    ) if current is None or current.latest_version is None or upgrades.newer(release.version, current.latest_version) \
        else None
    moved = replace(rollout, stable=rollout.canary, canary=None, canary_since=None, revision=rollout.revision + 1)
    extra = [Op("rollout", install_store.put_rollout_op(db, moved, expected_revision=rollout.revision)),
             _audit(db, after, AuditAction.PACKAGE_PROMOTE, now, Decision.SUCCEEDED, reason="canary_passed",
                    calls=verdict.canary.calls)]
    store.decide(db, release, after, skill=skill, latest_sort=latest_sort, extra=extra)


def evaluate_one(db: Db, rollout: Rollout, settings: RolloutSettings, now: datetime) -> str:
    """Evaluate one running canary: `wait`, `promote` or `rollback` (what it did)."""
    if rollout.canary is None or rollout.stable is None or rollout.canary_since is None:
        return "wait"
    release = store.get_release(db, rollout.canary.release_id)
    stable_release = store.get_release(db, rollout.stable.release_id)
    if release is None or release.state is not ReleaseState.APPROVED:
        return "wait"
    # Its outcomes since it started, the last two windows at most, and the stable version's over the same buckets.
    buckets = outcomes.window_buckets(now, 2 * settings.window_minutes, since=rollout.canary_since)
    canary_key = (rollout.skill_id, rollout.canary.version)
    stable_key = (rollout.skill_id, rollout.stable.version)
    counts = outcomes.read(db, [canary_key, stable_key], buckets)
    verdict = judge(counts[canary_key], counts[stable_key], canary_score=_eval_score(release.report),
                    stable_score=_eval_score(stable_release.report) if stable_release else 1.0, settings=settings,
                    window_passed=now >= rollout.canary_since + timedelta(minutes=settings.window_minutes))
    if verdict.action == "wait":
        return "wait"
    try:
        _decide(db, rollout, release, verdict, now)
    except (ReleaseNotPending, ConcurrentUpdate):
        return "wait"  # another evaluation decided it meanwhile
    return verdict.action


def evaluate(db: Db, settings: RolloutSettings, now: datetime) -> dict[str, int]:
    """Every running canary evaluated once: the counts of what was done (the scan's summary)."""
    done = {"canaries": 0, "promoted": 0, "rolledBack": 0}
    cursor: str | None = None
    while True:
        page, cursor = install_store.list_canaries(db, limit=100, cursor=cursor)
        for rollout in page:
            done["canaries"] += 1
            action = evaluate_one(db, rollout, settings, now)
            if action == "promote":
                done["promoted"] += 1
            elif action == "rollback":
                done["rolledBack"] += 1
        if cursor is None:
            return done
