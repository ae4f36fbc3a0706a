"""Approvals table: skill_approvals, per-operation approvals (docs/contract.md "Approvals").

Key design: pk = userId, sk = approvalId. The id is derived from the operation it asks about (user, endpoint,
tool, the call's clientCallId and the arguments' digest) and the endpoint's binding (its version and pinned
fingerprint when asked: `approval_id`), so a call retried with the same clientCallId finds the approval it
already asked for instead of asking twice; different arguments are a different approval, so a pending one is
never re-pointed at other arguments while its owner reads it, and an endpoint changed since is a new approval.
The item keeps the whole canonical arguments (`argumentsCanonical`, at most 64 KiB: models.MAX_CANONICAL_BYTES)
and the binding (`endpointVersion`, `snapshotFingerprint`).
`createdSort` ("<createdAt>#<id>") is the sort key of the local index `byCreated`, newest first for lists.
`expiresTtl` (epoch seconds, a day after expiry) lets DynamoDB's TTL remove old approvals; until then an
expired one is still listed (status derived: conversations/models.py).

Access patterns:
- get one: GetItem (consistent), pk + sk.
- list a user's approvals, newest first: Query `byCreated`, the status as a filter (a user has few approvals
  alive at once: they expire in 10 minutes and leave the table a day later); a page is cut after 1 MiB of
  canonical arguments (PAGE_ARGUMENTS_BUDGET), its cursor then minted from the last approval kept.
- ask: Put, conditioned on the item being absent or no longer askable (denied or expired), so a pending or
  approved one is never overwritten; a lost condition hands back the item as it was.
- decide: Update pending -> approved | denied, conditioned on `pending` and unexpired (with the audit, one
  transaction).
- use: Update approved -> used, conditioned on `approved`, unexpired, the exact operation and the endpoint's
  binding (`endpointVersion`, `snapshotFingerprint`, as read by the call); composed into
  the call's own transaction by the caller, so an approval is used at most once.
- release: Update used -> approved again, conditioned on `used` at the very time the use wrote; for a call
  that failed before anything of it was sent (hosted/calls.py), composed into its completion's transaction.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from skillcore.approvals.models import Approval, ApprovalStatus, EndpointBinding, OperationRef
from skillcore.clock import parse_time, to_sort_time
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, encode_cursor, key, query_page
from skillcore.ids import stable_id

INDEX = "byCreated"
# A page of the list carries at most this much canonical arguments (and at least one approval): its previews,
# escaped, are at most three times as long, so a page of 100 approvals of 64 KiB each stays far below Lambda's
# 6 MB response; the rest comes with the page's cursor.
PAGE_ARGUMENTS_BUDGET = 1024 * 1024
TTL_AFTER_EXPIRY = timedelta(days=1)

EXISTS = "attribute_exists(#pk)"
ABSENT = "attribute_not_exists(#pk)"
IS_PENDING = "#status = :pending"
IS_APPROVED = "#status = :approved"
IS_DENIED = "#status = :denied"
UNEXPIRED = "#expiresAt > :now"
EXPIRED = "#expiresAt <= :now"
SAME_OPERATION = "#endpointId = :endpointId AND #toolName = :toolName AND #digest = :digest"
SAME_BINDING = "#endpointVersion = :endpointVersion AND #fingerprint = :fingerprint"


def approval_id(user_id: str, operation: OperationRef, client_call_id: str, binding: EndpointBinding) -> str:
    """Derived from the operation and the endpoint's binding: once the endpoint changes (a version or a pinned
    tool list of its own), the same call asks for a new approval instead of finding the old one."""
    return stable_id("approval", user_id, operation.endpoint_id, operation.tool_name, client_call_id,
                     operation.arguments_digest, str(binding.endpoint_version), binding.snapshot_fingerprint)


def to_approval_item(approval: Approval) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": approval.user_id,
        "sk": approval.approval_id,
        "approvalId": approval.approval_id,
        "endpointId": approval.operation.endpoint_id,
        "toolName": approval.operation.tool_name,
        "argumentsDigest": approval.operation.arguments_digest,
        "argumentsCanonical": approval.arguments_canonical,
        "status": approval.status.value,
        "createdAt": to_sort_time(approval.created_at),
        "createdSort": f"{to_sort_time(approval.created_at)}#{approval.approval_id}",
        "expiresAt": to_sort_time(approval.expires_at),
        "expiresTtl": int((approval.expires_at + TTL_AFTER_EXPIRY).timestamp()),
    }
    if approval.binding is not None:
        item["endpointVersion"] = approval.binding.endpoint_version
        item["snapshotFingerprint"] = approval.binding.snapshot_fingerprint
    if approval.decided_at is not None:
        item["decidedAt"] = to_sort_time(approval.decided_at)
    if approval.used_at is not None:
        item["usedAt"] = to_sort_time(approval.used_at)
    return to_item(item)


def approval_from_item(item: dict[str, Any]) -> Approval:
    return Approval(
        approval_id=item["approvalId"],
        user_id=item["pk"],
        operation=OperationRef(endpoint_id=item["endpointId"], tool_name=item["toolName"],
                               arguments_digest=item["argumentsDigest"]),
        # an item stored before the whole arguments were kept has only its (cut) preview
        arguments_canonical=item.get("argumentsCanonical", item.get("argumentsPreview", "")),
        status=ApprovalStatus(item["status"]),
        created_at=parse_time(item["createdAt"]),
        expires_at=parse_time(item["expiresAt"]),
        decided_at=parse_time(item["decidedAt"]) if item.get("decidedAt") else None,
        used_at=parse_time(item["usedAt"]) if item.get("usedAt") else None,
        binding=EndpointBinding(endpoint_version=int(item["endpointVersion"]),
                                snapshot_fingerprint=item["snapshotFingerprint"])
        if item.get("endpointVersion") is not None else None,
    )


def approval_key(user_id: str, approval_id_: str) -> dict[str, Any]:
    return key(pk=user_id, sk=approval_id_)


def get_approval(db: Db, user_id: str, approval_id_: str) -> Approval | None:
    found = from_item(db.client.get_item(
        TableName=db.tables.approvals, Key=approval_key(user_id, approval_id_), ConsistentRead=True,
    ).get("Item"))
    return approval_from_item(found) if found else None


def list_approvals(
    db: Db, user_id: str, *, status: ApprovalStatus | None, now: datetime, limit: int, cursor: str | None,
) -> tuple[list[Approval], str | None]:
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    condition = None
    if status is not None:
        names = {"#status": "status", "#expiresAt": "expiresAt"}
        values = {":now": to_sort_time(now)}
        if status is ApprovalStatus.EXPIRED:
            condition = f"#status IN (:pending, :approved) AND {EXPIRED}"
            values |= {":pending": ApprovalStatus.PENDING.value, ":approved": ApprovalStatus.APPROVED.value}
        elif status in (ApprovalStatus.PENDING, ApprovalStatus.APPROVED):
            condition = f"#status = :status AND {UNEXPIRED}"
            values |= {":status": status.value}
        else:
            condition, names = "#status = :status", {"#status": "status"}
            values = {":status": status.value}
    page = query_page(
        db, table=db.tables.approvals, partition=("pk", user_id), index=INDEX, newest_first=True, limit=limit,
        cursor=cursor, names=names or None, values=values or None, filter_expression=condition,
    )
    kept: list[dict[str, Any]] = []
    used = 0
    for item in page.items:
        size = len(str(item.get("argumentsCanonical", "")).encode("utf-8"))
        if kept and used + size > PAGE_ARGUMENTS_BUDGET:
            last = kept[-1]
            return [approval_from_item(i) for i in kept], encode_cursor(
                {name: {"S": last[name]} for name in ("pk", "sk", "createdSort")})
        kept.append(item)
        used += size
    return [approval_from_item(i) for i in kept], page.next_cursor


def ask_op(db: Db, approval: Approval, now: datetime) -> dict[str, Any]:
    """A new pending approval, where none is pending or approved under its id (a denied or expired one is
    asked again)."""
    return {"Put": {
        "TableName": db.tables.approvals, "Item": to_approval_item(approval),
        "ConditionExpression": f"{ABSENT} OR {IS_DENIED} OR {EXPIRED}",
        "ExpressionAttributeNames": {"#pk": "pk", "#status": "status", "#expiresAt": "expiresAt"},
        "ExpressionAttributeValues": {":denied": to_value(ApprovalStatus.DENIED.value),
                                      ":now": to_value(to_sort_time(now))},
    }}


def decide_op(db: Db, user_id: str, approval_id_: str, status: ApprovalStatus, now: datetime) -> dict[str, Any]:
    return {"Update": {
        "TableName": db.tables.approvals, "Key": key(pk=user_id, sk=approval_id_),
        "UpdateExpression": "SET #status = :to, #decidedAt = :now",
        "ConditionExpression": f"{EXISTS} AND {IS_PENDING} AND {UNEXPIRED}",
        "ExpressionAttributeNames": {"#pk": "pk", "#status": "status", "#expiresAt": "expiresAt",
                                     "#decidedAt": "decidedAt"},
        "ExpressionAttributeValues": {":to": to_value(status.value), ":now": to_value(to_sort_time(now)),
                                      ":pending": to_value(ApprovalStatus.PENDING.value)},
    }}


def use_op(db: Db, user_id: str, approval_id_: str, operation: OperationRef, binding: EndpointBinding,
           now: datetime) -> dict[str, Any]:
    return {"Update": {
        "TableName": db.tables.approvals, "Key": key(pk=user_id, sk=approval_id_),
        "UpdateExpression": "SET #status = :used, #usedAt = :now",
        "ConditionExpression": f"{EXISTS} AND {IS_APPROVED} AND {UNEXPIRED} AND {SAME_OPERATION} AND {SAME_BINDING}",
        "ExpressionAttributeNames": {"#pk": "pk", "#status": "status", "#expiresAt": "expiresAt",
                                     "#usedAt": "usedAt", "#endpointId": "endpointId", "#toolName": "toolName",
                                     "#digest": "argumentsDigest", "#endpointVersion": "endpointVersion",
                                     "#fingerprint": "snapshotFingerprint"},
        "ExpressionAttributeValues": {
            ":used": to_value(ApprovalStatus.USED.value), ":approved": to_value(ApprovalStatus.APPROVED.value),
            ":now": to_value(to_sort_time(now)), ":endpointId": to_value(operation.endpoint_id),
            ":toolName": to_value(operation.tool_name), ":digest": to_value(operation.arguments_digest),
            ":endpointVersion": to_value(binding.endpoint_version),
            ":fingerprint": to_value(binding.snapshot_fingerprint),
        },
    }}


def release_op(db: Db, user_id: str, approval_id_: str, used_at: datetime) -> dict[str, Any]:
    """Undoes `use_op` of a call that sent nothing: approved again, if it is still the use made at `used_at`."""
    return {"Update": {
        "TableName": db.tables.approvals, "Key": key(pk=user_id, sk=approval_id_),
        "UpdateExpression": "SET #status = :approved REMOVE #usedAt",
        "ConditionExpression": f"{EXISTS} AND #status = :used AND #usedAt = :usedAt",
        "ExpressionAttributeNames": {"#pk": "pk", "#status": "status", "#usedAt": "usedAt"},
        "ExpressionAttributeValues": {
            ":used": to_value(ApprovalStatus.USED.value), ":approved": to_value(ApprovalStatus.APPROVED.value),
            ":usedAt": to_value(to_sort_time(used_at)),
        },
    }}
