"""Versioned registries: only reviewed, in-repo definitions, validated when the module is imported.

Rules (the seed's): every definition's manifest kind matches its registry, skillId+version is unique.
Kind-specific rules (tool call caps, timeouts) are checked by the definitions' own registries.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, Protocol, TypeVar

from skillcore.skills.manifest import SkillKind, SkillManifest


class RegistryError(ValueError):
    """A definition that may not be registered; raised at import time, so a bad deploy fails to start."""


class HasManifest(Protocol):
    @property
    def manifest(self) -> SkillManifest: ...


D = TypeVar("D", bound=HasManifest)


def _version_key(version: str) -> tuple:
    """semver precedence: a release outranks its pre-releases; pre-release identifiers compare numerically
    when numeric, lexically otherwise, numeric before alphanumeric."""
    without_build = version.split("+", 1)[0]
    core, _, pre = without_build.partition("-")
    major, minor, patch = (int(p) for p in core.split("."))
    if not pre:
        return (major, minor, patch, 1, ())
    identifiers = tuple((0, int(i), "") if i.isdigit() else (1, 0, i) for i in pre.split("."))
    return (major, minor, patch, 0, identifiers)


class Registry(Generic[D]):
    def __init__(self, kind: SkillKind, definitions: Iterable[D]):
        self.kind = kind
        self._by_key: dict[tuple[str, str], D] = {}
        for definition in definitions:
            manifest = definition.manifest
            if manifest.kind is not kind:
                raise RegistryError(f"{manifest.key} is a {manifest.kind} skill, not {kind}")
            if (manifest.skill_id, manifest.version) in self._by_key:
                raise RegistryError(f"{manifest.key} is registered twice")
            self._by_key[(manifest.skill_id, manifest.version)] = definition

    def get(self, skill_id: str, version: str) -> D | None:
        return self._by_key.get((skill_id, version))

    def latest(self, skill_id: str) -> D | None:
        versions = [d for (sid, _), d in self._by_key.items() if sid == skill_id]
        return max(versions, key=lambda d: _version_key(d.manifest.version), default=None)

    def current(self) -> list[D]:
        """The latest version of each skill, in registration order."""
        seen: dict[str, D] = {}
        for (skill_id, _), _definition in self._by_key.items():
            if skill_id not in seen:
                latest = self.latest(skill_id)
                assert latest is not None
                seen[skill_id] = latest
        return list(seen.values())

    def __iter__(self) -> Iterator[D]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)
