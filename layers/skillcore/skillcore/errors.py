"""Domain errors: one class per API error code, each with its HTTP status and the type of its `details`.

A kind (NotFound, Conflict, RuleViolation, ...) fixes the status; a class that names a `code` is an error a
caller can receive, and the API answers it as `{"error": {"code", "message", "details"}}` (api/errors.py)
with `details` as its TypedDict says. Callers tell errors apart by class (`except ApprovalRequired as e:
e.details["approvalId"]`), never by comparing code strings. Feature errors live with their feature
(capabilities/errors.py, hosted/errors.py, approvals/errors.py, background/errors.py, chat/errors.py); the
ones several features raise live here. `registry()` lists every class with a code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, NotRequired, Self, TypedDict


class DomainError(Exception):
    """Base class. `code` is the API error code (set by each concrete class), `status` the HTTP status (set by
    each kind), `details` structured data safe to return (a TypedDict per class, {} where there is none)."""

    code: ClassVar[str]
    status: ClassVar[int] = 500
    default_message: ClassVar[str] = ""
    details: Mapping[str, object]

    def __init__(self, message: str | None = None, details: Mapping[str, object] | None = None) -> None:
        if not any(issubclass(c, DomainError) and c.concrete() for c in type(self).__mro__):
            raise TypeError(f"{type(self).__name__} is a kind, not an error: raise one of its classes")
        message = message or self.default_message or type(self).__name__
        super().__init__(message)
        self.message = message
        self.details = details if details is not None else {}

    @classmethod
    def restored(cls, message: str, details: Mapping[str, object]) -> Self:
        """The error as an earlier answer stored it (a replayed call): its message and details as written."""
        error = cls.__new__(cls)
        DomainError.__init__(error, message, details)
        return error

    @classmethod
    def concrete(cls) -> bool:
        """True for a class with a code of its own (an error a caller can receive), false for a kind."""
        return "code" in cls.__dict__

    @classmethod
    def answered_as(cls) -> type[DomainError]:
        """The class a contract documents this one as: itself, or the nearest with a code of its own (a
        subclass that only refines the message, such as tools/service.py ToolFailed for Internal)."""
        return next(c for c in cls.__mro__ if issubclass(c, DomainError) and c.concrete())


def registry() -> tuple[type[DomainError], ...]:
    """Every concrete error class of the modules imported so far, in definition order of their kinds."""
    found: list[type[DomainError]] = []
    pending: list[type[DomainError]] = [DomainError]
    while pending:
        cls = pending.pop(0)
        if cls.concrete():
            found.append(cls)
        pending.extend(cls.__subclasses__())
    return tuple(dict.fromkeys(found))


# -- shapes of details shared by several classes -----------------------------------------------------

class FieldError(TypedDict):
    """One field a request got wrong: `path` in the request, and a message (with the validator's `type` when
    known), or the JSON Schema `keyword` it broke (a hosted tool's arguments: the validator's messages quote
    values, so they are not returned)."""

    path: str
    message: NotRequired[str]
    type: NotRequired[str]
    keyword: NotRequired[str]
    limit: NotRequired[str]  # which size cap a hosted tool's arguments broke (keyword `limit`)


class FieldErrors(TypedDict):
    errors: list[FieldError]


class NoDetails(TypedDict):
    pass


# -- the kinds, by status ------------------------------------------------------------------------

class BadRequest(DomainError):
    code = "bad_request"
    status = 400


class Unauthenticated(DomainError):
    code = "unauthenticated"
    status = 401


class Forbidden(DomainError):
    code = "forbidden"
    status = 403


class PersonRequiredDetails(TypedDict):
    """`host_token`: the token is an agent host's; `stale_sign_in`: a person's, but signed in more than
    RECENT_SIGN_IN_SECONDS ago on a decision at L3 or above (the page asks the person to sign in again)."""

    reason: str


class PersonRequired(Forbidden):
    """A decision (approve or deny, grant or revoke, a switch, accepting a drift, registering an endpoint,
    activating a capability) needs a person's token; an agent host's token never decides."""

    code = "person_required"
    default_message = "this decision needs the person's own sign-in"
    details: PersonRequiredDetails

    def __init__(self, message: str | None = None, *, reason: str) -> None:
        super().__init__(message, PersonRequiredDetails(reason=reason))


class NotFound(DomainError):
    """Missing, or someone else's (the message says what)."""

    code = "not_found"
    status = 404


class MethodNotAllowedDetails(TypedDict):
    allowed: list[str]


class MethodNotAllowed(DomainError):
    """The path exists with other methods (the router answers it with `Allow`)."""

    code = "method_not_allowed"
    status = 405
    details: MethodNotAllowedDetails

    def __init__(self, message: str, *, details: MethodNotAllowedDetails) -> None:
        super().__init__(message, details)


class Conflict(DomainError):
    """A kind: the state does not allow the request now (409)."""

    status = 409


class PayloadTooLarge(DomainError):
    code = "payload_too_large"
    status = 413


class RuleViolation(DomainError):
    """A kind: a request that is well formed but breaks a rule (422 with a specific code)."""

    status = 422


class Internal(DomainError):
    """Never raised by a service: the router's answer to an unexpected exception, whose message leaks nothing."""

    code = "internal"
    status = 500
    default_message = "internal error"


class UpstreamErrorDetails(TypedDict, total=False):
    reason: str


class UpstreamError(DomainError):
    """A service skillcore depends on answered badly or not at all (the model behind the draft generator, a
    hosted endpoint); `details.reason` is a stable machine reason where there is one."""

    code = "upstream_error"
    status = 502
    details: UpstreamErrorDetails

    def __init__(self, message: str, details: UpstreamErrorDetails | None = None) -> None:
        super().__init__(message, details)


class StoreUnavailableDetails(TypedDict):
    retryAfterSeconds: int


# Seconds a client is told to wait before retrying a request the store could not serve (`Retry-After`).
RETRY_AFTER_SECONDS = 2


class StoreUnavailableError(DomainError):
    """The store (DynamoDB) stayed unavailable through its retries, or the request's deadline left no room for
    another attempt. Nothing the request wrote is lost or doubled: a retry with the same ids is idempotent."""

    code = "store_unavailable"
    status = 503
    default_message = "the store is unavailable; retry shortly"
    details: StoreUnavailableDetails

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, StoreUnavailableDetails(retryAfterSeconds=RETRY_AFTER_SECONDS))


class UpstreamTimeout(DomainError):
    """A service skillcore calls (a hosted endpoint) did not answer within its deadline."""

    code = "upstream_timeout"
    status = 504


# -- errors several features raise -------------------------------------------------------------------

class AgentNotFoundDetails(TypedDict, total=False):
    agentIds: list[str]  # of a group: the ones that are missing


class AgentNotFound(NotFound):
    code = "agent_not_found"
    default_message = "agent not found"
    details: AgentNotFoundDetails

    def __init__(self, message: str | None = None, details: AgentNotFoundDetails | None = None) -> None:
        super().__init__(message, details)


class SkillNotFound(NotFound):
    code = "skill_not_found"
    default_message = "skill not found"


class AlreadyExists(Conflict):
    code = "already_exists"


class VersionConflictDetails(TypedDict, total=False):
    currentVersion: int
    pendingFingerprint: str | None


class VersionConflict(Conflict):
    code = "version_conflict"
    details: VersionConflictDetails

    def __init__(self, message: str, details: VersionConflictDetails | None = None) -> None:
        super().__init__(message, details)


class ConcurrentUpdate(Conflict):
    """A write kept meeting a concurrent transaction on the same items (TransactionConflict), retries spent."""

    code = "concurrent_update"
    default_message = "another request changed the same data at the same time; try again"


class LeaseLostDetails(TypedDict, total=False):
    status: str  # the status the job had instead


class LeaseLost(Conflict):
    """A job moved on under the worker holding it (another worker, a cancel, an expired lease)."""

    code = "lease_lost"
    details: LeaseLostDetails

    def __init__(self, message: str, details: LeaseLostDetails | None = None) -> None:
        super().__init__(message, details)


class ValidationFailed(RuleViolation):
    """The request (or an argument) does not fit its schema: `details.errors` lists the fields."""

    code = "validation_error"
    default_message = "request is not valid"
    details: FieldErrors | NoDetails

    def __init__(self, message: str | None = None, errors: list[FieldError] | None = None) -> None:
        super().__init__(message, FieldErrors(errors=errors) if errors is not None else NoDetails())


def invalid_cursor() -> ValidationFailed:
    """A list's `cursor` that this list never issued (422 `validation_error` on `cursor`)."""
    return ValidationFailed("cursor is not valid", [FieldError(path="cursor", message="invalid cursor")])


class QuotaExceededDetails(TypedDict):
    quota: str
    limit: int


class IdempotencyKeyReused(Conflict):
    """An idempotency key (a hosted call's clientCallId) sent again with another request: nothing is done, and
    the first request's answer is not shown (db/idempotency.py's payload check)."""

    code = "idempotency_key_reused"


class QuotaExceeded(RuleViolation):
    """A per-user quota's counter would pass its limit; details say which quota and its limit."""

    code = "quota_exceeded"
    details: QuotaExceededDetails

    def __init__(self, message: str, *, quota: str, limit: int):
        super().__init__(message, QuotaExceededDetails(quota=quota, limit=limit))


class InvalidTimezone(RuleViolation):
    code = "invalid_timezone"
    details: FieldErrors

    def __init__(self, timezone: str, *, path: str = "timezone") -> None:
        super().__init__(f"unknown time zone {timezone!r}",
                         FieldErrors(errors=[FieldError(path=path, message="not an IANA time zone")]))


class UnknownToolDetails(TypedDict, total=False):
    unknown: list[str]  # automation: the names config.tools gave that are not registered
    registered: list[str]
    toolName: str  # hosted: the tool the endpoint's snapshot does not have


class UnknownTool(RuleViolation):
    code = "unknown_tool"
    details: UnknownToolDetails

    def __init__(self, message: str, details: UnknownToolDetails) -> None:
        super().__init__(message, details)


class PermissionRequiredDetails(TypedDict):
    """Which skill needs which permission, so a client can offer the very grant (`PATCH
    /rpc/skills/permissions` takes the same two fields)."""

    skillId: str
    permissionCode: str | None
    missingPermissions: list[str]


class PermissionRequired(RuleViolation):
    code = "permission_required"
    default_message = "a permission is required"
    details: PermissionRequiredDetails

    def __init__(self, message: str | None, details: PermissionRequiredDetails) -> None:
        super().__init__(message, details)


class GrantScopeMismatchDetails(TypedDict):
    """Which grant did not cover the call, and what fell outside its narrowing (policy/scopes.py Mismatch:
    `agent`, `endpoint`, `tool`, `argument_missing`, `argument_enum`, `argument_maximum`,
    `argument_max_length`, `scope_unreadable`), with the constrained argument's name; never its value."""

    skillId: str
    permissionCode: str
    grantId: str
    mismatch: str
    argument: NotRequired[str]


class GrantScopeMismatch(Forbidden):
    """The permission is granted, but narrowed (an agent, an endpoint or its tools, an argument's values) and
    this call is outside it. Widen the grant's scope on the Skills page, or call within it."""

    code = "grant_scope_mismatch"
    default_message = "this call is outside the scope of the grant"
    details: GrantScopeMismatchDetails

    def __init__(self, message: str | None, details: GrantScopeMismatchDetails) -> None:
        super().__init__(message, details)


class PermissionNotDeclaredDetails(TypedDict):
    declared: list[str]


class PermissionNotDeclared(RuleViolation):
    code = "permission_not_declared"
    details: PermissionNotDeclaredDetails

    def __init__(self, message: str, details: PermissionNotDeclaredDetails) -> None:
        super().__init__(message, details)


class SkillDisabled(RuleViolation):
    code = "skill_disabled"
    default_message = "this skill is disabled"


# -- code tools (skillcore/sandbox/) --------------------------------------------------------------------


class SandboxDetails(TypedDict, total=False):
    """What ended a code tool's call, as codes and numbers only: `reason` a fixed code (`stack_overflow`,
    `undeclared_import`, `grant_missing`, ...), `limit` the limit that was reached (in its unit), `toolId`."""

    reason: str
    limit: int
    toolId: str


class SandboxFailure(DomainError):
    """A kind: a code tool's call ended by the sandbox (docs/code-skills.md, "Limits"). Each class is its own
    outcome code, recorded by the ToolRunner like any tool outcome; the next call starts from a fresh instance."""

    status = 422
    details: SandboxDetails

    def __init__(self, message: str | None = None, details: SandboxDetails | None = None) -> None:
        super().__init__(message, details if details is not None else SandboxDetails())


class SandboxFuelExhausted(SandboxFailure):
    code = "sandbox_fuel_exhausted"
    default_message = "the code tool ran out of fuel (its instruction budget)"


class SandboxMemoryExceeded(SandboxFailure):
    code = "sandbox_memory_exceeded"
    default_message = "the code tool needed more linear memory than its limit"


class SandboxTimeout(SandboxFailure):
    code = "sandbox_timeout"
    status = 504
    default_message = "the code tool ran past its wall-clock limit"


class SandboxOutputTooLarge(SandboxFailure):
    code = "sandbox_output_too_large"
    default_message = "the code tool's output is larger than its limit"


class SandboxTrap(SandboxFailure):
    code = "sandbox_trap"
    default_message = "the code tool stopped with a trap or broke the ABI"


class HostCallDenied(SandboxFailure):
    code = "host_call_denied"
    status = 403
    default_message = "the code tool called a host function it may not call"

# -- packages, publishers and the catalog (skillcore/packages/, docs/packages.md) ---------------------

class PackageInvalidDetails(TypedDict):
    """`path`: the file that is wrong, as it stands in the package (`skillcore.json`, `evals/basic.json`), with
    a JSON Pointer after `#` when a field inside it is (`skillcore.json#/permissions/0/riskLevel`); "" for the
    archive as a whole. `rule`: a stable machine name of the rule it broke (`too_many_files`, `path_traversal`,
    `symlink`, ...). Never a value from the package."""

    path: str
    rule: str


class PackageInvalid(RuleViolation):
    """A package (a zip of a skill folder) that does not fit the package format or its limits."""

    code = "package_invalid"
    default_message = "the package is not valid"
    details: PackageInvalidDetails

    def __init__(self, message: str | None = None, *, path: str, rule: str) -> None:
        super().__init__(message, PackageInvalidDetails(path=path, rule=rule))


class SignatureInvalidDetails(TypedDict):
    """`reason`: `missing` (no signature), `malformed` (not a signature file), `digest_mismatch` (signed another
    package: tampered) or `bad_signature` (the key did not sign this digest)."""

    reason: str


class SignatureInvalid(RuleViolation):
    code = "signature_invalid"
    default_message = "the package's signature is not valid"
    details: SignatureInvalidDetails

    def __init__(self, message: str | None = None, *, reason: str) -> None:
        super().__init__(message, SignatureInvalidDetails(reason=reason))


class PublisherUnknownDetails(TypedDict):
    """`reason`: `not_registered` (the package names no registered publisher), `not_publisher` (the caller is not
    that publisher's account) or `key_not_registered` (signed with a key that publisher never registered)."""

    reason: str


class PublisherUnknown(RuleViolation):
    code = "publisher_unknown"
    default_message = "the package's publisher is not a registered publisher, or not the signer"
    details: PublisherUnknownDetails

    def __init__(self, message: str | None = None, *, reason: str) -> None:
        super().__init__(message, PublisherUnknownDetails(reason=reason))


class KeyRevokedDetails(TypedDict):
    keyId: str


class KeyRevoked(RuleViolation):
    code = "key_revoked"
    default_message = "the package was signed with a revoked key"
    details: KeyRevokedDetails

    def __init__(self, message: str | None = None, *, key_id: str) -> None:
        super().__init__(message, KeyRevokedDetails(keyId=key_id))


class SkillIdTaken(Conflict):
    """A skill id is a built-in's, or another publisher's: a publisher submits only versions of its own skills."""

    code = "skill_id_taken"
    default_message = "this skill id belongs to a built-in skill or to another publisher"


class ReleaseNotPending(Conflict):
    """Approving or rejecting a release that is not waiting for review (already decided, or its checks failed)."""

    code = "release_not_pending"
    default_message = "this release is not waiting for review"


class TrustLevelForbiddenDetails(TypedDict):
    """`trustLevel` is the skill's (its publisher's), `permission` the first code it declares at `riskLevel` L3 or
    above; `allowed` the trust levels that may ask for those (SKILLS_HIGH_RISK_TRUST_LEVELS)."""

    trustLevel: str
    permission: str
    riskLevel: str
    allowed: list[str]


class TrustLevelForbidden(RuleViolation):
    """A skill asks for a permission at risk L3 or above, and its trust level may not (docs/packages.md "Trust
    levels"): refused at the release check (the finding `trust_level_forbidden`) and at install."""

    code = "trust_level_forbidden"
    default_message = "skills of this trust level may not ask for permissions at risk L3 or above"
    details: TrustLevelForbiddenDetails

    def __init__(self, message: str | None = None, *, trust_level: str, permission: str, risk_level: str,
                 allowed: list[str]) -> None:
        super().__init__(message, TrustLevelForbiddenDetails(trustLevel=trust_level, permission=permission,
                                                             riskLevel=risk_level, allowed=allowed))


class UpgradeNotPending(Conflict):
    """Accepting an upgrade that is not waiting for the person's consent (none, or another version now)."""

    code = "upgrade_not_pending"
    default_message = "no upgrade of this version is waiting for your consent"


class CanaryRunning(Conflict):
    """Approving a version of a skill while another of its versions is in its canary (packages/rollout.py):
    wait until that one is promoted or rolled back."""

    code = "canary_running"
    default_message = "another version of this skill is in its canary; decide this one when that one is done"
