"""Domain errors of user-defined capabilities, with the codes docs/contract.md gives them ("User-defined capabilities").

The store raises these when a transaction's named condition fails (reading the item as it was, ALL_OLD); the
service raises the same ones when its own read already shows the state, so both paths answer alike. The
functions below build them with their messages.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from skillcore.errors import Conflict, NotFound, QuotaExceeded, RuleViolation, VersionConflict

CAPABILITIES_QUOTA = "capabilities"
BINDINGS_QUOTA = "bindings"
DRAFTS_QUOTA = "drafts"  # open capability drafts (SKILLS_MAX_OPEN_DRAFTS)


class CapabilityNameTaken(Conflict):
    code = "capability_name_taken"
    default_message = "a capability with this name already exists"


class BindingNameTaken(Conflict):
    code = "binding_name_taken"
    default_message = "this capability already has a binding with this name"


class CapabilityActive(Conflict):
    code = "capability_active"
    default_message = "an active capability cannot be edited; deactivate it first"


class CapabilityNotActive(RuleViolation):
    """Deactivating (or binding) a capability that is not active: 422."""

    code = "capability_not_active"
    default_message = "the capability is not active"


class ProtocolNotActive(Conflict):
    """A draft's protocol asked for without preview: 409 under the same code as CapabilityNotActive, as docs/contract.md
    ("Capability catalog and protocols") gives it; the one code two classes share (the registry test knows)."""

    code = "capability_not_active"
    default_message = "the capability is not active; its owner may preview it"


class BindingInUseDetails(TypedDict):
    steps: list[int]


class BindingInUse(Conflict):
    code = "binding_in_use"
    default_message = "a step of the workflow uses this binding"
    details: BindingInUseDetails

    def __init__(self, details: BindingInUseDetails) -> None:
        super().__init__(None, details)


class DefenceErrors(TypedDict):
    """What a structural defence found: each entry has `path` and the rule, keyword or reference it broke."""

    errors: list[dict[str, Any]]


class DefenceError(RuleViolation):
    """A kind: one of the structural defences refused the input."""

    details: DefenceErrors

    def __init__(self, message: str, details: DefenceErrors) -> None:
        super().__init__(message, details)


class UnsafeText(DefenceError):
    code = "unsafe_text"


class UnknownReference(DefenceError):
    code = "unknown_reference"


class SchemaNotAllowed(DefenceError):
    code = "schema_not_allowed"


DEFENCES: dict[str, type[DefenceError]] = {cls.code: cls for cls in (UnsafeText, UnknownReference, SchemaNotAllowed)}


class DraftRevisionConflictDetails(TypedDict):
    currentRevision: int
    status: str
    userCapabilityId: NotRequired[str]


class DraftRevisionConflict(Conflict):
    """The draft is not open at the revision given: another generate or confirm moved it on, or it expired.
    `details` says where it is now (and, once confirmed, which capability it became)."""

    code = "draft_revision_conflict"
    default_message = "the draft is not open at that revision"
    details: DraftRevisionConflictDetails

    def __init__(self, details: DraftRevisionConflictDetails) -> None:
        super().__init__(None, details)


class DraftGap(TypedDict):
    gapId: str
    path: str
    kind: str


class DraftHasGapsDetails(TypedDict):
    gaps: list[DraftGap]


class DraftHasGaps(RuleViolation):
    code = "draft_has_gaps"
    default_message = "the draft still has open questions; answer them with generate first"
    details: DraftHasGapsDetails

    def __init__(self, details: DraftHasGapsDetails) -> None:
        super().__init__(None, details)


def capability_not_found() -> NotFound:
    return NotFound("user capability not found")


def binding_not_found() -> NotFound:
    return NotFound("tool binding not found")


def name_taken() -> CapabilityNameTaken:
    return CapabilityNameTaken()


def binding_name_taken() -> BindingNameTaken:
    return BindingNameTaken()


def capability_active() -> CapabilityActive:
    return CapabilityActive()


def capability_not_active() -> CapabilityNotActive:
    return CapabilityNotActive()


def binding_in_use(steps: list[int]) -> BindingInUse:
    return BindingInUse(BindingInUseDetails(steps=steps))


def version_conflict(current: int) -> VersionConflict:
    return VersionConflict("the capability changed since that version", {"currentVersion": current})


def quota_exceeded(quota: str, limit: int) -> QuotaExceeded:
    return QuotaExceeded(f"at most {limit} {quota}", quota=quota, limit=limit)


def defence_error(code: str, message: str, errors: list[dict[str, Any]]) -> DefenceError:
    """One of the structural defences refused the input: `unsafe_text`, `unknown_reference`, `schema_not_allowed`
    (the defence names its finding by code; DEFENCES gives its class)."""
    return DEFENCES[code](message, DefenceErrors(errors=errors))


# -- drafts (docs/contract.md "Creating a capability by conversation") -----------------------------------------

def draft_not_found() -> NotFound:
    return NotFound("capability draft not found")


def draft_revision_conflict(current: int, status: str, user_capability_id: str | None = None) -> DraftRevisionConflict:
    details = DraftRevisionConflictDetails(currentRevision=current, status=status)
    if user_capability_id:
        details["userCapabilityId"] = user_capability_id
    return DraftRevisionConflict(details)


def draft_has_gaps(gaps: list[DraftGap]) -> DraftHasGaps:
    return DraftHasGaps(DraftHasGapsDetails(gaps=gaps))
