"""Creating a capability by conversation (seed 004: start_create → generate_draft → confirm_draft; docs/contract.md
"Creating a capability by conversation"). One set of functions for the HTTP routes and the MCP tools, with
no HTTP in them: the same checks, errors and audit whoever calls.

- `start_create`: a new draft from the user's description, generated once (revision 1), kept 24 h.
- `generate_draft`: the user's answers to the current gaps are added (a binding answer is checked against
  the schema subset at once: 422 schema_not_allowed, nothing stored; its `requiresUserConfirmation` is always
  stored true, whatever the answer said) and the draft is generated again,
  revision + 1. The model only suggests: capabilities/drafter.py removes every reference the user did not
  give and turns it, and the defences' findings on the model's wording, into gaps. A draft that is no longer
  open (confirmed, or expired) is answered as it is, nothing generated.
- `confirm_draft`: a draft that is open at the given revision, with a proposal and no gap, becomes a
  capability through `service.create` (status draft, every check and error of the create route); the draft's
  change to `confirmed` (revision + 1) is an operation of that same transaction, conditioned on the revision,
  so of two confirms of one revision exactly one creates anything.
Errors: 404 for a missing or another user's draft; 409 `draft_revision_conflict` (`details.currentRevision`,
`details.status`, and `details.userCapabilityId` once confirmed) when the draft is not open at the revision
given (a concurrent generate or confirm won, or it expired), and to a generate answering the gaps of an
earlier revision; 422 `draft_has_gaps` (`details.gaps`);
502 `upstream_error` when the model could not answer (nothing is stored then).
Audit: `user_capability.draft.start|generate|confirm`, in the transaction of the write, with the revision,
counts, the gaps' kinds and the proposal's ids; never the description, an answer or a question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from msgspec import Struct
from msgspec.structs import replace

from skillcore.capabilities import draft_store as store
from skillcore.capabilities import drafter, errors, service
from skillcore.capabilities.defences import schema_subset
from skillcore.capabilities.models import (  # noqa: F401 - the drafting path's figures
    DRAFT_LIFETIME_HOURS,
    DRAFT_MAX_TOKENS,
    DRAFT_READ_TIMEOUT_S,
    MAX_BINDINGS_PER_CAPABILITY,
    Draft,
    DraftAnswer,
    DraftStatus,
    Gap,
    UserCapability,
)
from skillcore.capabilities.service import CapabilityDeps
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op
from skillcore.errors import RuleViolation, UpstreamError, ValidationFailed
from skillcore.ids import new_id
from skillcore.model.port import ChatModel, ModelError
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision, audit_code

if TYPE_CHECKING:
    from skillcore.capabilities.structure import DraftAnswerInput

AUDIT_SKILL_ID = "user_capability_draft"
STEPS_PATH = "/workflow/steps"
STEP_PATH = re.compile(r"^/workflow/steps/\d+(?:/|$)")
MAX_STORED_ANSWERS = 40


class DraftDeps(Struct, frozen=True):
    capabilities: CapabilityDeps
    # The model port, built on first use (the Bedrock client is not needed at a function's cold start).
    model: Callable[[], ChatModel]
    max_tokens: int | None = None
    max_open_drafts: int = 0  # open drafts a user may hold (SKILLS_MAX_OPEN_DRAFTS; 0: no limit)


# -- audit ------------------------------------------------------------------------------------------

def _event(draft: Draft, action: AuditAction, now: datetime, *, decision: Decision = Decision.SUCCEEDED,
           reason: str | None = None, answers: int = 0, defence_rules: tuple[str, ...] = ()) -> AuditEvent:
    proposal = draft.proposal or {}
    steps = (proposal.get("workflow") or {}).get("steps") or []
    metadata = AuditMetadata(
        draft_revision=draft.revision, status=draft.status.value, gap_count=len(draft.gaps),
        gap_kinds=tuple(dict.fromkeys(g.kind.value for g in draft.gaps)), answer_count=answers,
        step_count=len(steps), binding_count=len(draft.bindings),
        platform_capability_ids=tuple(audit_code(i) for i in proposal.get("platformCapabilityIds") or []),
        binding_names=tuple(audit_code(b["name"]) for b in draft.bindings),
        user_capability_id=draft.user_capability_id, defence_rules=defence_rules,
    )
    return AuditEvent(
        event_id=new_id(now), user_id=draft.user_id, at=now, skill_id=AUDIT_SKILL_ID,
        skill_version=str(draft.revision), action=action, decision=decision, target_id=draft.draft_id,
        reason=reason, metadata=metadata,
    )


def _audit_op(deps: DraftDeps, event: AuditEvent) -> Op:
    return Op("audit", audit_store.put_audit_op(deps.capabilities.db, event))


# -- generation -------------------------------------------------------------------------------------

def _generate(deps: DraftDeps, description: str, answers: tuple[DraftAnswer, ...],
              bindings: tuple[dict[str, object], ...], revision: int) -> tuple[dict[str, object] | None, tuple[Gap, ...]]:
    inputs = drafter.DraftInputs(description=description, answers=answers, bindings=bindings,
                                 registered=deps.capabilities.registered)
    try:
        generated = drafter.generate(deps.model(), inputs, max_tokens=deps.max_tokens)
    except ModelError as failed:
        raise UpstreamError("the draft generator could not answer; try again",
                            details={"reason": audit_code(str(failed) or "model_error")}) from None
    gaps = tuple(Gap(gap_id=f"g{revision}-{i + 1}", path=g.path, kind=g.kind, question=g.question,
                     instruction=g.instruction) for i, g in enumerate(generated.gaps))
    return generated.proposal, gaps


def _as_of(draft: Draft, now: datetime) -> Draft:
    return replace(draft, status=draft.status_at(now))


def get_draft(deps: DraftDeps, user_id: str, draft_id: str, *, now: datetime) -> Draft:
    """The caller's draft with its status as of `now` (expired once past expiresAt), or 404."""
    draft = store.get(deps.capabilities.db, user_id, draft_id)
    if draft is None:
        raise errors.draft_not_found()
    return _as_of(draft, now)


def list_drafts(deps: DraftDeps, user_id: str, *, status: DraftStatus | None, now: datetime, limit: int,
                cursor: str | None) -> tuple[list[Draft], str | None]:
    """The caller's drafts, newest first, each with its status as of `now` (`status` filters by it): how a person
    finds an open draft again and resumes it."""
    items, next_cursor = store.list_drafts(deps.capabilities.db, user_id, status=status, now=now, limit=limit,
                                           cursor=cursor)
    return [_as_of(d, now) for d in items], next_cursor


def start_create(deps: DraftDeps, user_id: str, description: str, *, now: datetime) -> Draft:
    """A new open draft from the description, generated once: revision 1, expiring in 24 h; 422
    `quota_exceeded` (`drafts`) when the user already holds `max_open_drafts` open ones (checked before the model
    is asked; two concurrent starts may both pass the count, so the bound is soft by the requests in flight)."""
    if deps.max_open_drafts and store.count_open(deps.capabilities.db, user_id, now) >= deps.max_open_drafts:
        raise errors.quota_exceeded(errors.DRAFTS_QUOTA, deps.max_open_drafts)
    draft_id = new_id(now)
    proposal, gaps = _generate(deps, description, (), (), 1)
    draft = Draft(
        user_id=user_id, draft_id=draft_id, revision=1, status=DraftStatus.OPEN, description=description,
        answers=(), bindings=(), proposal=proposal, gaps=gaps, created_at=now, updated_at=now,
        expires_at=now + timedelta(hours=DRAFT_LIFETIME_HOURS),
    )
    store.create(deps.capabilities.db, draft,
                 extra=[_audit_op(deps, _event(draft, AuditAction.USER_CAPABILITY_DRAFT_START, now))])
    return draft


def _answer_error(index: int, field: str, message: str) -> RuleViolation:
    return ValidationFailed("an answer does not fit the draft", [{"path": f"answers/{index}/{field}", "message": message}])


def _merge_answers(
    deps: DraftDeps, current: Draft, given: Sequence[DraftAnswerInput], now: datetime
) -> tuple[tuple[DraftAnswer, ...], tuple[dict[str, object], ...]]:
    gaps = {g.gap_id: g for g in current.gaps}
    seen: set[str] = set()
    answers = list(current.answers)
    bindings = {str(b["name"]): b for b in current.bindings}
    for i, answer in enumerate(given):
        gap = gaps.get(answer.gap_id)
        if gap is None:
            stale = re.fullmatch(r"g(\d+)-\d+", answer.gap_id)
            if stale and int(stale.group(1)) < current.revision:
                # A gap of an earlier revision: another generate won; the caller's view is stale.
                raise errors.draft_revision_conflict(current.revision, current.status.value)
            raise _answer_error(i, "gapId", "not a gap of the draft's current revision")
        if answer.gap_id in seen:
            raise _answer_error(i, "gapId", "answered twice")
        seen.add(answer.gap_id)
        if answer.drop:
            if not STEP_PATH.match(gap.path):
                raise _answer_error(i, "drop", "only a gap about one step can drop it")
            answers = [a for a in answers if a.path != gap.path]
            answers.append(DraftAnswer(path=gap.path, kind=gap.kind, question=gap.question, dropped=True))
            continue
        if answer.binding is not None:
            found = schema_subset.check(answer.binding.input_schema)
            if found:
                errs = [{**e, "binding": answer.binding.name} for e in found]
                rules = tuple(dict.fromkeys(audit_code(e["keyword"].lstrip("$") or "schema") for e in found))
                audit_store.put_audit(deps.capabilities.db, _event(
                    current, AuditAction.USER_CAPABILITY_DRAFT_GENERATE, now, decision=Decision.DENIED,
                    reason=service.SCHEMA_NOT_ALLOWED, answers=len(given), defence_rules=rules))
                raise errors.defence_error(service.SCHEMA_NOT_ALLOWED, "an input schema uses something outside the "
                                           "allowed JSON Schema subset", errs)
            # A drafted binding always waits for the person's confirmation: whoever answers the gap (an agent
            # host's model among them) cannot waive it; only the person turns it off, on the page.
            bindings[answer.binding.name] = {**answer.binding.model_dump(by_alias=True),
                                             "requiresUserConfirmation": True}
        answers = [a for a in answers if a.path != gap.path]
        if gap.path == STEPS_PATH:  # a new list of steps: what was said about the old ones no longer applies
            answers = [a for a in answers if not a.path.startswith(STEPS_PATH + "/")]
        answers.append(DraftAnswer(path=gap.path, kind=gap.kind, question=gap.question, text=answer.text,
                                   binding_name=answer.binding.name if answer.binding else None))
    if len(bindings) > MAX_BINDINGS_PER_CAPABILITY:
        raise errors.quota_exceeded(errors.BINDINGS_QUOTA, MAX_BINDINGS_PER_CAPABILITY)
    return tuple(answers[-MAX_STORED_ANSWERS:]), tuple(sorted(bindings.values(), key=lambda b: str(b["name"])))


def generate_draft(
    deps: DraftDeps, user_id: str, draft_id: str, given: Sequence[DraftAnswerInput], *, now: datetime
) -> Draft:
    """The draft again, with the answers, at revision + 1; a draft no longer open is answered as it is."""
    current = get_draft(deps, user_id, draft_id, now=now)
    if current.status is not DraftStatus.OPEN:
        return current
    answers, bindings = _merge_answers(deps, current, given, now)
    revision = current.revision + 1
    proposal, gaps = _generate(deps, current.description, answers, bindings, revision)
    after = replace(current, revision=revision, answers=answers, bindings=bindings, proposal=proposal, gaps=gaps,
                    updated_at=now)
    event = _event(after, AuditAction.USER_CAPABILITY_DRAFT_GENERATE, now, answers=len(given))
    store.replace(deps.capabilities.db, after, expected_revision=current.revision, now=now,
                  extra=[_audit_op(deps, event)])
    return after


def confirm_draft(deps: DraftDeps, user_id: str, draft_id: str, revision: int, *, now: datetime) -> UserCapability:
    """The draft's proposal as a new capability (status draft), and the draft confirmed, in one transaction."""
    current = get_draft(deps, user_id, draft_id, now=now)
    if current.status is not DraftStatus.OPEN or current.revision != revision:
        raise errors.draft_revision_conflict(current.revision, current.status.value, current.user_capability_id)
    proposal = current.full_proposal()
    if current.gaps or proposal is None:
        raise errors.draft_has_gaps([{"gapId": g.gap_id, "path": g.path, "kind": g.kind.value} for g in current.gaps])
    from skillcore.capabilities.structure import CreateUserCapability  # defined by the first confirmation

    create_body = CreateUserCapability.model_validate(proposal)

    def confirmation(capability: UserCapability) -> Sequence[Op]:
        confirmed = replace(current, revision=current.revision + 1, status=DraftStatus.CONFIRMED, updated_at=now,
                            user_capability_id=capability.user_capability_id)
        return [
            Op("draft", store.confirm_draft_op(deps.capabilities.db, user_id, draft_id, expected_revision=revision,
                                               user_capability_id=capability.user_capability_id, now=now)),
            _audit_op(deps, _event(confirmed, AuditAction.USER_CAPABILITY_DRAFT_CONFIRM, now)),
        ]

    try:
        return service.create(deps.capabilities, user_id, create_body, now=now, extra=confirmation)
    except TransactionFailed as failed:
        if failure := failed.failed("draft"):
            raise store.revision_failed(failure.old, now) from failed
        raise
