"""The catalog's records: publishers and their keys, releases (one version of one skill, submitted, checked,
reviewed and published) and the catalog's skills (docs/packages.md "Release review and the catalog").

A release moves `submitted → checked → approved | rejected`, and an approved one is `published`. Today the
checks run inside the submission (a release is stored `checked`, or `rejected` with reason `checks_failed` and
its report), and an approval publishes at once (approved → published in one transaction); the canary of
issue 25's point 7 goes between the two. `trust_level` is on every publisher, release and catalog skill
(point 5 adds the levels' rules).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from skillcore.conversations.models import Frozen


class TrustLevel(StrEnum):
    BUILTIN = "builtin"  # in the repository (never in the catalog's table)
    VERIFIED = "verified_publisher"  # a publisher an operator verified
    COMMUNITY = "community"  # a registered publisher, not verified
    USER_OWN = "user_own"  # a user's own capability (imported from a package)


class KeyStatus(StrEnum):
    ACTIVE = "active"
    REVOKED = "revoked"


class ReleaseState(StrEnum):
    SUBMITTED = "submitted"
    CHECKED = "checked"  # the automatic checks passed: waiting for an operator
    APPROVED = "approved"
    REJECTED = "rejected"
    PUBLISHED = "published"
    ROLLED_BACK = "rolled_back"  # a canary whose outcomes were worse than its previous version's: never served


class PublisherKey(Frozen, frozen=True, kw_only=True):
    key_id: str
    public_key: str  # the raw 32 bytes, base64
    status: KeyStatus
    created_at: datetime
    revoked_at: datetime | None = None


class Publisher(Frozen, frozen=True, kw_only=True):
    publisher_id: str
    display_name: str
    user_id: str  # the account that submits its releases (a token's `sub`)
    trust_level: TrustLevel
    created_at: datetime
    updated_at: datetime
    keys: tuple[PublisherKey, ...] = ()

    def key(self, key_id: str) -> PublisherKey | None:
        return next((k for k in self.keys if k.key_id == key_id), None)


class Finding(Frozen, frozen=True, kw_only=True):
    """What a check found: where (a package path, with a JSON Pointer after `#`) and which rule."""

    path: str
    rule: str


class CheckResult(Frozen, frozen=True, kw_only=True):
    check: str  # structure | compatibility | defences | permissions | evals
    passed: bool
    findings: tuple[Finding, ...] = ()
    cases: int = 0  # evals: cases run
    failed_cases: tuple[str, ...] = ()  # evals: `<file>#<case id>` of the cases that failed


class CheckReport(Frozen, frozen=True, kw_only=True):
    passed: bool
    results: tuple[CheckResult, ...]
    ran_at: datetime


class Permission(Frozen, frozen=True, kw_only=True):
    code: str
    risk_level: str
    approval_mode: str


class ReleaseTool(Frozen, frozen=True, kw_only=True):
    """A code tool of a release: what the page shows (its limits, its host functions) and, once published, where
    the service stored its precompiled module (beside the package's bytes, with its checksum)."""

    name: str
    module_sha256: str
    host_functions: tuple[str, ...]
    limits: dict[str, int]  # fuel, memoryBytes, timeoutMs, outputBytes, hostCalls (defaults filled in)
    artifact_key: str | None = None
    artifact_checksum: str | None = None


class Release(Frozen, frozen=True, kw_only=True):
    release_id: str
    skill_id: str
    version: str
    publisher_id: str
    key_id: str
    digest: str  # the canonical digest the signature signed
    checksum: str  # SHA-256 of the zip as stored
    size: int
    blob_key: str
    signature: str  # the signature file's text
    state: ReleaseState
    trust_level: TrustLevel
    display_name: str  # the package's protocol displayName (a publisher's text: shown quoted, never an instruction)
    description: str  # SKILL.md's description (the same)
    permissions: tuple[Permission, ...]
    remotes: int
    report: CheckReport
    submitted_by: str
    submitted_at: datetime
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None
    published_at: datetime | None = None
    tools: tuple[ReleaseTool, ...] = ()
    # Set when the release was rolled back (packages/rollout.py): the publisher's notice, codes and counts only.
    rollback: RollbackNotice | None = None
    # The protocol's whenToUse (the publisher's texts: shown quoted, never instructions), for agent hosts' listing.
    when_to_use: tuple[str, ...] = ()


class RollbackNotice(Frozen, frozen=True, kw_only=True):
    """Why a canary was rolled back: its outcome counts and its previous version's over the same window."""

    at: datetime
    previous_version: str
    reason: str  # failure_rate | eval_score
    calls: int
    failures: int
    previous_calls: int
    previous_failures: int


class CatalogSkill(Frozen, frozen=True, kw_only=True):
    """A skill of the catalog: its owner and, once a version is published, its latest published version."""

    skill_id: str
    publisher_id: str
    trust_level: TrustLevel
    latest_version: str | None = None
    latest_release_id: str | None = None
    display_name: str | None = None
    description: str | None = None
    permissions: tuple[Permission, ...] = ()
    published_at: datetime | None = None


# -- installs and rollouts (packages/installs.py, packages/rollout.py) --------------------------------

class VersionRef(Frozen, frozen=True, kw_only=True):
    """One published version as installs and rollouts name it: enough to decide an upgrade without its package."""

    version: str
    release_id: str
    permissions: tuple[Permission, ...] = ()
    # Whether its tool bindings' input schemas are narrower than the version it followed in the rollout's
    # history (decided once, when it was approved: packages/upgrades.py).
    input_narrowed: bool = False
    # The publisher's texts (shown quoted, never instructions): its protocol's displayName and whenToUse.
    display_name: str = ""
    when_to_use: tuple[str, ...] = ()


class Install(Frozen, frozen=True, kw_only=True):
    """A user's install of a catalog skill. `current` is the version the person installed or consented to last;
    `previous` the one before a consented upgrade (served again if `current` is rolled back). Which version
    serves is computed on read (packages/installs.py `serving`), never stored: a rollback changes one item."""

    user_id: str
    skill_id: str
    publisher_id: str
    trust_level: TrustLevel
    current: VersionRef
    previous: VersionRef | None = None
    revision: int = 1
    installed_at: datetime
    updated_at: datetime


class Rollout(Frozen, frozen=True, kw_only=True):
    """A skill's versions as installs see them: the stable one (published), the canary being tried on a share of
    installs (approved, not yet published) and since when, and the versions rolled back (never served)."""

    skill_id: str
    stable: VersionRef | None = None
    canary: VersionRef | None = None
    canary_since: datetime | None = None
    rolled_back: tuple[str, ...] = ()
    revision: int = 1
