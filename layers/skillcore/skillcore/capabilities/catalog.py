"""The capability catalog and protocols an agent host reads (docs/contract.md "Capability catalog and protocols"):
one pair of functions for the HTTP routes and the MCP face (`list_capabilities`, `get_capability_protocol`).

The catalog is a projection, never a maintained list: it is computed on every call from the user's switches,
grants and capability status, so a change shows in the next call. It lists one kind of entry for both
sources: the enabled built-in skills that have a host protocol (skills/protocols.py) and the user's
**active** `user:` capabilities.

An installed catalog skill is a third kind of entry, `package` (its id is its skill id): its serving version
(packages/installs.py), its protocol rendered by the same template as a `user:` capability's from the package's
structure, after the same defences (packages/serve.py). Every entry names its trust level.

DynamoDB requests per call (no Scan anywhere), for a user without installs (the switches item names the installed
skills: with some, a listing adds a Query and a BatchGetItem per page of installs and one BatchGetItem of their
grants; a package's protocol is 3 GetItems, and the package read once per instance):
- `list_catalog`: 2 = one BatchGetItem (the switches item and the user-scope grants of the offered
  built-ins, by key) + one Query of the capabilities' sparse index (capability items only, no bindings).
- `get_protocol` of a `user:` capability: 2 = GetItem of its name item + one Query of the capability with its
  bindings; of a built-in: 1 GetItem (the switches).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal

from msgspec import Struct

from skillcore.capabilities import protocol as renderer
from skillcore.capabilities import store
from skillcore.capabilities.defences.narrowing import narrow
from skillcore.capabilities.errors import ProtocolNotActive
from skillcore.capabilities.models import CAPABILITY_PREFIX, CapabilityStatus, ToolBinding
from skillcore.conversations import profile_store as users
from skillcore.db.dynamo import Db
from skillcore.errors import NotFound, SkillDisabled
from skillcore.policy import grant_store
from skillcore.policy.grants import GrantScope, same_major
from skillcore.skills.registries import Skills

BUILTIN: Final = "builtin"
USER: Final = "user"
PACKAGE: Final = "package"  # an installed catalog skill (skillcore/packages/installs.py)
USER_OWN: Final = "user_own"  # a user capability's trust level


class InstalledOffer(Struct, frozen=True, kw_only=True):
    """An installed catalog skill as the listing offers it (its serving version): the publisher's texts are
    quoted data, never instructions."""

    skill_id: str
    version: str
    display_name: str
    when_to_use: tuple[str, ...]
    trust_level: str
    permission_codes: tuple[str, ...]


class CatalogDeps(Struct, frozen=True):
    db: Db
    skills: Skills
    # The user's installed catalog skills (packages/installs.py, wired by bootstrap: this folder does not import
    # packages/), and one's protocol rendered for a host profile (None: not installed, or not servable).
    installed: Callable[[str], Sequence[InstalledOffer]] | None = None
    installed_protocol: Callable[[str, str, str | None], Protocol | None] | None = None


class Permission(Struct, frozen=True):
    code: str
    granted: bool


class CatalogEntry(Struct, frozen=True, kw_only=True):
    capability_id: str
    kind: Literal["builtin", "user", "package"]
    display_name: str
    when_to_use: tuple[str, ...]
    version: str | int  # a built-in's or a package's semver, a user capability's version number
    permissions: tuple[Permission, ...] | None = None  # built-ins and packages
    trust_level: str = BUILTIN  # builtin, verified_publisher, community, user_own


class Protocol(Struct, frozen=True, kw_only=True):
    capability_id: str
    version: str | int
    markdown: str
    platform_capability_ids: tuple[str, ...]
    tool_bindings: tuple[ToolBinding, ...]
    missing_bindings: tuple[str, ...]


def list_catalog(deps: CatalogDeps, user_id: str) -> list[CatalogEntry]:
    offered = deps.skills.protocols()
    keys = [grant_store.grant_key(user_id, p.manifest.skill_id, r.code, GrantScope.user())
            for p in offered for r in p.manifest.permissions]
    bindings, grants = grant_store.read_bindings(deps.db, user_id, keys)
    disabled = users.disabled_skills(bindings)
    # The bindings item names the user's installed catalog skills: without any, no install is read.
    installed = list(deps.installed(user_id)) if deps.installed is not None and users.installed_skills(bindings) \
        else []
    if installed:
        more = [grant_store.grant_key(user_id, i.skill_id, code, GrantScope.user())
                for i in installed for code in i.permission_codes]
        grants = grants + (grant_store.read_policy_state(deps.db, user_id, more)[1] if more else ())
    entries: list[CatalogEntry] = []
    for p in offered:
        if p.manifest.skill_id in disabled:
            continue
        granted = {g.permission_code for g in grants if g.active and g.skill_id == p.manifest.skill_id
                   and g.scope.type is GrantScope.user().type and same_major(g.skill_version, p.manifest.version)}
        entries.append(CatalogEntry(
            capability_id=p.capability_id, kind=BUILTIN, display_name=p.display_name, when_to_use=p.when_to_use,
            version=p.manifest.version,
            permissions=tuple(Permission(r.code, r.code in granted) for r in p.manifest.permissions),
        ))
    for c in store.list_active_heads(deps.db, user_id):
        entries.append(CatalogEntry(capability_id=c.capability_id, kind=USER, display_name=c.display_name,
                                    when_to_use=c.when_to_use, version=c.version, trust_level=USER_OWN))
    for i in installed:
        if i.skill_id in disabled:
            continue
        granted = {g.permission_code for g in grants if g.active and g.skill_id == i.skill_id
                   and g.scope.type is GrantScope.user().type and same_major(g.skill_version, i.version)}
        entries.append(CatalogEntry(
            capability_id=i.skill_id, kind=PACKAGE, display_name=i.display_name, when_to_use=i.when_to_use,
            version=i.version, permissions=tuple(Permission(code, code in granted) for code in i.permission_codes),
            trust_level=i.trust_level))
    return entries


def capability_not_found() -> NotFound:
    return NotFound("capability not found")


def not_active() -> ProtocolNotActive:
    """A draft's protocol without preview: 409 here (docs/contract.md), unlike deactivating a draft (422)."""
    return ProtocolNotActive()


def get_protocol(
    deps: CatalogDeps, user_id: str, capability_id: str, *, host_profile: str | None = None, preview: bool = False
) -> Protocol:
    """The protocol of one catalog entry, rendered now. Another user's capability is simply not found (the
    read is inside the caller's partition), so `preview` can only ever show the caller's own draft."""
    if capability_id.startswith(CAPABILITY_PREFIX):
        capability = store.get_by_name(deps.db, user_id, capability_id[len(CAPABILITY_PREFIX):])
        if capability is None:
            raise capability_not_found()
        if capability.status is not CapabilityStatus.ACTIVE and not preview:
            raise not_active()
        narrowed = narrow(capability, host_profile)
        return Protocol(
            capability_id=capability.capability_id, version=capability.version,
            markdown=renderer.render_user(capability, narrowed, host_profile),
            platform_capability_ids=narrowed.platform_capability_ids, tool_bindings=narrowed.tool_bindings,
            missing_bindings=narrowed.missing_bindings,
        )
    offered = deps.skills.protocol(capability_id)
    if offered is None:
        # An installed catalog skill, by its skill id (never a built-in's: the catalog refuses those ids).
        if deps.installed_protocol is not None:
            if capability_id in users.get_disabled_skills(deps.db, user_id):
                raise SkillDisabled()
            served = deps.installed_protocol(user_id, capability_id, host_profile)
            if served is not None:
                return served
        raise capability_not_found()
    if capability_id in users.get_disabled_skills(deps.db, user_id):
        raise SkillDisabled()
    return Protocol(capability_id=offered.capability_id, version=offered.manifest.version,
                    markdown=renderer.render_builtin(offered), platform_capability_ids=(offered.capability_id,),
                    tool_bindings=(), missing_bindings=())
