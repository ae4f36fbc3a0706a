"""Publishers, release review and the catalog (docs/packages.md): one set of operations for the routes.

Submission, in this order, each refusal with its own code and nothing stored before the last:
  the package opens (`package_invalid`, with the path) → its signature file reads (`signature_invalid`:
  `missing`, `malformed`) → it names a registered publisher whose account is the caller and who registered
  the signing key (`publisher_unknown`) → that key is not revoked (`key_revoked`) → the signature verifies over
  the package's canonical digest (`signature_invalid`: `digest_mismatch`, `bad_signature`) → the skill id is
  no built-in's (`skill_id_taken`) → the release check (packages/checks.py) → the bytes to the blob store
  (checksum) → the release, its version's claim and the skill's owner in one transaction (`already_exists`
  for a version submitted before, `skill_id_taken` for another publisher's skill).
A release whose checks failed is stored `rejected` (reason `checks_failed`) with its report, for its publisher
to read; one whose checks passed is `checked`, in the operators' review queue.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from msgspec import Struct
from msgspec.structs import replace

from skillcore.db.dynamo import Db
from skillcore.db.transact import Op
from skillcore.errors import (
    AlreadyExists,
    CanaryRunning,
    FieldError,
    KeyRevoked,
    NotFound,
    PackageInvalid,
    PublisherUnknown,
    QuotaExceeded,
    ReleaseNotPending,
    SkillIdTaken,
    ValidationFailed,
)
from skillcore.ids import new_id
from skillcore.packages import blobs as blob_port
from skillcore.packages import install_store, rollout, semver, store, upgrades
from skillcore.packages.digest import checksum
from skillcore.packages.models import (
    CatalogSkill,
    KeyStatus,
    Permission,
    Publisher,
    PublisherKey,
    Release,
    ReleaseState,
    ReleaseTool,
    TrustLevel,
)
from skillcore.packages.rollout import RolloutSettings
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.skills.manifest import SkillManifest

if TYPE_CHECKING:
    from skillcore.packages.package import Package

CHECKS_FAILED = "checks_failed"
RELEASE_CHECK = "release-check"  # who decided a release its checks failed


class PackageDeps(Struct, frozen=True):
    db: Db
    # The blob store, built on first use (the S3 client or the local directory): no cold start builds it.
    blobs: Callable[[], blob_port.PackageBlobs]
    # The built-in skills' manifests by id: the permissions their capabilities need, and the ids no package takes.
    manifests: dict[str, SkillManifest]
    # The trust levels whose skills may ask for L3 and above (packages/trust.py, SKILLS_HIGH_RISK_TRUST_LEVELS).
    high_risk_trust_levels: tuple[str, ...] = ("builtin", "verified_publisher")
    # The canary's numbers (packages/rollout.py); None: the defaults.
    rollout: RolloutSettings | None = None


def decode_base64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise PackageInvalid("the package is not valid base64", path="", rule="base64") from None


# -- audit: ids, codes and digests only ------------------------------------------------------------

PUBLISHER_SKILL = "package_publisher"


def _audit(db: Db, actor: str, action: AuditAction, now: datetime, *, skill_id: str, version: str, target: str,
           decision: Decision = Decision.SUCCEEDED, reason: str | None = None,
           metadata: AuditMetadata | None = None) -> Op:
    event = AuditEvent(event_id=new_id(now), user_id=actor, at=now, skill_id=skill_id, skill_version=version,
                       action=action, decision=decision, target_id=target, reason=reason,
                       metadata=metadata or AuditMetadata())
    return Op("audit", audit_store.put_audit_op(db, event))


def _publisher_audit(db: Db, actor: str, action: AuditAction, publisher: Publisher, key_id: str, now: datetime,
                     version: int) -> Op:
    return _audit(db, actor, action, now, skill_id=PUBLISHER_SKILL, version=str(version),
                  target=publisher.publisher_id,
                  metadata=AuditMetadata(publisher_id=publisher.publisher_id, key_id=key_id, caller_kind="person",
                                         status=publisher.trust_level.value))


# -- publishers -------------------------------------------------------------------------------------

def _key_of(pem: str, now: datetime) -> PublisherKey:
    # The key and signature reader loads with the first key or signature (never at a cold start).
    from skillcore.packages import signature

    try:
        raw = signature.raw_public_key(pem)
    except ValueError:
        raise ValidationFailed("publicKey is not an Ed25519 public key in PEM",
                               [FieldError(path="publicKey", message="an Ed25519 public key in PEM")]) from None
    return PublisherKey(key_id=signature.key_id(raw), public_key=base64.b64encode(raw).decode("ascii"),
                        status=KeyStatus.ACTIVE, created_at=now)


def register_publisher(deps: PackageDeps, actor: str, *, publisher_id: str, display_name: str, user_id: str,
                       trust_level: TrustLevel, public_key: str, now: datetime) -> Publisher:
    key = _key_of(public_key, now)
    publisher = Publisher(publisher_id=publisher_id, display_name=display_name, user_id=user_id,
                          trust_level=trust_level, created_at=now, updated_at=now, keys=(key,))
    store.create_publisher(deps.db, publisher, extra=[_publisher_audit(
        deps.db, actor, AuditAction.PACKAGE_PUBLISHER_REGISTER, publisher, key.key_id, now, 1)])
    return publisher


def get_publisher(deps: PackageDeps, publisher_id: str) -> tuple[Publisher, int]:
    found = store.get_publisher(deps.db, publisher_id)
    if found is None:
        raise NotFound("publisher not found")
    return found


def add_key(deps: PackageDeps, actor: str, publisher_id: str, *, public_key: str, revoke_others: bool,
            now: datetime) -> Publisher:
    """Rotation: a new active key; with `revoke_others`, every other key revoked in the same write."""
    publisher, version = get_publisher(deps, publisher_id)
    key = _key_of(public_key, now)
    if publisher.key(key.key_id) is not None:
        raise AlreadyExists("this key is registered already")
    if len(publisher.keys) >= store.MAX_KEYS:
        raise QuotaExceeded("a publisher has at most 10 keys", quota="publisher_keys", limit=store.MAX_KEYS)
    kept = tuple(replace(k, status=KeyStatus.REVOKED, revoked_at=now)
                 if revoke_others and k.status is KeyStatus.ACTIVE else k for k in publisher.keys)
    after = replace(publisher, keys=(*kept, key), updated_at=now)
    store.replace_publisher(deps.db, after, expected_version=version, extra=[_publisher_audit(
        deps.db, actor, AuditAction.PACKAGE_PUBLISHER_KEY_ADD, after, key.key_id, now, version + 1)])
    return after


def revoke_key(deps: PackageDeps, actor: str, publisher_id: str, key_id: str, *, now: datetime) -> Publisher:
    """A revoked key signs nothing more: a submission signed with it is 422 `key_revoked`. Idempotent."""
    publisher, version = get_publisher(deps, publisher_id)
    key = publisher.key(key_id)
    if key is None:
        raise NotFound("key not found")
    if key.status is KeyStatus.REVOKED:
        return publisher
    after = replace(publisher, updated_at=now, keys=tuple(
        replace(k, status=KeyStatus.REVOKED, revoked_at=now) if k.key_id == key_id else k for k in publisher.keys))
    store.replace_publisher(deps.db, after, expected_version=version, extra=[_publisher_audit(
        deps.db, actor, AuditAction.PACKAGE_PUBLISHER_KEY_REVOKE, after, key_id, now, version + 1)])
    return after


def list_publishers(deps: PackageDeps, *, limit: int, cursor: str | None) -> tuple[list[Publisher], str | None]:
    return store.list_publishers(deps.db, limit=limit, cursor=cursor)


# -- submission -------------------------------------------------------------------------------------

def verify_signed(deps: PackageDeps, user_id: str, package: Package, signature_text: str | None) -> tuple[Publisher, str]:
    """The publisher (and the key id) that signed `package`, if the caller is that publisher; else the refusal."""
    from skillcore.packages import signature

    signed = signature.decode(signature_text)
    if package.manifest.publisher is None:
        raise PackageInvalid("a release names its publisher", path="skillcore.json#/publisher", rule="required")
    found = store.get_publisher(deps.db, package.manifest.publisher)
    if found is None:
        raise PublisherUnknown("the package's publisher is not registered", reason="not_registered")
    publisher = found[0]
    if publisher.user_id != user_id:
        raise PublisherUnknown("the caller is not the package's publisher", reason="not_publisher")
    key = publisher.key(signed.key_id)
    if key is None:
        raise PublisherUnknown("the package was signed with a key its publisher never registered",
                               reason="key_not_registered")
    if key.status is KeyStatus.REVOKED:
        raise KeyRevoked(key_id=key.key_id)
    signature.verify(signed, package.digest, base64.b64decode(key.public_key))
    return publisher, key.key_id


def _permissions(package: Package) -> tuple[Permission, ...]:
    return tuple(Permission(code=p.code, risk_level=p.risk_level.value, approval_mode=p.approval_mode.value)
                 for p in package.manifest.permissions)


def _tools(package: Package) -> tuple[ReleaseTool, ...]:
    from skillcore.sandbox.manifest import decode_manifest

    found = []
    for listed in package.manifest.tools:
        limits = decode_manifest(listed.sandbox_manifest()).limits
        found.append(ReleaseTool(
            name=listed.name, module_sha256=listed.sha256, host_functions=tuple(listed.host_functions),
            limits={"fuel": limits.fuel, "memoryBytes": limits.memory_bytes, "timeoutMs": limits.timeout_ms,
                    "outputBytes": limits.output_bytes, "hostCalls": limits.host_calls}))
    return tuple(found)


def _publish_tools(deps: PackageDeps, release: Release) -> tuple[ReleaseTool, ...]:
    """Each code tool's module precompiled by this service from the reviewed package, stored beside its bytes."""
    if not release.tools:
        return ()
    from skillcore.packages import code_check
    from skillcore.packages.package import open_package

    blobs = deps.blobs()
    package = open_package(blob_port.read_checked(blobs, release.blob_key, release.checksum))
    artifacts = code_check.precompiled(package)
    published = []
    for tool in release.tools:
        data = artifacts[tool.name]
        key, sha = blob_port.artifact_key(release.blob_key, tool.name), checksum(data)
        blobs.put(key, data, sha)
        published.append(replace(tool, artifact_key=key, artifact_checksum=sha))
    return tuple(published)


def submit(deps: PackageDeps, user_id: str, package_b64: str, signature_text: str | None, *, now: datetime) -> Release:
    # The package format and the release check (the offline model, the renderer) load with the first submission.
    from skillcore.packages import checks
    from skillcore.packages.package import open_package

    data = decode_base64(package_b64)
    package = open_package(data)
    publisher, key_id = verify_signed(deps, user_id, package, signature_text)
    manifest = package.manifest
    if manifest.skill_id in deps.manifests:
        raise SkillIdTaken("this skill id is a built-in skill's")
    report = checks.run(package, manifests=deps.manifests, now=now, trust_level=publisher.trust_level.value,
                        high_risk_trust_levels=deps.high_risk_trust_levels)
    sha = checksum(data)
    key = blob_port.blob_key(manifest.skill_id, manifest.version, sha)
    deps.blobs().put(key, data, sha)
    passed = report.passed
    release = Release(
        release_id=new_id(now), skill_id=manifest.skill_id, version=manifest.version,
        publisher_id=publisher.publisher_id, key_id=key_id, digest=package.digest, checksum=sha, size=len(data),
        blob_key=key, signature=signature_text or "", state=ReleaseState.CHECKED if passed else ReleaseState.REJECTED,
        trust_level=publisher.trust_level, display_name=manifest.protocol.display_name,
        description=package.skill.description, permissions=_permissions(package), remotes=len(manifest.remotes),
        when_to_use=tuple(manifest.protocol.when_to_use),
        report=report, submitted_by=user_id, submitted_at=now,
        decided_by=None if passed else RELEASE_CHECK, decided_at=None if passed else now,
        reason=None if passed else CHECKS_FAILED, tools=_tools(package),
    )
    failed_rules = tuple(dict.fromkeys(f.rule for r in report.results for f in r.findings))
    store.submit(deps.db, release, extra=[_audit(
        deps.db, user_id, AuditAction.PACKAGE_SUBMIT, now, skill_id=release.skill_id, version=release.version,
        target=release.release_id, decision=Decision.SUCCEEDED if passed else Decision.DENIED,
        reason=None if passed else CHECKS_FAILED,
        metadata=AuditMetadata(publisher_id=release.publisher_id, key_id=key_id, package_sha256=release.digest,
                               status=release.state.value, defence_rules=failed_rules,
                               permission_codes=tuple(p.code for p in release.permissions)))])
    return release


# -- review -----------------------------------------------------------------------------------------

def get_release(deps: PackageDeps, release_id: str) -> Release:
    release = store.get_release(deps.db, release_id)
    if release is None:
        raise NotFound("release not found")
    return release


def get_own_release(deps: PackageDeps, user_id: str, release_id: str) -> Release:
    """A publisher reads its own releases (another's is 404, as if it did not exist)."""
    release = store.get_release(deps.db, release_id)
    if release is None or release.submitted_by != user_id:
        raise NotFound("release not found")
    return release


def list_review(deps: PackageDeps, *, limit: int, cursor: str | None) -> tuple[list[Release], str | None]:
    return store.list_review(deps.db, limit=limit, cursor=cursor)


def _review_audit(db: Db, operator: str, release: Release, now: datetime) -> Op:
    """The operator's decision: the release's new state, never the reason they wrote."""
    return _audit(db, operator, AuditAction.PACKAGE_REVIEW, now, skill_id=release.skill_id, version=release.version,
                  target=release.release_id,
                  metadata=AuditMetadata(publisher_id=release.publisher_id, package_sha256=release.digest,
                                         status=release.state.value, caller_kind="person"))


def decide(deps: PackageDeps, operator: str, release_id: str, *, approve: bool, reason: str, now: datetime) -> Release:
    """An operator's decision on a checked release: rejected with the reason, or approved and published (the
    catalog's skill then shows it if it is the newest published version)."""
    release = get_release(deps, release_id)
    if release.state is not ReleaseState.CHECKED:
        raise ReleaseNotPending()
    if not approve:
        after = replace(release, state=ReleaseState.REJECTED, decided_by=operator, decided_at=now, reason=reason)
        store.decide(deps.db, release, after, skill=None, latest_sort=None,
                     extra=[_review_audit(deps.db, operator, after, now)])
        return after
    plan = install_store.get_rollout(deps.db, release.skill_id)
    settings = deps.rollout or RolloutSettings()
    if plan is not None and plan.canary is not None:
        raise CanaryRunning()
    canary = rollout.starts_canary(plan, release, settings)
    narrowed = plan is not None and plan.stable is not None and _input_narrowed(deps, plan.stable.release_id, release)
    ops = rollout.approval_ops(deps.db, plan, release, canary=canary, input_narrowed=narrowed, now=now)
    if canary:
        # Approved, not yet published: the canary share of installs tries it first (packages/rollout.py).
        # Its code tools are precompiled now: a canary serves them as a published version does.
        after = replace(release, state=ReleaseState.APPROVED, decided_by=operator, decided_at=now, reason=reason,
                        tools=_publish_tools(deps, release))
        store.decide(deps.db, release, after, skill=None, latest_sort=None,
                     extra=[*ops, _review_audit(deps.db, operator, after, now)])
        return after
    after = replace(release, state=ReleaseState.PUBLISHED, decided_by=operator, decided_at=now, reason=reason,
                    published_at=now, tools=_publish_tools(deps, release))
    current, latest_sort = store.get_skill(deps.db, release.skill_id)
    newest = current is None or current.latest_version is None or \
        semver.compare(release.version, current.latest_version) > 0
    skill = CatalogSkill(
        skill_id=release.skill_id, publisher_id=release.publisher_id, trust_level=release.trust_level,
        latest_version=release.version, latest_release_id=release.release_id, display_name=release.display_name,
        description=release.description, permissions=release.permissions, published_at=now,
    ) if newest else None
    store.decide(deps.db, release, after, skill=skill, latest_sort=latest_sort,
                 extra=[*ops, _review_audit(deps.db, operator, after, now)])
    return after


def _bindings(deps: PackageDeps, release: Release) -> dict[str, object]:
    from skillcore.packages.package import open_package

    package = open_package(blob_port.read_checked(deps.blobs(), release.blob_key, release.checksum))
    return {b.name: b.input_schema for b in package.manifest.protocol.tool_bindings}


def _input_narrowed(deps: PackageDeps, stable_release_id: str, release: Release) -> bool:
    """Whether `release` narrows a tool binding's input schema of the stable version (packages/upgrades.py)."""
    stable = store.get_release(deps.db, stable_release_id)
    if stable is None:
        return False
    return upgrades.input_narrowed(_bindings(deps, stable), _bindings(deps, release))


# -- the catalog (published versions only) ----------------------------------------------------------

def list_catalog(deps: PackageDeps, *, limit: int, cursor: str | None) -> tuple[list[CatalogSkill], str | None]:
    return store.list_catalog(deps.db, limit=limit, cursor=cursor)


def get_catalog_skill(deps: PackageDeps, skill_id: str) -> tuple[CatalogSkill, list[dict[str, str]]]:
    """A published skill and its published versions (newest last); anything else is 404."""
    skill, _ = store.get_skill(deps.db, skill_id)
    if skill is None:
        raise NotFound("skill not found in the catalog")
    versions: list[dict[str, str]] = []
    cursor: str | None = None
    while True:
        page, cursor = store.list_versions(deps.db, skill_id, limit=100, cursor=cursor)
        versions += [v for v in page if v["state"] == ReleaseState.PUBLISHED.value]
        if cursor is None:
            return skill, versions


def published_package(deps: PackageDeps, skill_id: str) -> tuple[Release, bytes]:
    """The newest published version's release and its bytes, checked against the stored checksum."""
    skill, _ = store.get_skill(deps.db, skill_id)
    if skill is None or skill.latest_release_id is None:
        raise NotFound("skill not found in the catalog")
    release = get_release(deps, skill.latest_release_id)
    if release.state is not ReleaseState.PUBLISHED:
        raise NotFound("skill not found in the catalog")
    return release, blob_port.read_checked(deps.blobs(), release.blob_key, release.checksum)
