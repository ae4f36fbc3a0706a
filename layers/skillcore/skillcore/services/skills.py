"""The skills catalog and the per-user enable switches (the seed's Binding)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from skillcore.db import users
from skillcore.db.dynamo import Db
from skillcore.errors import NotFound
from skillcore.skills.builtin import Skills
from skillcore.skills.manifest import SkillManifest


@dataclass(frozen=True)
class CatalogEntry:
    manifest: SkillManifest
    enabled: bool
    granted: frozenset[str]  # permission codes with an active grant (filled once grants exist)


def catalog(db: Db, skills: Skills, user_id: str) -> list[CatalogEntry]:
    disabled = users.get_disabled_skills(db, user_id)
    return [CatalogEntry(m, m.skill_id not in disabled, frozenset()) for m in skills.manifests()]


def set_enabled(db: Db, skills: Skills, user_id: str, skill_id: str, enabled: bool, now: datetime) -> CatalogEntry:
    manifest = skills.manifest(skill_id)
    if manifest is None:
        raise NotFound("skill not found", code="skill_not_found")
    disabled = users.set_skill_enabled(db, user_id, skill_id, enabled, now)
    return CatalogEntry(manifest, skill_id not in disabled, frozenset())
