"""A proxied call to one tool of a user's hosted endpoint (docs/contract.md "Hosted external workflows", `POST
/rpc/hosted-endpoints/{endpointId}/calls`; the MCP face's `call_hosted_tool`; the chat turn's hosted tools).

    result = calls.call(deps, user_id, endpoint_id, tool_name=..., arguments=..., client_call_id=...,
                        approval_id=None, now=now)

Arguments holding NaN or an infinity (not JSON: the API's parser refuses them, but the MCP SDK's and a model's
tool input may carry them) are refused first, as a malformed body (422 `validation_error`, keyword `finite`):
no digest exists to bind or audit them (approvals/digest.py). So are arguments whose canonical form is over
64 KiB (keyword `maxBytes`: an approval keeps them whole, approvals/models.MAX_CANONICAL_BYTES, the call body's
own limit).
Then the checks, in the contract's order, each refusal a DomainError with the API's code:
1. the grant: `hosted_workflow:invoke` of the hosted workflows skill (`deps.skill`) through PolicyGate (422
   `permission_required`; a skill switched off is 422 `skill_disabled`, the catalog's switch like every skill's);
   a grant narrowed (policy/scopes.py) to other endpoints, other tools or other argument values is 403
   `grant_scope_mismatch` (the endpoint, tool and arguments as asked; a left-out argument counts with its
   default in the snapshot's schema);
2. the endpoint exists for this user (404 otherwise, another user's too) and is not disabled (409
   `endpoint_disabled`; a `drift_pending` endpoint keeps serving its unchanged tools);
   then a clientCallId already used answers here, after the grant and the endpoint (a revoked grant or a
   disabled endpoint is refused even for a stored result): its stored answer, or 409 `idempotency_key_reused`;
3. the tool: one a pending refresh added or changed is 409 `tool_drifted`; one not in the stored snapshot is 422
   `unknown_tool`; one switched off is 409 `tool_drifted` too, because docs/contract.md lists "enabled and not drifted"
   under that one code (and a tool adopted from a drift starts disabled: the same refusal before and after
   the owner accepts the list, until they switch it on);
4. the arguments against the snapshot's input schema (422 `validation_error`, `details.errors` = JSON paths
   and keywords, never values), bounded by hosted/schema_bounds.py: the arguments' sizes are capped before any
   keyword runs, the schema is inside the snapshot's allow-list (checked again here), and the validator is
   jsonschema-rs under Draft 2020-12, offline, with no format checker and a linear `uniqueItems`;
5. the approval, when the tool requires one: the given `approvalId` is used in the call record's own
   transaction (its condition: approved, unexpired, this endpoint, tool and argument digest, asked on the
   endpoint's current version and pinned fingerprint), so it is used once, and never after the endpoint changed
   (an accepted drift, a switch); without one, or with one that is not usable, 409 `approval_required` with
   `details.approvalId` (approvals.service.ask: the same pending approval for the same clientCallId, arguments
   and endpoint version);
6. then the URL is checked again with its addresses (egress, 422 `url_not_allowed`) and the call forwarded
   with the official MCP client over the egress transport: 30 s deadline (or what the invocation has left,
   less 2 s: service.egress_now), 1 MiB answer cap, redirects never followed (504 `upstream_timeout`, 502
   `upstream_error` with `details.reason`).

Idempotent by clientCallId: the call record (hosted/call_store.py) is claimed with a conditional write before
tools/call is sent, so of two identical calls one reaches the tool; the other waits for the record to be
completed and answers the same body. The claim is written while the client opens its session (the connection,
TLS and `initialize`, which call nothing), and tools/call waits for it (egress.mcp_session.call_tool's
`ready`): a claim lost to an identical call, or to an approval no longer usable, closes the session with nothing
of the call sent. Overlapped so, the claim costs a forwarded call no time of its own. The claim's transaction
also holds a ConditionCheck of the endpoint item (it exists, is not disabled and is at the version the checks
read: endpoint_store.unchanged_check_op; every change of a status, a tool's switch or a tool list moves the
version), so an endpoint changed between the checks and the claim loses the claim, nothing is sent, and the
call is read and checked again (CLAIM_ROUNDS): it answers what the endpoint now deserves (`endpoint_disabled`,
`tool_drifted`, `approval_required` with a new approval, 404), or is forwarded when the change did not concern it. A repeated clientCallId
answers the stored body (a result, or the 502/504/422 of the forwarding) and calls nothing. The record keeps the
call's payload fingerprint (toolName and argumentsDigest: db/idempotency.py), so the same clientCallId with another
toolName or other arguments answers 409 `idempotency_key_reused`, after the grant and the endpoint and before
any other check, whether the record was read or met by a lost claim: nothing is called and the first call's answer is not shown. Refusals of steps 1-5
store nothing, so a call refused for want of
an approval is retried with the same clientCallId once approved. An upstream failure is stored too: the
endpoint may have acted, so it is never re-sent under the same id.

The answer (hosted/call_answer.py): `content` is the text of the result's text items (joined by newlines) cut to
16 KiB of UTF-8; `structuredContent` is kept when its JSON is at most 64 KiB (so a record stays far below
DynamoDB's item limit), otherwise left out.

Audit (`hosted_endpoint.call`): every claimed call twice, `allowed` in the claim's own transaction (so a call is
audited before it is sent, even if its invocation dies before the answer), then `succeeded` or `failed` with the
error code; every refusal of steps 1-6 (denied, with the code). Ids, the tool's name (as a code), the argument
digest and the duration, never the arguments, the result, the URL or the token. A replay is not a call and is
not audited again; nor is a reused clientCallId's refusal (nothing was attempted under it).

DynamoDB requests per call (counted by tests/stack/test_hosted_calls_service.py and `make bench`'s hosted section):
- a forwarded call: 3, of which 2 wait in sequence (1 BatchGetItem of the skill switch, the grant, the
  endpoint with its pending snapshot while a drift is pending, the call record and the given approval; 1
  TransactWriteItems of the claim, the endpoint's ConditionCheck, the `allowed` audit and the approval's use
  when there is one, beside the session's opening; 1 BatchWriteItem of the completed record
  and the outcome's audit: once the claim's transaction holds the `allowed` event, the two need no transaction
  of their own; a call with an approval that failed before tools/call was sent writes them in 1
  TransactWriteItems instead, with the approval's release);
- a replay, or a clientCallId reused for another call (409 `idempotency_key_reused`, not audited): 1 (the
  BatchGetItem); refused at steps 1-2 first: 2, as any refusal there;
- a refusal at steps 1-4: 2 (the BatchGetItem and the audit); `approval_required`: 3 (plus the ask; the
  BatchGetItem reads the given approval too, so one not usable opens no session).
Waiting for a concurrent identical call adds one GetItem per 0.1 s of waiting; a claim lost to a change of the
endpoint adds a round (its BatchGetItem and TransactWriteItems, nothing sent).

The exchange with the endpoint (connection, TLS, initialize, tools/call, close) is bounded as a whole by the
call's deadline (egress/mcp_session.py), whatever the endpoint does, so the record is always completed here:
a failure is stored `done` with its 502/504, never left pending, and audited `failed` with its code. An
approval used by the claim is given back (approved again) when the call failed before tools/call was sent
(`sent`, set by the egress client just before it sends): nothing reached the endpoint.

Left as they are, on purpose: an approval used by a call whose tools/call was sent and then failed stays used (the
endpoint may have acted); a record whose caller died between the claim and the completion stays pending until its TTL, and
its clientCallId answers 504 `upstream_timeout` (the outcome is unknown, so nothing is sent again under it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from skillcore.approvals import service as approvals
from skillcore.approvals import store as approval_store
from skillcore.approvals.digest import canonical, non_finite
from skillcore.approvals.models import MAX_CANONICAL_BYTES, EndpointBinding, OperationRef
from skillcore.db.dynamo import batch_put
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op
from skillcore.egress.errors import EgressError
from skillcore.errors import (
    ConcurrentUpdate,
    DomainError,
    FieldError,
    GrantScopeMismatch,
    SkillDisabled,
)
from skillcore.hosted import call_store, endpoint_store, service
from skillcore.hosted.call_answer import CallResult, answer_of, envelope, stored_error
from skillcore.hosted.call_claim import Claim, answer_recorded, complete_releasing, forward
from skillcore.hosted.call_refusals import (
    MAX_VALIDATION_ERRORS,
    approval_required,
    argument_errors,
    endpoint_disabled,
    tool_drifted,
    validation_failed,
)
from skillcore.hosted.call_state import CallState, read_call_state
from skillcore.hosted.models import EndpointStatus, HostedEndpoint, SnapshotTool
from skillcore.ids import new_id, new_ids
from skillcore.observability import hosted_call
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision, audit_code
from skillcore.policy.gate import OperationApproval, PolicyInput, Reason, decide, refusal
from skillcore.policy.grants import GrantScope
from skillcore.policy.scopes import ScopedCall, schema_defaults

# How often a call whose claim lost to a change of the endpoint (its ConditionCheck) is read and checked again
# before it answers 409 `concurrent_update` (each round sends nothing).
CLAIM_ROUNDS = 3

CallTool = Callable[[str, str | None, Any, str, dict[str, Any]], dict[str, Any]]


# ---------------------------------------------------------------- audit


class _Audit(Struct, frozen=True, kw_only=True):
    deps: service.HostedDeps
    user_id: str
    endpoint_id: str
    tool_name: str
    digest: str
    now: datetime
    scope: GrantScope | None = None

    def event(self, decision: Decision, *, target_id: str, reason: str, error_code: str | None = None,
              duration_ms: int | None = None, tool_error: bool | None = None,
              event_id: str | None = None, **scoped: Any) -> AuditEvent:
        return AuditEvent(
            event_id=event_id or new_id(self.now), user_id=self.user_id, at=self.now, skill_id=self.deps.skill.skill_id,
            skill_version=self.deps.skill.version, action=AuditAction.HOSTED_ENDPOINT_CALL, decision=decision,
            scope=self.scope, target_id=audit_code(target_id), reason=reason,
            metadata=AuditMetadata(
                endpoint_id=audit_code(self.endpoint_id), tool_id=audit_code(self.tool_name),
                input_sha256=self.digest, error_code=error_code, duration_ms=duration_ms,
                status=None if tool_error is None else ("tool_error" if tool_error else "ok"), **scoped),
        )

    def refused(self, error: DomainError) -> DomainError:
        """Writes the refusal's audit (1 PutItem) and hands the error back to be raised."""
        scoped: dict[str, Any] = {}
        if isinstance(error, GrantScopeMismatch):  # which grant, and what missed: codes and a declared name
            scoped = {"matched_grant_ids": (error.details["grantId"],), "scope_mismatch": error.details["mismatch"]}
            if "argument" in error.details:
                scoped["scope_argument"] = audit_code(error.details["argument"])
        audit_store.put_audit(self.deps.db, self.event(Decision.DENIED, target_id=self.endpoint_id,
                                                       reason=error.code, error_code=error.code, **scoped))
        hosted_call(Decision.DENIED.value, error.code)
        return error


# ---------------------------------------------------------------- the call


def _tool_of(endpoint: HostedEndpoint, tool_name: str) -> SnapshotTool:
    if tool_name in endpoint.drifted_tool_names():
        raise tool_drifted(tool_name, "drifted")
    tool = endpoint.snapshot.tool(tool_name)
    if tool is None:
        raise service.unknown_tool(tool_name)
    if not tool.enabled:
        raise tool_drifted(tool_name, "disabled")
    return tool


class _Request(Struct, frozen=True, kw_only=True):
    """One call as asked: who, what, under which clientCallId and approval, and when."""

    deps: service.HostedDeps
    user_id: str
    endpoint_id: str
    tool_name: str
    arguments: dict[str, Any]
    operation: OperationRef
    client_call_id: str
    approval_id: str | None
    agent_id: str | None
    now: datetime

    def policy(self, state: CallState, operation: OperationApproval) -> PolicyInput:
        skill = self.deps.skill
        tool = state.endpoint.snapshot.tool(self.tool_name) if state.endpoint is not None else None
        call = ScopedCall(endpoint_id=self.endpoint_id, tool=self.tool_name, arguments=self.arguments,
                          defaults=schema_defaults(tool.input_schema if tool is not None else None))
        return PolicyInput(user_id=self.user_id, skill_id=skill.skill_id, skill_version=skill.version,
                           requirements=skill.permissions, action="hosted_endpoint.call", agent_id=self.agent_id,
                           target_id=self.endpoint_id, grants=state.grants, operation=operation, call=call)

    def ask(self, binding: EndpointBinding) -> str:
        """The approval this call asks for on the endpoint as read (approvals.service.ask: the same pending one
        for the same call on the same endpoint version and pinned snapshot)."""
        return approvals.ask(self.deps.db, self.user_id, self.operation, self.arguments,
                             client_call_id=self.client_call_id, binding=binding, now=self.now).approval_id


def binding_of(endpoint: HostedEndpoint) -> EndpointBinding:
    """What an approval asked or used now is bound to: the endpoint's version and pinned fingerprint."""
    return EndpointBinding(endpoint_version=endpoint.version, snapshot_fingerprint=endpoint.snapshot.fingerprint)


class _EndpointChanged(Exception):
    """The claim's ConditionCheck on the endpoint failed: it changed (or went) after it was read."""


def call(deps: service.HostedDeps, user_id: str, endpoint_id: str, *, tool_name: str, arguments: dict[str, Any],
         client_call_id: str, approval_id: str | None, now: datetime, agent_id: str | None = None) -> CallResult:
    """One call of `tool_name` on the user's endpoint, with every check of docs/contract.md in its order (module
    docstring). `agent_id`, for a call made on an agent's behalf (the chat turn), lets an agent-scope grant
    count before the user's. Raises the API's DomainErrors."""
    unsafe = non_finite(arguments)
    if unsafe:  # not JSON, no digest exists for them (approvals/digest.py): a malformed body, before any read
        raise validation_failed([{"path": p, "keyword": "finite"} for p in unsafe[:MAX_VALIDATION_ERRORS]])
    if len(canonical(arguments)) > MAX_CANONICAL_BYTES:  # an approval keeps them whole: the body's own limit
        raise validation_failed([FieldError(path="$", keyword="maxBytes")])
    request = _Request(deps=deps, user_id=user_id, endpoint_id=endpoint_id, tool_name=tool_name, arguments=arguments,
                       operation=approvals.operation_of(endpoint_id, tool_name, arguments),
                       client_call_id=client_call_id, approval_id=approval_id, agent_id=agent_id, now=now)
    for _ in range(CLAIM_ROUNDS):
        try:
            return _checked_call(request)
        except _EndpointChanged:
            continue  # nothing was sent or written: read and check again, on the endpoint as it is now
    raise ConcurrentUpdate("the endpoint kept changing during the call; nothing was sent, try again")


def _checked_call(request: _Request) -> CallResult:
    """One round: the read, the checks in order, the claim and the call out. Raises _EndpointChanged when the
    claim lost to a change of the endpoint after the read (nothing sent, nothing written)."""
    deps = request.deps
    state = read_call_state(deps.db, deps.skill, request.user_id, request.endpoint_id,
                            client_call_id=request.client_call_id, approval_id=request.approval_id,
                            agent_id=request.agent_id)
    audit = _granted(request, state)  # 1. the grant (and the skill's switch)
    endpoint = _active_endpoint(state, audit)  # 2. the endpoint
    if state.record is not None:  # this clientCallId was used: the same call's answer, or 409 for another call
        return answer_recorded(deps, state.record, request.tool_name, request.operation.arguments_digest,
                                request.now)
    tool = _checked_tool(request, endpoint, audit)  # 3. the tool; 4. the arguments
    reason = _approved(request, state, endpoint, tool, audit)  # 5. the approval
    return _forward_claimed(request, endpoint, tool, reason, audit)  # 6. out


def _granted(request: _Request, state: CallState) -> _Audit:
    """Step 1: the skill's switch and the grant alone (this operation's approval is step 5). The audit of the
    later steps carries the grant's scope."""
    deps, skill = request.deps, request.deps.skill
    audit = _Audit(deps=deps, user_id=request.user_id, endpoint_id=request.endpoint_id, tool_name=request.tool_name,
                   digest=request.operation.arguments_digest, now=request.now)
    if skill.skill_id in state.disabled_skills:
        raise audit.refused(SkillDisabled())
    decision = decide(request.policy(state, OperationApproval(requires_approval=False, approved=False)))
    if not decision.allowed:
        raise audit.refused(refusal(skill.skill_id, decision, skill.permissions))
    return replace(audit, scope=decision.scope)


def _active_endpoint(state: CallState, audit: _Audit) -> HostedEndpoint:
    """Step 2: the user's endpoint, not disabled (a drift_pending one serves its unchanged tools: step 3)."""
    if state.endpoint is None:
        raise endpoint_store.endpoint_not_found()  # nothing of another user's is audited under this one
    if state.endpoint.status is EndpointStatus.DISABLED:
        raise audit.refused(endpoint_disabled())
    return state.endpoint


def _checked_tool(request: _Request, endpoint: HostedEndpoint, audit: _Audit) -> SnapshotTool:
    """Steps 3 and 4: the tool (not drifted, in the snapshot, enabled), then the arguments against its schema."""
    try:
        tool = _tool_of(endpoint, request.tool_name)
        errors = argument_errors(tool.input_schema, request.arguments)
        if errors:
            raise validation_failed(errors)
    except DomainError as refused:
        raise audit.refused(refused) from None
    return tool


def _approved(request: _Request, state: CallState, endpoint: HostedEndpoint, tool: SnapshotTool,
              audit: _Audit) -> Reason:
    """Step 5: PolicyGate decides with the approval as read (approved, unexpired, this operation, asked on the
    endpoint's current version and pinned fingerprint), so an unusable one opens no session; the claim's
    transaction uses it, and its condition is the final word. Returns the decision's reason (for the `allowed`
    audit)."""
    binding = binding_of(endpoint)
    usable = state.approval is not None and state.approval.usable_for(request.operation, binding, request.now)
    final = decide(request.policy(state, OperationApproval(requires_approval=tool.requires_approval,
                                                           approved=usable)))
    if not final.allowed:
        assert final.reason is Reason.APPROVAL_REQUIRED, final.reason
        raise audit.refused(approval_required(request.ask(binding)))
    return final.reason


def _forward_claimed(request: _Request, endpoint: HostedEndpoint, tool: SnapshotTool, reason: Reason,
                     audit: _Audit) -> CallResult:
    """Step 6: the claim, the call out (the URL is checked again, with its addresses, by the egress client
    itself), the completion and the outcome's audit."""
    deps, db, now = request.deps, request.deps.db, request.now
    # what the forwarding needs, opened before the claim: a key that cannot be opened leaves no record behind
    secret = service.secret_of(deps, endpoint)
    egress = service.egress_now(deps)  # the deadline, cut to what the invocation has left

    # the claim: the record (so one of two identical calls goes out), the call's `allowed` audit (every call
    # sent is audited before it is sent) and the approval's use, in one transaction, written while the session
    # opens (_forward). The ids are minted together, so the outcome's event sorts after the `allowed` one
    # whatever other calls mint meanwhile.
    call_id, allowed_id, outcome_id = new_ids(now, 3)
    record = call_store.CallRecord(
        user_id=request.user_id, endpoint_id=request.endpoint_id, client_call_id=request.client_call_id,
        call_id=call_id, tool_name=request.tool_name, arguments_digest=request.operation.arguments_digest,
        status=call_store.PENDING, claimed_at=now)
    # The endpoint's ConditionCheck (still there, not disabled, at the version read: every change of its status,
    # a tool's switch or its tool lists moves the version) makes a change between the checks and the claim lose
    # the claim, and nothing is sent.
    ops = [call_store.claim_op(db, record),
           Op("endpoint", endpoint_store.unchanged_check_op(db, endpoint)),
           Op("audit", audit_store.put_audit_op(db, audit.event(Decision.ALLOWED, target_id=call_id,
                                                                reason=reason.value, event_id=allowed_id)))]
    if tool.requires_approval and request.approval_id is not None:
        ops.append(Op("approval", approval_store.use_op(db, request.user_id, request.approval_id, request.operation,
                                                        binding_of(endpoint), now)))
    claim = Claim(db, ops)

    started = time.monotonic()
    http_status, body, result = 200, {}, None
    sent = threading.Event()
    try:
        raw = forward(deps, secret, egress, request.tool_name, request.arguments, claim, sent)
        duration_ms = int((time.monotonic() - started) * 1000)
        if raw is not None:
            result = answer_of(raw, call_id, duration_ms)
            body = result.to_body()
    except EgressError as error:
        duration_ms = int((time.monotonic() - started) * 1000)
        failure = service.domain_error(error)
        http_status = failure.status
        body = envelope(failure)
    if not claim.won.result():  # nothing of the call was sent: it is another's, or its approval is not usable
        lost = claim.lost
        other = call_store.lost_call(lost, db, record) if isinstance(lost, TransactionFailed) else None
        if other is not None:  # a call under the same clientCallId claimed it first
            return answer_recorded(deps, other, request.tool_name, request.operation.arguments_digest, now)
        if isinstance(lost, TransactionFailed) and lost.failed("endpoint") is not None:
            raise _EndpointChanged  # call() reads and checks again: the refusal the endpoint now deserves
        if isinstance(lost, TransactionFailed) and lost.failed("approval") is not None:
            raise audit.refused(approval_required(request.ask(binding_of(endpoint))))
        raise lost if lost is not None else RuntimeError("the claim was neither won nor lost")

    # the completion and the outcome's audit, one BatchWriteItem (the claim's transaction already audited the
    # call as sent, so these two need no transaction): both are durable before the answer
    event = (audit.event(Decision.SUCCEEDED, target_id=call_id, reason="succeeded", duration_ms=duration_ms,
                         tool_error=result.is_error, event_id=outcome_id) if result is not None
             else audit.event(Decision.FAILED, target_id=call_id, reason=body["error"]["code"],
                              error_code=body["error"]["code"], duration_ms=duration_ms, event_id=outcome_id))
    completed = call_store.completed_item(db, record, http_status, body)
    if tool.requires_approval and request.approval_id is not None and not sent.is_set():
        # the call failed before tools/call went out: its approval is given back, in the completion's own
        # transaction (the same request count as the BatchWriteItem it replaces)
        complete_releasing(db, completed, event, approval_store.release_op(db, request.user_id, request.approval_id,
                                                                             now))
    else:
        batch_put(db, {db.tables.hosted_endpoints: [completed], db.tables.audit: [audit_store.to_audit_item(event)]})
    hosted_call(event.decision.value, event.reason or event.decision.value)
    if result is None:
        raise stored_error(http_status, body)
    return result
