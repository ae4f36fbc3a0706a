"""Bodies of the install routes (docs/packages.md "Install, consent and upgrade")."""

from __future__ import annotations

from skillcore.api.views import Body, Time, time
from skillcore.api.views.packages import DeclaredPermission as Permission
from skillcore.packages import models
from skillcore.packages.installs import InstalledSkill as Installed


class InstalledSkill(Body, frozen=True, kw_only=True):
    """`version` is the serving version; `pendingVersion` a newer one waiting for the person's consent (with the
    permissions it would ask for), null when none."""

    skill_id: str
    version: str
    release_id: str
    permissions: list[Permission]
    publisher_id: str
    trust_level: models.TrustLevel
    installed_version: str
    pending_version: str | None
    pending_permissions: list[Permission]
    canary: bool
    installed_at: Time
    updated_at: Time


def _permissions(found: tuple[models.Permission, ...]) -> list[Permission]:
    return [Permission(code=p.code, risk_level=p.risk_level, approval_mode=p.approval_mode) for p in found]


def installed_skill(i: Installed) -> InstalledSkill:
    return InstalledSkill(
        skill_id=i.skill_id, version=i.version, release_id=i.release_id, permissions=_permissions(i.permissions),
        publisher_id=i.publisher_id, trust_level=i.trust_level, installed_version=i.installed_version,
        pending_version=i.pending_version, pending_permissions=_permissions(i.pending_permissions), canary=i.canary,
        installed_at=time(i.installed_at), updated_at=time(i.updated_at),
    )
