"""An installed skill's code tools, as the ToolRunner runs them: the release read once, the package's bytes and
each tool's precompiled module read from the package store once per process, checked against their checksums.

A release's package, tools and artifacts never change once published (a new version is a new release), so what is
built for a release id is kept for the process's life (`_cache`): a warm turn reads none of it again, and a cold
start loads each module from the artifact the service precompiled at publish time instead of compiling it.
Only published (or approved: a canary) releases serve.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from skillcore.packages import blobs as blob_port
from skillcore.packages import store
from skillcore.packages.models import Release, ReleaseState, ReleaseTool
from skillcore.skills.manifest import SkillManifest

if TYPE_CHECKING:
    from skillcore.packages.service import PackageDeps
    from skillcore.sandbox.code_tool import CodeTool

SERVING = (ReleaseState.PUBLISHED, ReleaseState.APPROVED)
MAX_CACHED = 256


class LoadedTool(Struct, frozen=True, kw_only=True):
    skill: SkillManifest
    tool: Any  # sandbox.code_tool.CodeTool (imported with the first code tool)
    release_id: str
    info: ReleaseTool  # limits and host functions as published

    @property
    def name(self) -> str:
        return self.info.name

    def precompiled_bytes(self) -> bytes | None:
        """The artifact the tool loads its module from (None: it compiles the module)."""
        found: bytes | None = self.tool.precompiled
        return found


_cache: dict[str, tuple[LoadedTool, ...]] = {}
_lock = threading.Lock()


def serving_release(deps: PackageDeps, release_id: str) -> Release | None:
    release = store.get_release(deps.db, release_id)
    return release if release is not None and release.state in SERVING else None


def _build(deps: PackageDeps, release: Release) -> tuple[LoadedTool, ...]:
    from skillcore.packages import code_check
    from skillcore.packages.package import open_package
    from skillcore.sandbox.code_tool import CodeTool
    from skillcore.sandbox.manifest import decode_manifest

    blobs = deps.blobs()
    package = open_package(blob_port.read_checked(blobs, release.blob_key, release.checksum))
    skill = code_check.skill_manifest(package)
    listed = {t.name: t for t in package.manifest.tools}
    loaded = []
    for info in release.tools:
        entry = listed[info.name]
        artifact = (blob_port.read_checked(blobs, info.artifact_key, info.artifact_checksum)
                    if info.artifact_key and info.artifact_checksum else None)
        tool: CodeTool = CodeTool(skill, decode_manifest(entry.sandbox_manifest()), package.files[entry.module],
                                  precompiled=artifact)
        loaded.append(LoadedTool(skill=skill, tool=tool, release_id=release.release_id, info=info))
    return tuple(loaded)


def tools_of(deps: PackageDeps, release_id: str) -> tuple[LoadedTool, ...]:
    """The code tools of a serving release (none for a release without any, or one that does not serve)."""
    with _lock:
        found = _cache.get(release_id)
    if found is not None:
        return found
    release = serving_release(deps, release_id)
    built = _build(deps, release) if release is not None and release.tools else ()
    if release is not None:
        with _lock:
            if len(_cache) >= MAX_CACHED:
                _cache.pop(next(iter(_cache)))
            _cache[release_id] = built
    return built


def tools_of_cached(release_id: str) -> tuple[LoadedTool, ...]:
    """What this process built for a release (nothing read from the store): for the tests and the bench."""
    with _lock:
        return _cache.get(release_id, ())


def clear() -> None:
    with _lock:
        _cache.clear()
