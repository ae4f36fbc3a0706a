"""The user capability service: one set of operations for the HTTP routes, the MCP face and the creation flow
(thin shells over it, so the checks, the errors and the audit are the same whoever calls).

Every write runs, in this order, after the shape was checked by the request models:
  text filter (a hint) → references → schema subset   (capabilities/defences/)
on the capability as it would be after the write (so a binding change is checked with the workflow it
serves, and an activation re-checks everything stored). The first defence that finds anything answers
(`unsafe_text`, `unknown_reference`, `schema_not_allowed`) and the refusal is audited as `denied` with that
code; nothing is written. A successful mutation writes its audit event in the same transaction as the data.

Concurrency is the store's: quotas and the version lock are conditions of the write's own transaction
(capabilities/store.py), so no read here decides anything a concurrent request could change; the reads
only give early, precise answers and the material for the defences.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from msgspec import Struct
from msgspec.structs import replace

from skillcore.capabilities import errors, store
from skillcore.capabilities.defences import references, schema_subset, text_filter
from skillcore.capabilities.models import (
    CapabilityStatus,
    LocalToolStep,
    PlatformStep,
    Step,
    ToolBinding,
    UserCapability,
    Workflow,
)
from skillcore.db.dynamo import Db
from skillcore.db.transact import Backoff, Op
from skillcore.errors import ConcurrentUpdate, ValidationFailed, VersionConflict
from skillcore.ids import new_id
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision, audit_code

if TYPE_CHECKING:  # the request structure is defined by the first request that carries one (cold start)
    from skillcore.capabilities.structure import (
        CapabilityFields,
        CreateUserCapability,
        ToolBindingInput,
        WorkflowInput,
    )

UNSAFE_TEXT = "unsafe_text"
UNKNOWN_REFERENCE = "unknown_reference"
SCHEMA_NOT_ALLOWED = "schema_not_allowed"

# Creates of one user all take the same quota counter: under a burst they cancel each other's transactions
# (TransactionConflict) more often than other writes do, so they get more attempts before the 409.
CREATE_BACKOFF = Backoff(attempts=12, base_s=0.02, cap_s=0.4)
DELETE_ATTEMPTS = 3


class CapabilityDeps(Struct, frozen=True):
    db: Db
    # The platform capability ids a step may declare: the registered built-in skills (skills/builtin.py).
    registered: frozenset[str]


# -- the defences -----------------------------------------------------------------------------------

class Finding(Struct, frozen=True):
    """What the first defence that refused found: its error code and its `details.errors`."""

    code: str
    errors: list[dict[str, str]]


def text_fields(display_name: str, when_to_use: Iterable[str], workflow: Workflow) -> list[tuple[str, str]]:
    """(JSON Pointer, text) of every user-written text the filter reads."""
    fields = [("/displayName", display_name)]
    fields += [(f"/whenToUse/{i}", t) for i, t in enumerate(when_to_use)]
    fields.append(("/workflow/objective", workflow.objective))
    fields += [(f"/workflow/steps/{i}/instruction", s.instruction) for i, s in enumerate(workflow.steps)]
    fields.append(("/workflow/completionCriteria", workflow.completion_criteria))
    return fields


def schema_texts(bindings: Sequence[ToolBinding]) -> list[tuple[str, str]]:
    """(JSON Pointer, text) of the free texts of every binding's input schema (`/toolBindings/{i}/inputSchema/...`)."""
    return [(f"/toolBindings/{i}/inputSchema{path}", text)
            for i, b in enumerate(bindings) for path, text in schema_subset.texts(b.input_schema)]


def schema_errors(bindings: Sequence[ToolBinding]) -> list[dict[str, str]]:
    """`[{"path", "keyword", "binding"}]`: `path` is the JSON Pointer inside that binding's inputSchema."""
    return [{**e, "binding": b.name} for b in bindings for e in schema_subset.check(b.input_schema)]


def findings(
    registered: frozenset[str], *, display_name: str, when_to_use: Iterable[str], workflow: Workflow,
    platform_capability_ids: Iterable[str], bindings: Sequence[ToolBinding],
) -> Finding | None:
    """The first defence's refusal, in the order text filter → references → schema subset; None if all pass.
    The creation flow calls this too, to turn a model's proposal into gaps instead of errors."""
    if found := text_filter.check(text_fields(display_name, when_to_use, workflow) + schema_texts(bindings)):
        return Finding(UNSAFE_TEXT, found)
    if found := references.check(workflow.steps, platform_capability_ids, bindings, registered):
        return Finding(UNKNOWN_REFERENCE, found)
    if found := schema_errors(bindings):
        return Finding(SCHEMA_NOT_ALLOWED, found)
    return None


_MESSAGES = {
    UNSAFE_TEXT: "a text field looks like an instruction to the agent (a best-effort filter; rephrase it)",
    UNKNOWN_REFERENCE: "a step or declaration references something that is not declared or does not exist",
    SCHEMA_NOT_ALLOWED: "an input schema uses something outside the allowed JSON Schema subset",
}


def _defend(deps: CapabilityDeps, capability: UserCapability, action: AuditAction, now: datetime) -> None:
    found = findings(
        deps.registered, display_name=capability.display_name, when_to_use=capability.when_to_use,
        workflow=capability.workflow, platform_capability_ids=capability.platform_capability_ids,
        bindings=capability.tool_bindings,
    )
    if found is None:
        return
    rules = dict.fromkeys(audit_code(e.get("rule") or e.get("keyword", "").lstrip("$") or found.code)
                          for e in found.errors)
    audit_store.put_audit(deps.db, _event(capability, action, now, decision=Decision.DENIED, reason=found.code,
                                          defence_rules=tuple(rules)))
    raise errors.defence_error(found.code, _MESSAGES[found.code], found.errors)


# -- audit ------------------------------------------------------------------------------------------

def schema_digest(schema: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _event(
    capability: UserCapability, action: AuditAction, now: datetime, *, decision: Decision = Decision.SUCCEEDED,
    reason: str | None = None, binding: ToolBinding | None = None, binding_name: str | None = None,
    defence_rules: tuple[str, ...] = (),
) -> AuditEvent:
    """Ids, codes, counts and a schema digest; never a text the user wrote."""
    named = binding.name if binding else binding_name
    metadata = AuditMetadata(
        capability_version=capability.version, status=capability.status.value,
        step_count=len(capability.workflow.steps), binding_count=len(capability.tool_bindings),
        platform_capability_ids=capability.platform_capability_ids,
        binding_names=tuple(b.name for b in capability.tool_bindings),
        binding_name=named, host_profile=binding.host_profile if binding else None,
        schema_sha256=schema_digest(binding.input_schema) if binding else None, defence_rules=defence_rules,
    )
    return AuditEvent(
        event_id=new_id(now), user_id=capability.user_id, at=now, skill_id=capability.capability_id,
        skill_version=str(capability.version), action=action, decision=decision,
        target_id=capability.user_capability_id, reason=reason, metadata=metadata,
    )


def _audit_op(db: Db, event: AuditEvent) -> Op:
    return Op("audit", audit_store.put_audit_op(db, event))


# -- conversions ------------------------------------------------------------------------------------

def workflow_of(body: WorkflowInput) -> Workflow:
    from skillcore.capabilities.structure import LocalToolStepInput

    steps: list[Step] = []
    for s in body.steps:
        if isinstance(s, LocalToolStepInput):
            steps.append(LocalToolStep(tool_name=s.tool_name, host_profile=s.host_profile, instruction=s.instruction))
        else:
            steps.append(PlatformStep(capability_id=s.capability_id, instruction=s.instruction))
    return Workflow(objective=body.objective, steps=tuple(steps), completion_criteria=body.completion_criteria)


def binding_of(body: ToolBindingInput, now: datetime, created_at: datetime | None = None) -> ToolBinding:
    return ToolBinding(
        name=body.name, host_profile=body.host_profile, mcp_server_id=body.mcp_server_id,
        mcp_tool_name=body.mcp_tool_name, input_schema=body.input_schema,
        requires_user_confirmation=body.requires_user_confirmation, created_at=created_at or now, updated_at=now,
    )


# -- operations -------------------------------------------------------------------------------------

def get(deps: CapabilityDeps, user_id: str, user_capability_id: str) -> UserCapability:
    capability = store.get(deps.db, user_id, user_capability_id)
    if capability is None:
        raise errors.capability_not_found()
    return capability


def list_capabilities(
    deps: CapabilityDeps, user_id: str, *, status: CapabilityStatus | None, limit: int, cursor: str | None
) -> tuple[list[UserCapability], str | None]:
    return store.list_for_user(deps.db, user_id, status=status, limit=limit, cursor=cursor)


def create(
    deps: CapabilityDeps, user_id: str, body: CreateUserCapability, *, now: datetime,
    extra: Callable[[UserCapability], Sequence[Op]] | None = None,
) -> UserCapability:
    """A new `draft` at version 1 with its bindings, name and quota unit, in one transaction. `extra` gives
    the caller's own operations for that transaction from the capability about to be written (the creation
    flow's draft confirmation); when one of their conditions fails, the store re-raises the TransactionFailed
    for the caller to translate, before it looks at the name or the quota."""
    names = [b.name for b in body.tool_bindings]
    if len(set(names)) != len(names):
        raise errors.binding_name_taken()
    capability = UserCapability(
        user_id=user_id, user_capability_id=new_id(now), name=body.name, display_name=body.display_name,
        when_to_use=tuple(body.when_to_use), status=CapabilityStatus.DRAFT, version=1,
        workflow=workflow_of(body.workflow), platform_capability_ids=tuple(body.platform_capability_ids),
        tool_bindings=tuple(sorted((binding_of(b, now) for b in body.tool_bindings), key=lambda b: b.name)),
        created_at=now, updated_at=now,
    )
    _defend(deps, capability, AuditAction.USER_CAPABILITY_CREATE, now)
    store.create(deps.db, capability, backoff=CREATE_BACKOFF,
                 extra=[_audit_op(deps.db, _event(capability, AuditAction.USER_CAPABILITY_CREATE, now)),
                        *(extra(capability) if extra else ())])
    return capability


def _editable(capability: UserCapability, expected_version: int) -> None:
    """The early answer from a read; the write's own condition decides under a race."""
    if capability.status is not CapabilityStatus.DRAFT:
        raise errors.capability_active()
    if capability.version != expected_version:
        raise errors.version_conflict(capability.version)


def update(
    deps: CapabilityDeps, user_id: str, user_capability_id: str, body: CapabilityFields, *, expected_version: int,
    now: datetime,
) -> UserCapability:
    current = get(deps, user_id, user_capability_id)
    _editable(current, expected_version)
    after = replace(
        current, display_name=body.display_name, when_to_use=tuple(body.when_to_use),
        workflow=workflow_of(body.workflow), platform_capability_ids=tuple(body.platform_capability_ids),
        version=current.version + 1, updated_at=now,
    )
    _defend(deps, after, AuditAction.USER_CAPABILITY_UPDATE, now)
    store.replace(deps.db, after, expected_version=expected_version, expected_status=CapabilityStatus.DRAFT,
                  extra=[_audit_op(deps.db, _event(after, AuditAction.USER_CAPABILITY_UPDATE, now))])
    return after


def activate(
    deps: CapabilityDeps, user_id: str, user_capability_id: str, *, expected_version: int, now: datetime
) -> UserCapability:
    """Draft → active, after the defences ran again over everything stored."""
    current = get(deps, user_id, user_capability_id)
    _editable(current, expected_version)
    after = replace(current, status=CapabilityStatus.ACTIVE, version=current.version + 1, updated_at=now,
                    activated_at=now)
    _defend(deps, after, AuditAction.USER_CAPABILITY_ACTIVATE, now)
    store.replace(deps.db, after, expected_version=expected_version, expected_status=CapabilityStatus.DRAFT,
                  extra=[_audit_op(deps.db, _event(after, AuditAction.USER_CAPABILITY_ACTIVATE, now))])
    return after


def deactivate(
    deps: CapabilityDeps, user_id: str, user_capability_id: str, *, expected_version: int, now: datetime
) -> UserCapability:
    """Active → draft (editable again); a draft is 422 capability_not_active."""
    current = get(deps, user_id, user_capability_id)
    if current.status is not CapabilityStatus.ACTIVE:
        raise errors.capability_not_active()
    if current.version != expected_version:
        raise errors.version_conflict(current.version)
    after = replace(current, status=CapabilityStatus.DRAFT, version=current.version + 1, updated_at=now,
                    activated_at=None)
    store.replace(deps.db, after, expected_version=expected_version, expected_status=CapabilityStatus.ACTIVE,
                  extra=[_audit_op(deps.db, _event(after, AuditAction.USER_CAPABILITY_DEACTIVATE, now))])
    return after


def delete(deps: CapabilityDeps, user_id: str, user_capability_id: str, *, now: datetime) -> None:
    """Draft or active: the capability, its bindings, its name and its quota unit go in one transaction. The
    route takes no version, so a capability changed between the read and the write is read again."""
    for _ in range(DELETE_ATTEMPTS):
        current = get(deps, user_id, user_capability_id)
        try:
            store.delete(deps.db, current,
                         extra=[_audit_op(deps.db, _event(current, AuditAction.USER_CAPABILITY_DELETE, now))])
            return
        except VersionConflict:
            continue
    raise ConcurrentUpdate("the capability kept changing while it was being deleted; try again")


def _binding_target(
    deps: CapabilityDeps, user_id: str, user_capability_id: str, expected_version: int
) -> UserCapability:
    current = get(deps, user_id, user_capability_id)
    _editable(current, expected_version)
    return current


def add_binding(
    deps: CapabilityDeps, user_id: str, user_capability_id: str, body: ToolBindingInput, *, expected_version: int,
    now: datetime,
) -> tuple[ToolBinding, UserCapability]:
    """A new binding on a draft; the capability's version + 1. Returns the binding and the capability after."""
    current = _binding_target(deps, user_id, user_capability_id, expected_version)
    if current.binding(body.name) is not None:
        raise errors.binding_name_taken()
    binding = binding_of(body, now)
    after = replace(current, tool_bindings=tuple(sorted((*current.tool_bindings, binding), key=lambda b: b.name)),
                    version=current.version + 1, updated_at=now)
    if len(current.tool_bindings) >= store.MAX_BINDINGS_PER_CAPABILITY:
        raise errors.quota_exceeded(errors.BINDINGS_QUOTA, store.MAX_BINDINGS_PER_CAPABILITY)
    _defend(deps, after, AuditAction.USER_CAPABILITY_BINDING_CREATE, now)
    event = _event(after, AuditAction.USER_CAPABILITY_BINDING_CREATE, now, binding=binding)
    store.add_binding(deps.db, user_id, user_capability_id, binding, expected_version=expected_version, now=now,
                      extra=[_audit_op(deps.db, event)])
    return binding, after


def update_binding(
    deps: CapabilityDeps, user_id: str, user_capability_id: str, name: str, body: ToolBindingInput, *,
    expected_version: int, now: datetime,
) -> tuple[ToolBinding, UserCapability]:
    """Replaces a binding of a draft (the body's name must be the path's: a binding is not renamed)."""
    if body.name != name:
        raise ValidationFailed("a binding cannot be renamed",
                               [{"path": "name", "message": "must equal the binding name in the path"}])
    current = _binding_target(deps, user_id, user_capability_id, expected_version)
    old = current.binding(name)
    if old is None:
        raise errors.binding_not_found()
    binding = binding_of(body, now, created_at=old.created_at)
    after = replace(current, tool_bindings=tuple(binding if b.name == name else b for b in current.tool_bindings),
                    version=current.version + 1, updated_at=now)
    _defend(deps, after, AuditAction.USER_CAPABILITY_BINDING_UPDATE, now)
    event = _event(after, AuditAction.USER_CAPABILITY_BINDING_UPDATE, now, binding=binding)
    store.replace_binding(deps.db, user_id, user_capability_id, binding, expected_version=expected_version,
                          now=now, extra=[_audit_op(deps.db, event)])
    return binding, after


def delete_binding(
    deps: CapabilityDeps, user_id: str, user_capability_id: str, name: str, *, expected_version: int,
    now: datetime,
) -> UserCapability:
    """Removes a binding no step uses (409 binding_in_use otherwise) from a draft. The defences do not run
    again: taking away a binding no step references cannot make a reference dangle or add text or schema,
    and a delete must stay possible whatever a later, stricter filter would say of the stored texts."""
    current = _binding_target(deps, user_id, user_capability_id, expected_version)
    if current.binding(name) is None:
        raise errors.binding_not_found()
    if using := references.steps_using(current.workflow.steps, name):
        raise errors.binding_in_use(using)
    after = replace(current, tool_bindings=tuple(b for b in current.tool_bindings if b.name != name),
                    version=current.version + 1, updated_at=now)
    event = _event(after, AuditAction.USER_CAPABILITY_BINDING_DELETE, now, binding_name=name)
    store.remove_binding(deps.db, user_id, user_capability_id, name, expected_version=expected_version, now=now,
                         extra=[_audit_op(deps.db, event)])
    return after
