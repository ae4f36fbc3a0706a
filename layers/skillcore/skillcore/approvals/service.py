"""Approvals: ask for one, list them, decide one, and the operation that uses one.

An approval binds a user's consent to one operation: endpoint, tool and the SHA-256 of the canonical
arguments (digest.py), on the endpoint as it was asked (its version and pinned snapshot fingerprint: a change of
either makes it unusable, and the call asks for a new one). It keeps the whole canonical arguments, which its
owner reads whole (hidden characters escaped: digest.visible). It is asked for by the call that needs it (409 `approval_required` names it), decided
by its owner (API, page or chat), and used at most once, inside the transaction that records the call.
Every decision is audited (`hosted_endpoint.approval`) with ids, the tool name and the digest: never the
arguments or their preview.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from skillcore.approvals import store
from skillcore.approvals.digest import arguments_digest, canonical
from skillcore.approvals.errors import ApprovalNotPending
from skillcore.approvals.models import (
    APPROVAL_TTL,
    Approval,
    ApprovalDecision,
    ApprovalStatus,
    EndpointBinding,
    OperationRef,
)
from skillcore.db.dynamo import Db
from skillcore.db.errors import ConditionFailed, TransactionFailed
from skillcore.db.transact import Op, transact, write
from skillcore.errors import NotFound
from skillcore.ids import new_id
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision, audit_code


def approval_not_found() -> NotFound:
    return NotFound("approval not found")


def approval_not_pending(status: ApprovalStatus) -> ApprovalNotPending:
    return ApprovalNotPending(f"the approval is {status.value}, not pending", {"status": status.value})


def operation_of(endpoint_id: str, tool_name: str, arguments: dict[str, Any]) -> OperationRef:
    return OperationRef(endpoint_id=endpoint_id, tool_name=tool_name, arguments_digest=arguments_digest(arguments))


def ask(
    db: Db, user_id: str, operation: OperationRef, arguments: dict[str, Any], *, client_call_id: str,
    binding: EndpointBinding, now: datetime,
) -> Approval:
    """The approval this call asks for on the endpoint as `binding` says: the one already pending or approved
    under its id, or a new one (1 write, plus 0 reads: a lost condition carries the item as it was)."""
    approval = Approval(
        approval_id=store.approval_id(user_id, operation, client_call_id, binding), user_id=user_id,
        operation=operation, arguments_canonical=canonical(arguments).decode("utf-8"), status=ApprovalStatus.PENDING,
        created_at=now, expires_at=now + APPROVAL_TTL, binding=binding,
    )
    try:
        write(db, Op("approval", store.ask_op(db, approval, now)))
    except ConditionFailed as failed:
        if failed.old is None:
            raise
        return store.approval_from_item(failed.old)
    return approval


def get(db: Db, user_id: str, approval_id: str) -> Approval:
    approval = store.get_approval(db, user_id, approval_id)
    if approval is None:
        raise approval_not_found()
    return approval


def decide(
    db: Db, user_id: str, approval_id: str, decision: ApprovalDecision, *, skill_id: str, skill_version: str,
    now: datetime, caller_kind: str | None = None,
) -> Approval:
    """pending -> approved | denied, with its audit: one consistent read (for the audit's tool and digest and a
    clear refusal), then one transaction whose condition settles a race between two decisions."""
    approval = get(db, user_id, approval_id)
    current = approval.status_at(now)
    if current is not ApprovalStatus.PENDING:
        raise approval_not_pending(current)
    status = ApprovalStatus.APPROVED if decision is ApprovalDecision.APPROVE else ApprovalStatus.DENIED
    event = AuditEvent(
        event_id=new_id(now), user_id=user_id, at=now, skill_id=skill_id, skill_version=skill_version,
        action=AuditAction.HOSTED_ENDPOINT_APPROVAL,
        decision=Decision.ALLOWED if status is ApprovalStatus.APPROVED else Decision.DENIED,
        target_id=approval.approval_id, reason=decision.value,
        metadata=decision_metadata(approval, caller_kind=caller_kind),
    )
    try:
        transact(db, [Op("approval", store.decide_op(db, user_id, approval_id, status, now)),
                      Op("audit", audit_store.put_audit_op(db, event))])
    except TransactionFailed as failed:
        lost = failed.failed("approval")
        if lost is None:
            raise
        if lost.old is None:
            raise approval_not_found() from None
        raise approval_not_pending(store.approval_from_item(lost.old).status_at(now)) from None
    return Approval(
        approval_id=approval.approval_id, user_id=user_id, operation=approval.operation,
        arguments_canonical=approval.arguments_canonical, status=status, created_at=approval.created_at,
        expires_at=approval.expires_at, decided_at=now, binding=approval.binding,
    )


def decision_metadata(approval: Approval, *, caller_kind: str | None = None) -> AuditMetadata:
    """What an approval's audit may say: the endpoint's id, the tool's name (a code) and the digest, never the
    arguments or their preview; on a decision, which kind of caller decided."""
    return AuditMetadata(endpoint_id=audit_code(approval.operation.endpoint_id),
                         tool_id=audit_code(approval.operation.tool_name),
                         input_sha256=approval.operation.arguments_digest, caller_kind=caller_kind)


def use_op(db: Db, approval: Approval, operation: OperationRef, binding: EndpointBinding, now: datetime) -> Op:
    """The operation that uses `approval` for `operation` on the endpoint as `binding` says: compose it into the
    call's transaction; its lost condition (named "approval") means the approval was used, expired, is for
    something else or for the endpoint as it was before a change."""
    return Op("approval", store.use_op(db, approval.user_id, approval.approval_id, operation, binding, now))
