"""Routes: skill packages (export a user capability as a package, import one as a user capability), a
publisher's releases, the operators' publishers and release review, and the catalog of published skills
(docs/packages.md, docs/contract.md "Packages, releases and the catalog").

Thin: each handler calls one function of packages/service.py (or the capability service, for an import).
Nothing here imports the signature library: verification imports it when a submission reaches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct

from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models
from skillcore.api.requests import Paging
from skillcore.api.views import Page
from skillcore.api.views import capabilities as capability_views
from skillcore.api.views import packages as views
from skillcore.capabilities import service as capabilities
from skillcore.capabilities.service import CapabilityDeps
from skillcore.clock import Clock
from skillcore.packages import service
from skillcore.packages.digest import checksum
from skillcore.packages.service import PackageDeps

if TYPE_CHECKING:
    from skillcore.api.requests.packages import (
        AddPublisherKey,
        ImportPackage,
        RegisterPublisher,
        ReleaseDecision,
        SubmitRelease,
    )

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.packages")

SUBMIT = (e.PackageInvalid, e.SignatureInvalid, e.PublisherUnknown, e.KeyRevoked, e.SkillIdTaken, e.AlreadyExists,
          e.ConcurrentUpdate)
IMPORT = (e.PackageInvalid, e.CapabilityNameTaken, e.BindingNameTaken, e.QuotaExceeded, e.UnsafeText,
          e.UnknownReference, e.SchemaNotAllowed, e.ConcurrentUpdate)


class PackageRouteDeps(Struct, frozen=True):
    packages: PackageDeps
    capabilities: CapabilityDeps
    clock: Clock


def register(routes: Routes, deps: PackageRouteDeps) -> None:
    # -- a user's own capabilities as packages
    @routes.route("GET", "/rpc/user-capabilities/<userCapabilityId>/package", response=views.PackageFile)
    def export_user_capability(caller: Caller, userCapabilityId: str) -> views.PackageFile:  # noqa: N803
        """One of the caller's capabilities as a package (a zip, base64): SKILL.md, skillcore.json, evals/."""
        capability = capabilities.get(deps.capabilities, caller.user_id, userCapabilityId)
        from skillcore.packages import convert  # the package writer, loaded by the first export

        folder, data = convert.export_zip(capability, deps.packages.manifests)
        return views.package_file(f"{folder}.zip", data, checksum(data))

    @routes.route("POST", "/rpc/user-capability-packages", body=request("ImportPackage"), response=capability_views.UserCapability,
                  status=201, errors=IMPORT)
    def import_user_capability(caller: Caller, body: ImportPackage) -> capability_views.UserCapability:
        """A package's protocol as a new capability of the caller (status draft), through the same defences as a
        create."""
        from skillcore.packages.package import open_package

        package = open_package(service.decode_base64(body.package))
        return capability_views.user_capability(capabilities.create(deps.capabilities, caller.user_id,
                                                                    package.manifest.protocol, now=deps.clock()))

    # -- a publisher's releases
    @routes.route("POST", "/rpc/releases", body=request("SubmitRelease"), response=views.Release, status=201, errors=SUBMIT)
    def submit_release(caller: Caller, body: SubmitRelease) -> views.Release:
        """Submit a signed version: verified, checked (the report is stored) and queued for review, or stored
        rejected with its report when a check failed."""
        return views.release(service.submit(deps.packages, caller.user_id, body.package, body.signature,
                                            now=deps.clock()))

    @routes.route("GET", "/rpc/releases/<releaseId>", response=views.Release)
    def get_own_release(caller: Caller, releaseId: str) -> views.Release:  # noqa: N803
        """One of the caller's submitted releases, with its report and the review's decision."""
        return views.release(service.get_own_release(deps.packages, caller.user_id, releaseId))

    # -- the catalog: published versions only
    @routes.route("GET", "/rpc/catalog", query=Paging, response=Page[views.CatalogSkill])
    def list_catalog(caller: Caller, query: Paging) -> Page[views.CatalogSkill]:
        """The published skills, in skill id order, each with its newest published version (one Query a page)."""
        items, cursor = service.list_catalog(deps.packages, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.catalog_skill(s) for s in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/catalog/<skillId>", response=views.CatalogSkillDetail)
    def get_catalog_skill(caller: Caller, skillId: str) -> views.CatalogSkillDetail:  # noqa: N803
        """A published skill and its published versions."""
        skill, versions = service.get_catalog_skill(deps.packages, skillId)
        return views.CatalogSkillDetail(skill=views.catalog_skill(skill), versions=[
            views.CatalogVersion(release_id=v["releaseId"], version=v["version"]) for v in versions])

    @routes.route("GET", "/rpc/catalog/<skillId>/package", response=views.PublishedPackage, errors=(e.PackageInvalid,))
    def get_published_package(caller: Caller, skillId: str) -> views.PublishedPackage:  # noqa: N803
        """The newest published version's package and signature, checked against its stored checksum."""
        release, data = service.published_package(deps.packages, skillId)
        return views.published_package(release, data)

    # -- operators: publishers and their keys
    @routes.route("POST", "/rpc/admin/publishers", body=request("RegisterPublisher"), response=views.Publisher, status=201,
                  errors=(e.AlreadyExists,), admin=True, decision="person")
    def register_publisher(caller: Caller, body: RegisterPublisher) -> views.Publisher:
        """Operator: register a publisher, the account that submits for it and its first public key."""
        return views.publisher(service.register_publisher(
            deps.packages, caller.user_id, publisher_id=body.publisher_id, display_name=body.display_name, user_id=body.user_id,
            trust_level=body.trust_level, public_key=body.public_key, now=deps.clock()))

    @routes.route("GET", "/rpc/admin/publishers", query=Paging, response=Page[views.Publisher], admin=True)
    def list_publishers(caller: Caller, query: Paging) -> Page[views.Publisher]:
        """Operator: the registered publishers with their keys."""
        items, cursor = service.list_publishers(deps.packages, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.publisher(p) for p in items], next_cursor=cursor)

    @routes.route("POST", "/rpc/admin/publishers/<publisherId>/keys", body=request("AddPublisherKey"), response=views.Publisher,
                  status=201, errors=(e.AlreadyExists, e.QuotaExceeded, e.VersionConflict), admin=True,
                  decision="person")
    def add_publisher_key(caller: Caller, publisherId: str, body: AddPublisherKey) -> views.Publisher:  # noqa: N803
        """Operator: rotate a publisher's key (a new active key; `revokeOthers` revokes the others at once)."""
        return views.publisher(service.add_key(deps.packages, caller.user_id, publisherId, public_key=body.public_key,
                                               revoke_others=body.revoke_others, now=deps.clock()))

    @routes.route("POST", "/rpc/admin/publishers/<publisherId>/keys/<keyId>/revoke", response=views.Publisher,
                  errors=(e.VersionConflict,), admin=True, decision="person")
    def revoke_publisher_key(caller: Caller, publisherId: str, keyId: str) -> views.Publisher:  # noqa: N803
        """Operator: revoke a key; a package signed with it is refused with `key_revoked` from now on."""
        return views.publisher(service.revoke_key(deps.packages, caller.user_id, publisherId, keyId, now=deps.clock()))

    # -- operators: release review
    @routes.route("GET", "/rpc/admin/releases", query=Paging, response=Page[views.Release], admin=True)
    def list_review_queue(caller: Caller, query: Paging) -> Page[views.Release]:
        """Operator: the releases whose checks passed, waiting for a decision, oldest first."""
        items, cursor = service.list_review(deps.packages, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.release(r) for r in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/admin/releases/<releaseId>", response=views.Release, admin=True)
    def get_release(caller: Caller, releaseId: str) -> views.Release:  # noqa: N803
        """Operator: any release with its report."""
        return views.release(service.get_release(deps.packages, releaseId))

    @routes.route("POST", "/rpc/admin/releases/<releaseId>/decision", body=request("ReleaseDecision"),
                  response=views.Release,
                  errors=(e.ReleaseNotPending, e.CanaryRunning, e.PackageInvalid, e.ConcurrentUpdate), admin=True,
                  decision="person")
    def decide_release(caller: Caller, releaseId: str, body: ReleaseDecision) -> views.Release:  # noqa: N803
        """Operator: approve or reject a checked release, with a reason. An approved version newer than the
        skill's published one starts its canary (state approved) and is published when the canary passes."""
        return views.release(service.decide(deps.packages, caller.user_id, releaseId,
                                            approve=body.decision == "approve", reason=body.reason, now=deps.clock()))
