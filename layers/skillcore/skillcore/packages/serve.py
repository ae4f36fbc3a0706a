"""An installed catalog skill served to its user's agent hosts (the capability listing and protocols,
skillcore/capabilities/catalog.py, through CatalogDeps' `installed` and `installed_protocol`).

What is served is the install's **serving** version (packages/installs.py), read from the package bytes stored
at submission and checked against their checksum. Its protocol goes through exactly what a `user:` capability's
does, none weakened: the package's `protocol` is the user-capability structure; the first three defences run
again at every render (text filter, references, schema subset: a package that no longer passes them is not
served, whatever its review said), the fourth, narrowing, for the host profile asked; and the one template
renders it (capabilities/protocol.py), quoting every text the publisher wrote. Nothing of the package reaches
an agent as an instruction. An opened package is kept per instance by its checksum (32 at most).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from skillcore.capabilities import protocol as renderer
from skillcore.capabilities.catalog import InstalledOffer, Protocol
from skillcore.capabilities.defences.narrowing import narrow
from skillcore.capabilities.service import findings
from skillcore.observability import logger
from skillcore.packages import blobs as blob_port
from skillcore.packages import installs, store

if TYPE_CHECKING:
    from skillcore.packages.package import Package
    from skillcore.packages.service import PackageDeps


def offers(deps: PackageDeps, canary_percent: int) -> Callable[[str], list[InstalledOffer]]:
    def offered(user_id: str) -> list[InstalledOffer]:
        return [InstalledOffer(skill_id=i.skill_id, version=i.version, display_name=i.display_name or i.skill_id,
                               when_to_use=i.when_to_use, trust_level=i.trust_level.value,
                               permission_codes=tuple(p.code for p in i.permissions))
                for i in installs.all_installed(deps.db, user_id, canary_percent=canary_percent)]
    return offered


_OPENED: dict[str, Package] = {}
_KEEP = 32


def _opened(deps: PackageDeps, blob_key: str, checksum: str) -> Package:
    """The package of a stored release, read (checked against its checksum) and opened once per instance."""
    from skillcore.packages.package import open_package

    found = _OPENED.get(checksum)
    if found is None:
        found = open_package(blob_port.read_checked(deps.blobs(), blob_key, checksum))
        if len(_OPENED) >= _KEEP:
            _OPENED.pop(next(iter(_OPENED)))
        _OPENED[checksum] = found
    return found


def protocols(deps: PackageDeps, canary_percent: int,
              clock: Callable[[], datetime]) -> Callable[[str, str, str | None], Protocol | None]:
    def rendered(user_id: str, skill_id: str, host_profile: str | None) -> Protocol | None:
        installed = installs.installed_skill(deps.db, user_id, skill_id, canary_percent=canary_percent)
        if installed is None:
            return None
        release = store.get_release(deps.db, installed.release_id)
        if release is None:
            return None
        package = _opened(deps, release.blob_key, release.checksum)
        return render(deps, package, user_id=user_id, skill_id=skill_id, version=installed.version,
                      publisher=(installed.publisher_id, installed.trust_level.value), host_profile=host_profile,
                      now=clock())
    return rendered


def render(deps: PackageDeps, package: Package, *, user_id: str, skill_id: str, version: str,
           publisher: tuple[str, str], host_profile: str | None, now: datetime) -> Protocol | None:
    """The package's protocol for one host profile, after the defences; None when a defence refuses it."""
    from skillcore.packages.checks import capability_of

    capability = capability_of(package, user_id=user_id, now=now)
    refused = findings(frozenset(deps.manifests), display_name=capability.display_name,
                       when_to_use=capability.when_to_use, workflow=capability.workflow,
                       platform_capability_ids=capability.platform_capability_ids, bindings=capability.tool_bindings)
    if refused is not None:
        logger.warning("installed package refused by a defence", extra={"skill_id": skill_id, "code": refused.code})
        return None
    narrowed = narrow(capability, host_profile)
    return Protocol(
        capability_id=skill_id, version=version,
        markdown=renderer.render_user(capability, narrowed, host_profile, capability_id=skill_id, package=publisher,
                                     version=version),
        platform_capability_ids=narrowed.platform_capability_ids, tool_bindings=narrowed.tool_bindings,
        missing_bindings=narrowed.missing_bindings,
    )


def tool_names(deps: PackageDeps, release_id: str) -> tuple[str, ...]:
    """The code tools' names a release's package declares (skillcore.json `tools`)."""
    release = store.get_release(deps.db, release_id)
    if release is None:
        return ()
    return tuple(t.name for t in _opened(deps, release.blob_key, release.checksum).manifest.tools)
