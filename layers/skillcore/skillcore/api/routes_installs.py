"""Routes: a person's installs of catalog skills (docs/packages.md "Install, consent and upgrade",
docs/contract.md "Installs"). The owner is the token's; another user's install is 404.

Thin: each handler calls one function of packages/installs.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct

from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models
from skillcore.api.requests import Paging
from skillcore.api.views import Page
from skillcore.api.views import installs as views
from skillcore.clock import Clock
from skillcore.packages import installs
from skillcore.packages.installs import InstallDeps

if TYPE_CHECKING:
    from skillcore.api.requests.installs import AcceptUpgrade, InstallSkill

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.installs")


class InstallRouteDeps(Struct, frozen=True):
    installs: InstallDeps
    clock: Clock


def register(routes: Routes, deps: InstallRouteDeps) -> None:
    @routes.route("POST", "/rpc/installs", body=request("InstallSkill"), response=views.InstalledSkill, status=201,
                  errors=(e.NotFound, e.AlreadyExists, e.TrustLevelForbidden, e.ConcurrentUpdate), decision="person")
    def install_skill(caller: Caller, body: InstallSkill) -> views.InstalledSkill:
        """Install a published skill of the catalog (its stable version). Grants nothing: grant its permissions
        afterwards in the permissions, as for a built-in skill."""
        return views.installed_skill(installs.install(deps.installs, caller.user_id, body.skill_id, now=deps.clock()))

    @routes.route("GET", "/rpc/installs", query=Paging, response=Page[views.InstalledSkill])
    def list_installs(caller: Caller, query: Paging) -> Page[views.InstalledSkill]:
        """The caller's installed skills in skill id order, each with its serving version and any upgrade
        waiting for consent."""
        items, cursor = installs.list_installed(deps.installs.db, caller.user_id,
                                                canary_percent=deps.installs.canary_percent, limit=query.limit,
                                                cursor=query.cursor)
        return Page(items=[views.installed_skill(i) for i in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/installs/<skillId>", response=views.InstalledSkill)
    def get_install(caller: Caller, skillId: str) -> views.InstalledSkill:  # noqa: N803
        """One of the caller's installed skills."""
        return views.installed_skill(installs.get_installed(deps.installs, caller.user_id, skillId))

    @routes.route("POST", "/rpc/installs/<skillId>/accept", body=request("AcceptUpgrade"),
                  response=views.InstalledSkill,
                  errors=(e.UpgradeNotPending, e.TrustLevelForbidden, e.VersionConflict, e.ConcurrentUpdate),
                  decision="person")
    def accept_upgrade(caller: Caller, skillId: str, body: AcceptUpgrade) -> views.InstalledSkill:  # noqa: N803
        """Consent to the upgrade waiting for it (`version`: the pendingVersion read): it serves from now on; its
        new permissions still need their grants."""
        return views.installed_skill(installs.accept_upgrade(deps.installs, caller.user_id, skillId, body.version,
                                                             now=deps.clock()))

    @routes.route("DELETE", "/rpc/installs/<skillId>", response=None, status=204,
                  errors=(e.ConcurrentUpdate,), decision="person")
    def uninstall_skill(caller: Caller, skillId: str) -> None:  # noqa: N803
        """Uninstall: the skill's grants are revoked and its jobs cancelled, audited."""
        installs.uninstall(deps.installs, caller.user_id, skillId, now=deps.clock())
