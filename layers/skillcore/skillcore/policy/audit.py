"""The audit record. Its metadata is a typed model with no field able to hold free text: every string is
an identifier, a code or a digest (a closed pattern), so message text, memory text and notes cannot be
written into skill_audit_events even by mistake.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum

from msgspec import Struct, field
from msgspec.structs import force_setattr

from skillcore import checks
from skillcore.policy.grants import GrantScope

# An identifier or code: letters, digits and a few separators, no spaces, at most 128 characters.
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9:_.#@/+-]{0,127}")


def audit_code(value: str) -> str:
    """`value` if it is a code; otherwise a fixed placeholder, so untrusted names (a model's tool call)
    never carry free text into the audit."""
    return value if _CODE.fullmatch(value) else "invalid_name"


class AuditAction(StrEnum):
    """What was attempted. An execution writes two events with the same action: the policy decision
    (allowed/denied) and, if allowed, the result (succeeded/failed)."""

    PERMISSION_GRANT = "permission.grant"
    PERMISSION_REVOKE = "permission.revoke"
    TOOL_EXECUTE = "tool.execute"
    BACKGROUND_CREATE = "background.create"
    BACKGROUND_EXECUTE = "background.execute"
    BACKGROUND_CANCEL = "background.cancel"
    AUTOMATION_EXECUTE = "automation.execute"
    # User-defined capabilities (capabilities/service.py): skill_id is the `user:<name>` id, target_id the
    # userCapabilityId, skill_version the capability's version after the change.
    USER_CAPABILITY_CREATE = "user_capability.create"
    USER_CAPABILITY_UPDATE = "user_capability.update"
    USER_CAPABILITY_ACTIVATE = "user_capability.activate"
    USER_CAPABILITY_DEACTIVATE = "user_capability.deactivate"
    USER_CAPABILITY_DELETE = "user_capability.delete"
    USER_CAPABILITY_BINDING_CREATE = "user_capability.binding.create"
    USER_CAPABILITY_BINDING_UPDATE = "user_capability.binding.update"
    USER_CAPABILITY_BINDING_DELETE = "user_capability.binding.delete"
    # Hosted external workflows: target_id the approval's id; the endpoint, tool and argument digest in the
    # metadata, never the arguments.
    HOSTED_ENDPOINT_APPROVAL = "hosted_endpoint.approval"
    # target_id the endpoint's id; the host and the URL's SHA-256 in the metadata, never the URL or the token.
    HOSTED_ENDPOINT_REGISTER = "hosted_endpoint.register"
    HOSTED_ENDPOINT_UPDATE = "hosted_endpoint.update"
    HOSTED_ENDPOINT_DELETE = "hosted_endpoint.delete"
    HOSTED_ENDPOINT_REFRESH = "hosted_endpoint.refresh"
    HOSTED_ENDPOINT_SNAPSHOT_ACCEPT = "hosted_endpoint.snapshot_accept"
    HOSTED_ENDPOINT_CALL = "hosted_endpoint.call"
    # Creation by conversation (capabilities/drafts.py): skill_id is "user_capability_draft", target_id the
    # draftId, skill_version the draft's revision after the change.
    USER_CAPABILITY_DRAFT_START = "user_capability.draft.start"
    USER_CAPABILITY_DRAFT_GENERATE = "user_capability.draft.generate"
    USER_CAPABILITY_DRAFT_CONFIRM = "user_capability.draft.confirm"
    # Packages and the catalog (packages/service.py), in the actor's audit: a release's submission (skill_id the
    # package's skill, skill_version its version, target_id the releaseId; denied when its checks failed) and an
    # operator's review of it; a publisher's registration and key changes (skill_id "package_publisher",
    # target_id the publisher's id). Never a text of the package, nor an operator's reason.
    PACKAGE_SUBMIT = "package.submit"
    PACKAGE_REVIEW = "package.review"
    PACKAGE_PUBLISHER_REGISTER = "package.publisher.register"
    PACKAGE_PUBLISHER_KEY_ADD = "package.publisher.key_add"
    PACKAGE_PUBLISHER_KEY_REVOKE = "package.publisher.key_revoke"
    # Installs (packages/installs.py), in the installing user's audit: skill_id the catalog skill, skill_version
    # the version installed, consented to or removed, status its trust level. A canary's end (packages/rollout.py),
    # in the publisher account's audit: promoted, or rolled back (decision failed, reason the rule, the counts).
    PACKAGE_INSTALL = "package.install"
    PACKAGE_UNINSTALL = "package.uninstall"
    PACKAGE_UPGRADE_ACCEPT = "package.upgrade_accept"
    PACKAGE_PROMOTE = "package.promote"
    PACKAGE_ROLLBACK = "package.rollback"


class Decision(StrEnum):
    ALLOWED = "allowed"
    DENIED = "denied"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


_DIGEST = re.compile(r"[0-9a-f]{64}")
_CODE_LISTS = ("permission_codes", "missing_permissions", "matched_grant_ids", "tools", "platform_capability_ids",
               "binding_names", "defence_rules", "gap_kinds", "scope_resources", "scope_arguments")
_CODES = ("tool_id", "error_code", "conversation_id", "source_message_id", "job_id", "run_id", "binding_name",
          "host_profile", "status", "endpoint_id", "user_capability_id", "host", "caller_kind", "scope_mismatch",
          "scope_argument", "publisher_id", "key_id")
_DIGESTS = ("idempotency_key", "input_sha256", "schema_sha256", "url_sha256", "fingerprint", "pending_fingerprint",
            "previous_fingerprint", "package_sha256")
_COUNTS = ("duration_ms", "attempt", "call_index", "results", "capability_version", "step_count", "binding_count",
           "draft_revision", "gap_count", "answer_count")


def _check_code(name: str, value: object) -> None:
    if not checks.matches(value, _CODE):
        raise ValueError(f"audit {name} must be an identifier or code (no spaces, at most 128 characters)")


class AuditMetadata(Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """Checked on construction, field by field: a string that is not a code or a digest is refused."""

    permission_codes: tuple[str, ...] = ()
    missing_permissions: tuple[str, ...] = ()
    matched_grant_ids: tuple[str, ...] = ()
    tool_id: str | None = None
    idempotency_key: str | None = None
    input_sha256: str | None = None
    error_code: str | None = None
    duration_ms: int | None = None
    attempt: int | None = None
    call_index: int | None = None
    results: int | None = None
    conversation_id: str | None = None
    source_message_id: str | None = None
    job_id: str | None = None
    run_id: str | None = None
    tools: tuple[str, ...] = ()
    # User-defined capabilities: ids, names, codes, a digest and counts; never a text the user wrote
    # (objective, instructions, criteria, trigger phrases and display name stay out of the audit).
    capability_version: int | None = None
    status: str | None = None
    step_count: int | None = None
    binding_count: int | None = None
    platform_capability_ids: tuple[str, ...] = ()
    binding_names: tuple[str, ...] = ()
    binding_name: str | None = None
    host_profile: str | None = None
    schema_sha256: str | None = None
    defence_rules: tuple[str, ...] = ()
    # Hosted external workflows: the endpoint's id (never its URL or host).
    endpoint_id: str | None = None
    host: str | None = None
    url_sha256: str | None = None
    fingerprint: str | None = None  # the pinned snapshot's (after an accept: the one adopted)
    pending_fingerprint: str | None = None  # a refresh's: the drifted list it saw
    previous_fingerprint: str | None = None  # an accept's: the snapshot it replaced
    # Capability drafts: the revision, counts and the gaps' kinds; never the description, an answer or a question.
    draft_revision: int | None = None
    gap_count: int | None = None
    gap_kinds: tuple[str, ...] = ()
    answer_count: int | None = None
    user_capability_id: str | None = None
    # Packages: the publisher, the signing (or changed) key's id, the package's canonical digest.
    publisher_id: str | None = None
    key_id: str | None = None
    package_sha256: str | None = None
    # Who decided, on a decision's event (an approval, a grant or a revoke): `person` (a host's token never
    # decides; docs/contract.md "Two kinds of caller").
    caller_kind: str | None = None
    # Finer scopes (policy/scopes.py). A grant's event: its narrowing as `kind:id` resources and
    # `[tool:]name:kind` constraints (never a value); a denial for the scope: what missed and which argument.
    scope_resources: tuple[str, ...] = ()
    scope_arguments: tuple[str, ...] = ()
    scope_mismatch: str | None = None
    scope_argument: str | None = None

    def __post_init__(self) -> None:
        for name in _CODE_LISTS:
            values = getattr(self, name)
            if isinstance(values, str) or not isinstance(values, tuple | list):
                raise ValueError(f"audit {name} must be a list of codes")
            for value in values:
                _check_code(name, value)
            force_setattr(self, name, tuple(values))  # items come back from DynamoDB as lists
        for name in _CODES:
            if (value := getattr(self, name)) is not None:
                _check_code(name, value)
        for name in _DIGESTS:
            value = getattr(self, name)
            if value is not None and not checks.matches(value, _DIGEST):
                raise ValueError(f"audit {name} must be a SHA-256 hex digest")
        for name in _COUNTS:
            value = getattr(self, name)
            if value is not None and not checks.integer(value, 0):
                raise ValueError(f"audit {name} must be a count (an integer >= 0)")


class AuditEvent(Struct, frozen=True, kw_only=True):
    event_id: str
    user_id: str
    at: datetime
    skill_id: str
    skill_version: str
    action: AuditAction
    decision: Decision
    scope: GrantScope | None = None
    target_id: str | None = None
    reason: str | None = None
    metadata: AuditMetadata = field(default_factory=AuditMetadata)

    def __post_init__(self) -> None:
        force_setattr(self, "action", AuditAction(self.action))  # items carry the plain strings
        force_setattr(self, "decision", Decision(self.decision))
        for name in ("skill_id", "skill_version"):
            _check_code(name, getattr(self, name))
        for name in ("target_id", "reason"):
            if (value := getattr(self, name)) is not None:
                _check_code(name, value)
