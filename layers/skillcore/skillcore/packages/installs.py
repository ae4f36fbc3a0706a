"""Installs: a person installs a published skill of the catalog, consents to upgrades, uninstalls
(docs/packages.md "Install, consent and upgrade").

The interface other features read (stable):

    installs.list_installed(db, user_id, canary_percent=p, limit=100, cursor=None) -> (list[InstalledSkill], cursor)
    installs.all_installed(db, user_id, canary_percent=p) -> list[InstalledSkill]
    installs.installed_skill(db, user_id, skill_id, canary_percent=p) -> InstalledSkill | None
    installs.skill_manifest(installed) -> SkillManifest     # for PolicyGate, the ToolRunner, the permissions

An `InstalledSkill` names the **serving** version (`version`, `release_id`, `permissions`): the one the user's
agents use now. It is computed on read from the install and the skill's rollout, never stored:
- the person's version (`current`; its `previous` when `current` was rolled back);
- a newer version applies by itself when it is a compatible upgrade of it (packages/upgrades.py): the canary
  while it runs, for the users in its share, else the stable (published) version;
- a newer version that is not compatible is `pending_version`: it waits for the person's consent
  (`accept_upgrade`) while the serving version keeps serving;
- a version rolled back is never served.
Installing grants nothing: the person grants the skill's permissions afterwards, as for a built-in skill.
Uninstalling revokes every grant of the skill and cancels its background and automation jobs, audited.

DynamoDB requests: `list_installed` 2 a page (Query of the user's installs + BatchGetItem of their rollouts);
`installed_skill` 2 GetItems; `install` 3 (GetItem of the catalog skill, GetItem of the rollout, one
TransactWriteItems: the install, its audit and the skill id added to the user's installed set, which lets the
capability listing skip the installs of a user who has none).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from msgspec import Struct
from msgspec.structs import replace

from skillcore.conversations import profile_store
from skillcore.conversations.models import Frozen
from skillcore.db.dynamo import Db
from skillcore.db.transact import Op
from skillcore.errors import NotFound, UpgradeNotPending
from skillcore.ids import new_id
from skillcore.packages import install_store, store, trust, upgrades
from skillcore.packages.models import Install, Permission, Rollout, TrustLevel, VersionRef
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel, SkillKind, SkillManifest

PAGE = 100


class InstallDeps(Struct, frozen=True):
    db: Db
    canary_percent: int
    high_risk_trust_levels: tuple[str, ...]
    # releaseId -> the code tools' names its package declares (skillcore.json `tools`): an uninstall deletes
    # the automation jobs that use one. None: none known.
    tool_names: Callable[[str], tuple[str, ...]] | None = None


class InstalledSkill(Frozen, frozen=True, kw_only=True):
    """A user's installed skill as it serves now (see the module's docstring)."""

    skill_id: str
    version: str  # the serving version
    release_id: str  # the serving version's release
    permissions: tuple[Permission, ...]  # the serving version's
    publisher_id: str
    trust_level: TrustLevel
    installed_version: str  # the version the person installed or consented to last
    pending_version: str | None = None  # a newer version waiting for the person's consent
    pending_permissions: tuple[Permission, ...] = ()
    canary: bool = False  # serving a canary version
    installed_at: datetime
    updated_at: datetime
    # The serving version's publisher texts (shown quoted, never instructions).
    display_name: str = ""
    when_to_use: tuple[str, ...] = ()


class Serving(Struct, frozen=True):
    serving: VersionRef
    pending: VersionRef | None
    canary: bool


def serving(install: Install, rollout: Rollout | None, user_id: str, canary_percent: int) -> Serving:
    """Which version of `install` serves now, and which upgrade waits for consent."""
    base = install.current
    gone = rollout.rolled_back if rollout else ()
    if base.version in gone:
        base = install.previous if install.previous and install.previous.version not in gone else \
            (rollout.stable if rollout and rollout.stable else base)
    if rollout is None:
        return Serving(base, None, False)
    canary = rollout.canary if rollout.canary and rollout.canary.version not in gone and \
        upgrades.in_canary(user_id, rollout.canary.version, canary_percent) else None
    offered = [v for v in (canary, rollout.stable) if v is not None and upgrades.newer(v.version, base.version)]
    chosen = next((v for v in offered if upgrades.compatible(base, v)), None)
    now_serving = chosen or base
    pending = next((v for v in offered if upgrades.newer(v.version, now_serving.version)
                    and not upgrades.compatible(now_serving, v)), None)
    return Serving(now_serving, pending, chosen is not None and chosen is canary)


def _installed(install: Install, rollout: Rollout | None, canary_percent: int) -> InstalledSkill:
    found = serving(install, rollout, install.user_id, canary_percent)
    return InstalledSkill(
        skill_id=install.skill_id, version=found.serving.version, release_id=found.serving.release_id,
        permissions=found.serving.permissions, publisher_id=install.publisher_id, trust_level=install.trust_level,
        installed_version=install.current.version,
        pending_version=found.pending.version if found.pending else None,
        pending_permissions=found.pending.permissions if found.pending else (), canary=found.canary,
        installed_at=install.installed_at, updated_at=install.updated_at,
        display_name=found.serving.display_name, when_to_use=found.serving.when_to_use,
    )


def list_installed(db: Db, user_id: str, *, canary_percent: int, limit: int = PAGE,
                   cursor: str | None = None) -> tuple[list[InstalledSkill], str | None]:
    """A page of the user's installed skills in skill id order, each with its serving version."""
    found, next_cursor = install_store.list_installs(db, user_id, limit=limit, cursor=cursor)
    rollouts = install_store.get_rollouts(db, [i.skill_id for i in found])
    return [_installed(i, rollouts.get(i.skill_id), canary_percent) for i in found], next_cursor


def all_installed(db: Db, user_id: str, *, canary_percent: int) -> list[InstalledSkill]:
    items, cursor = list_installed(db, user_id, canary_percent=canary_percent)
    while cursor:
        more, cursor = list_installed(db, user_id, canary_percent=canary_percent, cursor=cursor)
        items += more
    return items


def installed_skill(db: Db, user_id: str, skill_id: str, *, canary_percent: int) -> InstalledSkill | None:
    install = install_store.get_install(db, user_id, skill_id)
    if install is None:
        return None
    return _installed(install, install_store.get_rollout(db, skill_id), canary_percent)


def skill_manifest(installed: InstalledSkill, *, name: str | None = None) -> SkillManifest:
    """The serving version as a SkillManifest: what PolicyGate, the ToolRunner and the permissions read. Kind
    `tool`; `name` defaults to the skill id (a publisher's display name is shown quoted, never as a name)."""
    return SkillManifest(
        skill_id=installed.skill_id, version=installed.version, kind=SkillKind.TOOL,
        name=(name or installed.skill_id)[:60], description=f"{installed.skill_id} ({installed.trust_level.value})",
        source="package",
        permissions=tuple(PermissionRequirement(code=p.code, risk_level=RiskLevel(p.risk_level),
                                                approval_mode=ApprovalMode(p.approval_mode))
                          for p in installed.permissions),
    )


# -- writes -----------------------------------------------------------------------------------------

def _audit(db: Db, user_id: str, action: AuditAction, now: datetime, *, skill_id: str, version: str,
           trust_level: str, permissions: tuple[Permission, ...] = (), reason: str = "user_request") -> Op:
    event = AuditEvent(event_id=new_id(now), user_id=user_id, at=now, skill_id=skill_id, skill_version=version,
                       action=action, decision=Decision.SUCCEEDED, target_id=skill_id, reason=reason,
                       metadata=AuditMetadata(status=trust_level, caller_kind="person",
                                              permission_codes=tuple(p.code for p in permissions)))
    return Op("audit", audit_store.put_audit_op(db, event))


def install(deps: InstallDeps, user_id: str, skill_id: str, *, now: datetime) -> InstalledSkill:
    """Install the skill's stable (published) version for the user. Grants nothing."""
    skill, _ = store.get_skill(deps.db, skill_id)
    if skill is None or skill.latest_version is None or skill.latest_release_id is None:
        raise NotFound("skill not found in the catalog")
    rollout = install_store.get_rollout(deps.db, skill_id)
    stable = rollout.stable if rollout and rollout.stable else VersionRef(
        version=skill.latest_version, release_id=skill.latest_release_id, permissions=skill.permissions,
        display_name=skill.display_name or "")
    trust.check(skill.trust_level.value, stable.permissions, deps.high_risk_trust_levels)
    record = Install(user_id=user_id, skill_id=skill_id, publisher_id=skill.publisher_id,
                     trust_level=skill.trust_level, current=stable, installed_at=now, updated_at=now)
    install_store.write_install(deps.db, install_store.put_install_op(deps.db, record), [_audit(
        deps.db, user_id, AuditAction.PACKAGE_INSTALL, now, skill_id=skill_id, version=stable.version,
        trust_level=skill.trust_level.value, permissions=stable.permissions),
        Op("installed", profile_store.installed_op(deps.db, user_id, skill_id, installed=True, now=now))])
    return _installed(record, rollout, deps.canary_percent)


def get_installed(deps: InstallDeps, user_id: str, skill_id: str) -> InstalledSkill:
    """The caller's install (another user's is simply not found: the read is inside the caller's partition)."""
    found = installed_skill(deps.db, user_id, skill_id, canary_percent=deps.canary_percent)
    if found is None:
        raise NotFound("install not found")
    return found


def accept_upgrade(deps: InstallDeps, user_id: str, skill_id: str, version: str, *, now: datetime) -> InstalledSkill:
    """The person consents to the pending upgrade `version`: it serves from now on (its new permissions still
    need their grants); the version it replaces is kept as `previous`, served again if this one is rolled back."""
    record = install_store.get_install(deps.db, user_id, skill_id)
    if record is None:
        raise NotFound("install not found")
    rollout = install_store.get_rollout(deps.db, skill_id)
    found = serving(record, rollout, user_id, deps.canary_percent)
    if found.pending is None or found.pending.version != version:
        raise UpgradeNotPending()
    trust.check(record.trust_level.value, found.pending.permissions, deps.high_risk_trust_levels)
    after = replace(record, current=found.pending, previous=found.serving, revision=record.revision + 1,
                    updated_at=now)
    install_store.write_install(
        deps.db, install_store.replace_install_op(deps.db, after, expected_revision=record.revision),
        [_audit(deps.db, user_id, AuditAction.PACKAGE_UPGRADE_ACCEPT, now, skill_id=skill_id, version=version,
                trust_level=record.trust_level.value, permissions=found.pending.permissions)])
    return _installed(after, rollout, deps.canary_percent)


def uninstall(deps: InstallDeps, user_id: str, skill_id: str, *, now: datetime) -> None:
    """Remove the install, every grant of the skill (revoked, audited) and its background and automation jobs
    (cancelled or deleted, audited by their own services), then the install itself with its audit."""
    from skillcore.packages import (
        uninstall as cleanup,  # the grant and job stores, only when someone uninstalls
    )

    record = install_store.get_install(deps.db, user_id, skill_id)
    if record is None:
        raise NotFound("install not found")
    cleanup.remove_grants(deps.db, user_id, skill_id, record.current.version, now)
    names = deps.tool_names(record.current.release_id) if deps.tool_names is not None else ()
    cleanup.remove_jobs(deps.db, user_id, skill_id, now, tool_names=names)
    install_store.write_install(deps.db, install_store.delete_install_op(deps.db, user_id, skill_id), [_audit(
        deps.db, user_id, AuditAction.PACKAGE_UNINSTALL, now, skill_id=skill_id, version=record.current.version,
        trust_level=record.trust_level.value),
        Op("installed", profile_store.installed_op(deps.db, user_id, skill_id, installed=False, now=now))])
