"""The skills catalog and the per-user enable switches (the seed's Binding)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from msgspec import Struct

from skillcore.conversations import profile_store as users
from skillcore.db.dynamo import Db
from skillcore.errors import SkillNotFound
from skillcore.policy import grant_store
from skillcore.policy.grants import PermissionGrant, ScopeType, same_major
from skillcore.skills.manifest import SkillManifest
from skillcore.skills.registries import Skills


class CatalogEntry(Struct, frozen=True):
    manifest: SkillManifest
    enabled: bool
    granted: frozenset[str]  # permission codes with an active grant (filled once grants exist)
    trust_level: str = "builtin"  # an installed catalog skill's: verified_publisher or community


class Installed(Struct, frozen=True):
    """An installed catalog skill's serving version as the permissions see it (the caller reads the installs:
    policy/ does not import packages/)."""

    manifest: SkillManifest
    trust_level: str


def _granted_codes(grants: list[PermissionGrant], manifest: SkillManifest) -> frozenset[str]:
    """Codes with an active user-scope grant that holds for this version (what the Skills page switches)."""
    return frozenset(
        g.permission_code for g in grants
        if g.active and g.skill_id == manifest.skill_id and g.scope.type is ScopeType.USER
        and same_major(g.skill_version, manifest.version)
    )


def catalog(db: Db, skills: Skills, user_id: str, *,
            installed: Callable[[], Sequence[Installed]] | None = None) -> list[CatalogEntry]:
    """The built-in skills, then the user's installed catalog skills (read only when the switches item names
    some), each with its switch and grants."""
    bindings = users.get_bindings(db, user_id)
    disabled = users.disabled_skills(bindings)
    grants = grant_store.all_grants(db, user_id)
    found = installed() if installed is not None and users.installed_skills(bindings) else ()
    return [
        CatalogEntry(m, m.skill_id not in disabled, _granted_codes(grants, m)) for m in skills.manifests()
    ] + [CatalogEntry(i.manifest, i.manifest.skill_id not in disabled, _granted_codes(grants, i.manifest),
                      i.trust_level) for i in found]


def find(skills: Skills, skill_id: str, installed: Sequence[Installed] = ()) -> tuple[SkillManifest, str] | None:
    """A built-in skill's manifest, or an installed one's, with its trust level."""
    manifest = skills.manifest(skill_id)
    if manifest is not None:
        return manifest, "builtin"
    return next(((i.manifest, i.trust_level) for i in installed if i.manifest.skill_id == skill_id), None)


def set_enabled(db: Db, skills: Skills, user_id: str, skill_id: str, enabled: bool, now: datetime, *,
                installed: Sequence[Installed] = ()) -> CatalogEntry:
    found = find(skills, skill_id, installed)
    if found is None:
        raise SkillNotFound()
    manifest, trust_level = found
    disabled = users.set_skill_enabled(db, user_id, skill_id, enabled, now)
    granted = _granted_codes(grant_store.all_grants(db, user_id), manifest) if manifest.permissions else frozenset()
    return CatalogEntry(manifest, skill_id not in disabled, granted, trust_level)
