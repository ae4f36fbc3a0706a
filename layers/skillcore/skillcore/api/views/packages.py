"""Bodies of the package, release, publisher and catalog routes (docs/packages.md)."""

from __future__ import annotations

import base64

from skillcore.api.views import Body, Time, maybe_time, time
from skillcore.packages import models


class PackageFile(Body, frozen=True, kw_only=True):
    """A package's bytes: its zip base64-encoded, its file name and SHA-256."""

    file_name: str
    package: str
    sha256: str
    size: int


class DeclaredPermission(Body, frozen=True, kw_only=True):
    code: str
    risk_level: str
    approval_mode: str


class PublisherKey(Body, frozen=True, kw_only=True):
    key_id: str
    status: models.KeyStatus
    created_at: Time
    revoked_at: Time | None


class Publisher(Body, frozen=True, kw_only=True):
    publisher_id: str
    display_name: str
    user_id: str
    trust_level: models.TrustLevel
    keys: list[PublisherKey]
    created_at: Time
    updated_at: Time


class Finding(Body, frozen=True, kw_only=True):
    path: str
    rule: str


class CheckResult(Body, frozen=True, kw_only=True):
    check: str
    passed: bool
    findings: list[Finding]
    cases: int
    failed_cases: list[str]


class CheckReport(Body, frozen=True, kw_only=True):
    passed: bool
    results: list[CheckResult]
    ran_at: Time


class RollbackNotice(Body, frozen=True, kw_only=True):
    """Why a canary was rolled back (packages/rollout.py): the rule, its counts and its previous version's."""

    at: Time
    previous_version: str
    reason: str
    calls: int
    failures: int
    previous_calls: int
    previous_failures: int


class ReleaseCodeTool(Body, frozen=True, kw_only=True):
    """A code tool of a release: its limits and host functions, and whether the service precompiled its module."""

    tool_id: str
    module_sha256: str
    host_functions: list[str]
    limits: dict[str, int]  # fuel, memoryBytes, timeoutMs, outputBytes, hostCalls
    precompiled: bool


class Release(Body, frozen=True, kw_only=True):
    """`displayName` and `description` are the publisher's texts: shown as quoted data, never instructions."""

    release_id: str
    skill_id: str
    version: str
    publisher_id: str
    key_id: str
    digest: str
    sha256: str
    size: int
    state: models.ReleaseState
    trust_level: models.TrustLevel
    display_name: str
    description: str
    permissions: list[DeclaredPermission]
    remotes: int
    report: CheckReport
    submitted_at: Time
    decided_by: str | None
    decided_at: Time | None
    reason: str | None
    published_at: Time | None
    # Set when the release was rolled back after its canary: the publisher's notice.
    rollback: RollbackNotice | None
    # Its code tools (docs/code-skills.md "Code tools in a package, end to end").
    code_tools: list[ReleaseCodeTool]


class CatalogSkill(Body, frozen=True, kw_only=True):
    skill_id: str
    publisher_id: str
    trust_level: models.TrustLevel
    version: str
    release_id: str
    display_name: str
    description: str
    permissions: list[DeclaredPermission]
    published_at: Time


class CatalogVersion(Body, frozen=True, kw_only=True):
    release_id: str
    version: str


class CatalogSkillDetail(Body, frozen=True, kw_only=True):
    skill: CatalogSkill
    versions: list[CatalogVersion]


class PublishedPackage(Body, frozen=True, kw_only=True):
    skill_id: str
    version: str
    release_id: str
    trust_level: models.TrustLevel
    package: str
    signature: str
    sha256: str


def package_file(file_name: str, data: bytes, sha256: str) -> PackageFile:
    return PackageFile(file_name=file_name, package=base64.b64encode(data).decode("ascii"), sha256=sha256,
                       size=len(data))


def _permissions(found: tuple[models.Permission, ...]) -> list[DeclaredPermission]:
    return [DeclaredPermission(code=p.code, risk_level=p.risk_level, approval_mode=p.approval_mode) for p in found]


def publisher(p: models.Publisher) -> Publisher:
    return Publisher(publisher_id=p.publisher_id, display_name=p.display_name, user_id=p.user_id,
                     trust_level=p.trust_level, created_at=time(p.created_at), updated_at=time(p.updated_at),
                     keys=[PublisherKey(key_id=k.key_id, status=k.status, created_at=time(k.created_at),
                                        revoked_at=maybe_time(k.revoked_at)) for k in p.keys])


def report(r: models.CheckReport) -> CheckReport:
    return CheckReport(passed=r.passed, ran_at=time(r.ran_at), results=[
        CheckResult(check=c.check, passed=c.passed, cases=c.cases, failed_cases=list(c.failed_cases),
                    findings=[Finding(path=f.path, rule=f.rule) for f in c.findings]) for c in r.results])


def release(r: models.Release) -> Release:
    return Release(
        release_id=r.release_id, skill_id=r.skill_id, version=r.version, publisher_id=r.publisher_id,
        key_id=r.key_id, digest=r.digest, sha256=r.checksum, size=r.size, state=r.state, trust_level=r.trust_level,
        display_name=r.display_name, description=r.description, permissions=_permissions(r.permissions),
        remotes=r.remotes, report=report(r.report), submitted_at=time(r.submitted_at), decided_by=r.decided_by,
        decided_at=maybe_time(r.decided_at), reason=r.reason, published_at=maybe_time(r.published_at),
        rollback=None if r.rollback is None else RollbackNotice(
            at=time(r.rollback.at), previous_version=r.rollback.previous_version, reason=r.rollback.reason,
            calls=r.rollback.calls, failures=r.rollback.failures, previous_calls=r.rollback.previous_calls,
            previous_failures=r.rollback.previous_failures),
        code_tools=[ReleaseCodeTool(tool_id=t.name, module_sha256=t.module_sha256, host_functions=list(t.host_functions),
                                    limits=dict(t.limits), precompiled=t.artifact_key is not None) for t in r.tools],
    )


def catalog_skill(s: models.CatalogSkill) -> CatalogSkill:
    return CatalogSkill(
        skill_id=s.skill_id, publisher_id=s.publisher_id, trust_level=s.trust_level, version=s.latest_version or "",
        release_id=s.latest_release_id or "", display_name=s.display_name or "", description=s.description or "",
        permissions=_permissions(s.permissions),
        published_at=time(s.published_at) if s.published_at else "",
    )


def published_package(r: models.Release, data: bytes) -> PublishedPackage:
    return PublishedPackage(skill_id=r.skill_id, version=r.version, release_id=r.release_id,
                            trust_level=r.trust_level, package=base64.b64encode(data).decode("ascii"),
                            signature=r.signature, sha256=r.checksum)
