"""A proxied call to one tool of a user's hosted endpoint (API.md "Hosted external workflows", `POST
/rpc/hosted-endpoints/{endpointId}/calls`; the MCP face's `call_hosted_tool`; the chat turn's hosted tools).

    result = calls.call(deps, user_id, endpoint_id, tool_name=..., arguments=..., client_call_id=...,
                        approval_id=None, now=now)

Arguments holding NaN or an infinity (not JSON: the API's parser refuses them, but the MCP SDK's and a model's
tool input may carry them) are refused first, as a malformed body (422 `validation_error`, keyword `finite`):
no digest exists to bind or audit them (approvals/digest.py).
Then the checks, in API.md's order, each refusal a DomainError with the API's code:
1. the grant: `hosted_workflow:invoke` of the hosted workflows skill (`deps.skill`) through PolicyGate (422
   `permission_required`; a skill switched off is 422 `skill_disabled`, the catalog's switch like every skill's);
2. the endpoint exists for this user (404 otherwise, another user's too) and is not disabled (409
   `endpoint_disabled`; a `drift_pending` endpoint keeps serving its unchanged tools);
3. the tool: one a pending refresh added or changed is 409 `tool_drifted`; one not in the stored snapshot is 422
   `unknown_tool`; one switched off is 409 `tool_drifted` too, because API.md lists "enabled and not drifted"
   under that one code (and a tool adopted from a drift starts disabled: the same refusal before and after
   the owner accepts the list, until they switch it on);
4. the arguments against the snapshot's input schema (422 `validation_error`, `details.errors` = JSON paths
   and keywords, never values). The validator is Draft 2020-12, the dialect the snapshot's schemas were checked
   under (hosted/snapshot.py): under Draft 7 `prefixItems`, `dependentSchemas` and `unevaluated*` would
   silently not apply. It has an empty `referencing.Registry()`, so no `$ref` can leave the schema, and no
   format checker;
5. the approval, when the tool requires one: the given `approvalId` is used in the call record's own
   transaction (its condition: approved, unexpired, this endpoint, tool and argument digest), so it is used
   once; without one, or with one that is not usable, 409 `approval_required` with `details.approvalId`
   (approvals.service.ask: the same pending approval for the same clientCallId and arguments);
6. then the URL is checked again with its addresses (egress, 422 `url_not_allowed`) and the call forwarded
   with the official MCP client over the egress transport: 30 s deadline (or what the invocation has left,
   less 2 s: service.egress_now), 1 MiB answer cap, redirects never followed (504 `upstream_timeout`, 502
   `upstream_error` with `details.reason`).

Idempotent by clientCallId: the call record (hosted/call_store.py) is claimed with a conditional write before
tools/call is sent, so of two identical calls one reaches the tool; the other waits for the record to be
completed and answers the same body. The claim is written while the client opens its session (the connection,
TLS and `initialize`, which call nothing), and tools/call waits for it (egress.mcp_session.call_tool's
`ready`): a claim lost to an identical call, or to an approval no longer usable, closes the session with nothing
of the call sent. Overlapped so, the claim costs a forwarded call no time of its own. A repeated clientCallId
answers the stored body (a result, or the 502/504/422 of the forwarding) and calls nothing; refusals of steps 1-5 store nothing, so a call refused for want of
an approval is retried with the same clientCallId once approved. An upstream failure is stored too: the
endpoint may have acted, so it is never re-sent under the same id.

The answer: `content` is the text of the result's text items (joined by newlines) cut to 16 KiB of UTF-8;
`structuredContent` is kept when its JSON is at most 64 KiB (so a record stays far below DynamoDB's item
limit), otherwise left out.

Audit (`hosted_endpoint.call`): every claimed call twice, `allowed` in the claim's own transaction (so a call is
audited before it is sent, even if its invocation dies before the answer), then `succeeded` or `failed` with the
error code; every refusal of steps 1-6 (denied, with the code). Ids, the tool's name (as a code), the argument
digest and the duration, never the arguments, the result, the URL or the token. A replay is not a call and is
not audited again.

DynamoDB requests per call (counted by tests/stack/test_hosted_calls_service.py and `make bench`'s hosted section):
- a forwarded call: 3, of which 2 wait in sequence (1 BatchGetItem of the skill switch, the grant, the
  endpoint, the call record and the given approval; 1 TransactWriteItems of the claim, the `allowed` audit and
  the approval's use when there is one, beside the session's opening; 1 BatchWriteItem of the completed record
  and the outcome's audit: once the claim's transaction holds the `allowed` event, the two need no transaction
  of their own; a call with an approval that failed before tools/call was sent writes them in 1
  TransactWriteItems instead, with the approval's release);
- a replay: 1 (the BatchGetItem);
- a refusal at steps 1-4: 2 (the BatchGetItem and the audit); `approval_required`: 3 (plus the ask; the
  BatchGetItem reads the given approval too, so one not usable opens no session).
Waiting for a concurrent identical call adds one GetItem per 0.1 s of waiting.

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

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

from msgspec import Struct

from skillcore.approvals import service as approvals
from skillcore.approvals import store as approval_store
from skillcore.approvals.digest import non_finite
from skillcore.approvals.models import OperationRef
from skillcore.conversations.profile_store import bindings_key, disabled_skills
from skillcore.db.dynamo import Db, batch_get, batch_put, key
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact
from skillcore.egress.errors import EgressError
from skillcore.egress.settings import EgressSettings
from skillcore.errors import Conflict, DomainError, RuleViolation, UpstreamError, UpstreamTimeout
from skillcore.hosted import call_store, endpoint_store, service
from skillcore.hosted.models import EndpointSecret, EndpointStatus, HostedEndpoint, SnapshotTool
from skillcore.ids import new_id, new_ids
from skillcore.policy import audit_store, grant_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision, audit_code
from skillcore.policy.gate import OperationApproval, PolicyInput, Reason, decide, permission_required_details
from skillcore.policy.grants import GrantScope

MAX_CONTENT_BYTES = 16 * 1024
MAX_STRUCTURED_BYTES = 64 * 1024
MAX_VALIDATION_ERRORS = 20
WAIT_POLL_SECONDS = 0.1
WAIT_SLACK_SECONDS = 5.0

# Claims run here, beside the session's opening (one per call; the local stack's concurrent requests share it).
_BESIDE = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hosted-call")

CallTool = Callable[[str, str | None, Any, str, dict[str, Any]], dict[str, Any]]


class CallResult(Struct, frozen=True, kw_only=True):
    call_id: str
    is_error: bool
    content: str
    structured_content: dict[str, Any] | None = None
    duration_ms: int

    def to_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"callId": self.call_id, "isError": self.is_error, "content": self.content,
                                "durationMs": self.duration_ms}
        if self.structured_content is not None:
            body["structuredContent"] = self.structured_content
        return body

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> CallResult:
        return cls(call_id=body["callId"], is_error=body["isError"], content=body["content"],
                   structured_content=body.get("structuredContent"), duration_ms=body["durationMs"])


# ---------------------------------------------------------------- refusals


def endpoint_disabled() -> Conflict:
    return Conflict("the endpoint is disabled", code="endpoint_disabled")


def tool_drifted(name: str, reason: str) -> Conflict:
    return Conflict("this tool cannot be called now", code="tool_drifted",
                    details={"toolName": name, "reason": reason})


def approval_required(approval_id: str) -> Conflict:
    return Conflict("this call needs your approval first", code="approval_required",
                    details={"approvalId": approval_id})


def validation_failed(errors: list[dict[str, str]]) -> RuleViolation:
    return RuleViolation("the arguments do not match the tool's input schema", code="validation_error",
                         details={"errors": errors})


def call_in_progress() -> UpstreamTimeout:
    return UpstreamTimeout("an identical call is still waiting for the endpoint")


def argument_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[dict[str, str]]:
    """Each violation as its JSON path and keyword: the validator's messages quote values, so they are dropped."""
    from jsonschema import Draft202012Validator
    from referencing import Registry

    validator = Draft202012Validator(schema, registry=Registry())
    found = sorted(validator.iter_errors(arguments), key=lambda e: (e.json_path, str(e.validator)))
    return [{"path": e.json_path, "keyword": str(e.validator)} for e in found[:MAX_VALIDATION_ERRORS]]


# ---------------------------------------------------------------- the answer


def _cut_utf8(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode("utf-8", errors="ignore") + "…"


def answer_of(raw: dict[str, Any], call_id: str, duration_ms: int) -> CallResult:
    """The API's answer for a CallToolResult (as JSON data)."""
    items = raw.get("content") or []
    texts = [i["text"] for i in items if isinstance(i, dict) and i.get("type") == "text" and isinstance(i.get("text"), str)]
    structured = raw.get("structuredContent")
    if not isinstance(structured, dict) or len(json.dumps(structured, ensure_ascii=False).encode()) > MAX_STRUCTURED_BYTES:
        structured = None
    return CallResult(call_id=call_id, is_error=bool(raw.get("isError", False)),
                      content=_cut_utf8("\n".join(texts), MAX_CONTENT_BYTES), structured_content=structured,
                      duration_ms=duration_ms)


def _envelope(error: DomainError) -> dict[str, Any]:
    return {"error": {"code": error.code, "message": error.message, "details": error.details}}


def _stored_error(http_status: int, body: dict[str, Any]) -> DomainError:
    error = body["error"]
    kind = {504: UpstreamTimeout, 502: UpstreamError}.get(http_status, RuleViolation)
    return kind(error["message"], code=error["code"], details=error.get("details") or {})


def replay(record: call_store.CallRecord) -> CallResult:
    """The stored answer of a completed call: its body, or its error raised again."""
    assert record.done and record.body is not None and record.http_status is not None
    if record.http_status != 200:
        raise _stored_error(record.http_status, record.body)
    return CallResult.from_body(record.body)


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
              event_id: str | None = None) -> AuditEvent:
        return AuditEvent(
            event_id=event_id or new_id(self.now), user_id=self.user_id, at=self.now, skill_id=self.deps.skill.skill_id,
            skill_version=self.deps.skill.version, action=AuditAction.HOSTED_ENDPOINT_CALL, decision=decision,
            scope=self.scope, target_id=audit_code(target_id), reason=reason,
            metadata=AuditMetadata(
                endpoint_id=audit_code(self.endpoint_id), tool_id=audit_code(self.tool_name),
                input_sha256=self.digest, error_code=error_code, duration_ms=duration_ms,
                status=None if tool_error is None else ("tool_error" if tool_error else "ok")),
        )

    def refused(self, error: DomainError) -> DomainError:
        """Writes the refusal's audit (1 PutItem) and hands the error back to be raised."""
        audit_store.put_audit(self.deps.db, self.event(Decision.DENIED, target_id=self.endpoint_id,
                                                       reason=error.code, error_code=error.code))
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


def _forward(deps: service.HostedDeps, secret: EndpointSecret, egress: EgressSettings, tool_name: str,
             arguments: dict[str, Any], claim: _Claim, sent: threading.Event) -> dict[str, Any] | None:
    """tools/call on the endpoint, sent only once the claim committed: the official client opens its session
    while the claim is written and waits for it before tools/call. None when the claim was lost (nothing of
    the call was sent). `sent` is set just before tools/call goes out. An injected `deps.call_tool` (tests) is the
    exchange alone: it is called after the claim, as sent."""
    call_tool = deps.call_tool
    if call_tool is None:
        from skillcore.egress import mcp_session

        return mcp_session.call_tool(secret.url, secret.token, egress, tool_name, arguments, ready=claim.won,
                                     sent=sent)
    if not claim.won.result():
        return None
    sent.set()
    return call_tool(secret.url, secret.token, egress, tool_name, arguments)


class _Claim:
    """The call record's claim (with the call's `allowed` audit, and the approval's use when there is one),
    committed on a worker thread beside the session's opening. `won` resolves True once committed, False when a
    condition failed or the write did (then `lost` holds why); it never raises."""

    def __init__(self, db: Db, ops: list[Op]) -> None:
        self.lost: Exception | None = None
        self.won: Future[bool] = _BESIDE.submit(self._commit, db, ops)

    def _commit(self, db: Db, ops: list[Op]) -> bool:
        try:
            transact(db, ops)
        except Exception as error:  # noqa: BLE001  (handed to the calling thread, which decides: calls.call)
            self.lost = error
            return False
        return True


def _wait_for(deps: service.HostedDeps, user_id: str, endpoint_id: str, client_call_id: str) -> CallResult:
    """A concurrent identical call holds the record: wait for its answer (its deadline, and some slack)."""
    end = time.monotonic() + deps.egress.deadline_seconds + WAIT_SLACK_SECONDS
    while time.monotonic() < end:
        record = call_store.get_call(deps.db, user_id, endpoint_id, client_call_id)
        if record is not None and record.done:
            return replay(record)
        time.sleep(WAIT_POLL_SECONDS)
    raise call_in_progress()


def call(deps: service.HostedDeps, user_id: str, endpoint_id: str, *, tool_name: str, arguments: dict[str, Any],
         client_call_id: str, approval_id: str | None, now: datetime, agent_id: str | None = None) -> CallResult:
    """One call of `tool_name` on the user's endpoint, with every check of API.md in its order (module
    docstring). `agent_id`, for a call made on an agent's behalf (the chat turn), lets an agent-scope grant
    count before the user's. Raises the API's DomainErrors."""
    db, skill = deps.db, deps.skill
    unsafe = non_finite(arguments)
    if unsafe:  # not JSON, no digest exists for them (approvals/digest.py): a malformed body, before any read
        raise validation_failed([{"path": p, "keyword": "finite"} for p in unsafe[:MAX_VALIDATION_ERRORS]])
    operation = approvals.operation_of(endpoint_id, tool_name, arguments)
    audit = _Audit(deps=deps, user_id=user_id, endpoint_id=endpoint_id, tool_name=tool_name,
                   digest=operation.arguments_digest, now=now)
    scopes = ((GrantScope.agent(agent_id),) if agent_id else ()) + (GrantScope.user(),)
    grant_keys = [grant_store.grant_key(user_id, skill.skill_id, p.code, s) for p in skill.permissions for s in scopes]
    found = batch_get(db, {
        db.tables.users: [bindings_key(user_id)], db.tables.grants: grant_keys,
        db.tables.hosted_endpoints: [key(pk=user_id, sk=f"{endpoint_store.EP}{endpoint_id}"),
                                     call_store.call_key(user_id, endpoint_id, client_call_id)],
        db.tables.approvals: [key(pk=user_id, sk=approval_id)] if approval_id else [],
    })
    endpoint_item = next((i for i in found[db.tables.hosted_endpoints] if not call_store.is_call_item(i)), None)
    record_item = next((i for i in found[db.tables.hosted_endpoints] if call_store.is_call_item(i)), None)
    if record_item is not None:
        record = call_store.record_from_item(record_item)
        if record.done:
            return replay(record)
        if (now - record.claimed_at).total_seconds() > deps.egress.deadline_seconds + WAIT_SLACK_SECONDS:
            raise call_in_progress()  # its caller stopped before answering (a crashed invocation): outcome unknown
        return _wait_for(deps, user_id, endpoint_id, client_call_id)

    # 1. the grant (and the skill's switch)
    bindings = found[db.tables.users]
    if skill.skill_id in disabled_skills(bindings[0] if bindings else None):
        raise audit.refused(RuleViolation("this skill is disabled", code="skill_disabled"))
    grants = tuple(grant_store.grant_from_item(i) for i in found[db.tables.grants])
    endpoint = endpoint_store.endpoint_from_item(endpoint_item) if endpoint_item else None
    tool = endpoint.snapshot.tool(tool_name) if endpoint is not None else None
    request = PolicyInput(user_id=user_id, skill_id=skill.skill_id, skill_version=skill.version,
                          requirements=skill.permissions, action="hosted_endpoint.call", agent_id=agent_id,
                          target_id=endpoint_id, grants=grants,
                          # the grant alone first; this operation's approval is step 5
                          operation=OperationApproval(requires_approval=False, approved=False))
    decision = decide(request)
    if not decision.allowed:
        raise audit.refused(RuleViolation(decision.message, code="permission_required", details=(
            permission_required_details(skill.skill_id, decision.missing, skill.permissions))))
    audit = _Audit(deps=deps, user_id=user_id, endpoint_id=endpoint_id, tool_name=tool_name,
                   digest=operation.arguments_digest, now=now, scope=decision.scope)

    # 2. the endpoint
    if endpoint is None:
        raise endpoint_store.endpoint_not_found()  # nothing of another user's is audited under this one
    if endpoint.status is EndpointStatus.DISABLED:
        raise audit.refused(endpoint_disabled())

    # 3. the tool; 4. the arguments
    try:
        tool = _tool_of(endpoint, tool_name)
        errors = argument_errors(tool.input_schema, arguments)
        if errors:
            raise validation_failed(errors)
    except DomainError as refused:
        raise audit.refused(refused) from None

    # 5. the approval: PolicyGate decides with the approval as read (approved, unexpired, this operation), so an
    # unusable one opens no session; the claim's transaction uses it, and its condition is the final word.
    given = found[db.tables.approvals]
    usable = bool(given) and approval_store.approval_from_item(given[0]).usable_for(operation, now)
    final = decide(PolicyInput(
        user_id=user_id, skill_id=skill.skill_id, skill_version=skill.version, requirements=skill.permissions,
        action="hosted_endpoint.call", agent_id=agent_id, target_id=endpoint_id, grants=grants,
        operation=OperationApproval(requires_approval=tool.requires_approval, approved=usable)))
    if not final.allowed:
        assert final.reason is Reason.APPROVAL_REQUIRED, final.reason
        raise audit.refused(approval_required(_ask(deps, user_id, operation, arguments, client_call_id, now)))

    # what the forwarding needs, opened before the claim: a key that cannot be opened leaves no record behind
    secret = service.secret_of(deps, endpoint)
    egress = service.egress_now(deps)  # the deadline, cut to what the invocation has left

    # the claim: the record (so one of two identical calls goes out), the call's `allowed` audit (every call
    # sent is audited before it is sent) and the approval's use, in one transaction, written while the session
    # opens (_forward). The ids are minted together, so the outcome's event sorts after the `allowed` one
    # whatever other calls mint meanwhile.
    call_id, allowed_id, outcome_id = new_ids(now, 3)
    record = call_store.CallRecord(
        user_id=user_id, endpoint_id=endpoint_id, client_call_id=client_call_id, call_id=call_id,
        tool_name=tool_name, arguments_digest=operation.arguments_digest, status=call_store.PENDING, claimed_at=now)
    ops = [Op("call", call_store.claim_op(db, record)),
           Op("audit", audit_store.put_audit_op(db, audit.event(Decision.ALLOWED, target_id=call_id,
                                                                reason=final.reason.value, event_id=allowed_id)))]
    if tool.requires_approval and approval_id is not None:
        ops.append(Op("approval", approval_store.use_op(db, user_id, approval_id, operation, now)))
    claim = _Claim(db, ops)

    # 6. out: the URL is checked again (with its addresses) by the egress client itself
    started = time.monotonic()
    http_status, body, result = 200, {}, None
    sent = threading.Event()
    try:
        raw = _forward(deps, secret, egress, tool_name, arguments, claim, sent)
        duration_ms = int((time.monotonic() - started) * 1000)
        if raw is not None:
            result = answer_of(raw, call_id, duration_ms)
            body = result.to_body()
    except EgressError as error:
        duration_ms = int((time.monotonic() - started) * 1000)
        failure = service.domain_error(error)
        http_status = {UpstreamTimeout: 504, UpstreamError: 502}.get(type(failure), 422)
        body = _envelope(failure)
    if not claim.won.result():  # nothing of the call was sent: it is another's, or its approval is not usable
        lost = claim.lost
        if isinstance(lost, TransactionFailed) and lost.failed("call") is not None:
            return _wait_for(deps, user_id, endpoint_id, client_call_id)
        if isinstance(lost, TransactionFailed) and lost.failed("approval") is not None:
            raise audit.refused(approval_required(_ask(deps, user_id, operation, arguments, client_call_id, now)))
        raise lost if lost is not None else RuntimeError("the claim was neither won nor lost")

    # the completion and the outcome's audit, one BatchWriteItem (the claim's transaction already audited the
    # call as sent, so these two need no transaction): both are durable before the answer
    event = (audit.event(Decision.SUCCEEDED, target_id=call_id, reason="succeeded", duration_ms=duration_ms,
                         tool_error=result.is_error, event_id=outcome_id) if result is not None
             else audit.event(Decision.FAILED, target_id=call_id, reason=body["error"]["code"],
                              error_code=body["error"]["code"], duration_ms=duration_ms, event_id=outcome_id))
    completed = call_store.completed_item(record, http_status, body)
    if tool.requires_approval and approval_id is not None and not sent.is_set():
        # the call failed before tools/call went out: its approval is given back, in the completion's own
        # transaction (the same request count as the BatchWriteItem it replaces)
        _complete_releasing(db, completed, event, approval_store.release_op(db, user_id, approval_id, now))
    else:
        batch_put(db, {db.tables.hosted_endpoints: [completed], db.tables.audit: [audit_store.to_audit_item(event)]})
    if result is None:
        raise _stored_error(http_status, body)
    return result


def _complete_releasing(db: Db, completed: dict[str, Any], event: AuditEvent, release: dict[str, Any]) -> None:
    """The completion and the outcome's audit with the approval's release, one transaction; a release whose
    condition fails (the approval is no longer this call's use) leaves it as it is, and the completion is written
    alone."""
    ops = [Op("call", {"Put": {"TableName": db.tables.hosted_endpoints, "Item": completed}}),
           Op("audit", audit_store.put_audit_op(db, event)), Op("approval", release)]
    try:
        transact(db, ops)
    except TransactionFailed:
        transact(db, ops[:2])


def _ask(deps: service.HostedDeps, user_id: str, operation: OperationRef, arguments: dict[str, Any],
         client_call_id: str, now: datetime) -> str:
    return approvals.ask(deps.db, user_id, operation, arguments, client_call_id=client_call_id, now=now).approval_id
