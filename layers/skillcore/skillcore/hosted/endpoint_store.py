"""Hosted endpoints table: skill_hosted_endpoints (docs/contract.md "Hosted external workflows").

Key design: pk = userId; one partition per user, so every write is a transaction within it and another user's
ids do not exist here. Items by sk:
- `ep#<endpointId>`  the endpoint: name, displayName, host, urlMasked, urlSha256, `sealed` (the URL and token,
                     envelope-encrypted: hosted/secrets.py; the only form they are stored in), status, `version`
                     (the optimistic lock), the snapshot (`snapshot`: its tools as JSON text, with each tool's
                     switches; `fingerprint`, `takenAt`), createdAt, updatedAt. While a drift is pending also
                     `pendingFingerprint`, `pendingTakenAt` and `pendingDiff` (JSON text of the added, removed and
                     changed tool names: at most 128 names of at most 128 characters, under 17 KB).
- `pending#<endpointId>` the pending snapshot's tools (JSON text, no switches), `fingerprint`, `takenAt`: only
                     while a drift is pending. It is an item of its own because a snapshot is at most 256 KiB of
                     canonical JSON, and two of them would not fit DynamoDB's 400 KB item: the endpoint item stays
                     under ~285 KB (snapshot, switches, sealed secret, diff), the pending item under ~260 KB. Its
                     prefix is not `ep#`, so the list's Query does not read it.
- `name#<name>`      the name-uniqueness item (holds the endpoint id): names are unique per user.
- `quota`            the per-user counter `endpoints` (limit 10), as in capabilities/store.py.

Access patterns:
- get one: GetItem `ep#<id>` (consistent), and when it names a pending fingerprint GetItem `pending#<id>`; a
  pending item of another fingerprint (a refresh wrote between the two reads) reads both again.
- list: Query pk, begins_with(sk, "ep#") (ULIDs: oldest first), one page of `limit` with DynamoDB's cursor,
  then one BatchGetItem of the pending items of the page's drifted endpoints (none when nothing drifted).
- create = endpoint + name item + quota counter (+ audit), one transaction.
- update = Put of the endpoint conditioned on `version` (+ audit); a refresh that sees a drift also puts the
  pending item, an accept (or a refresh that sees the pinned list again) deletes it, in the same transaction.
- a call's claim: ConditionCheck of the endpoint (exists, not disabled, at the version the call read:
  `unchanged_check_op`) inside the claim's own transaction.
- delete = endpoint (conditioned on existing) + pending item (whether or not there is one) + name item +
  counter give-back (+ audit).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from skillcore.clock import parse_time, to_sort_time
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, batch_get, key, query_page
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact
from skillcore.errors import ConcurrentUpdate, NotFound, QuotaExceeded, VersionConflict
from skillcore.hosted.errors import EndpointNameTaken
from skillcore.hosted.models import (
    MAX_ENDPOINTS_PER_USER,
    EndpointStatus,
    HostedEndpoint,
    PendingSnapshot,
    Snapshot,
    SnapshotDiff,
    SnapshotTool,
)

EP = "ep#"
PENDING = "pending#"
NAME = "name#"
READ_TRIES = 3
QUOTA_SK = "quota"
QUOTA_ATTR = "endpoints"

EXISTS = "attribute_exists(#pk)"
ABSENT = "attribute_not_exists(#pk)"
AT_VERSION = "#version = :expected"
QUOTA_LEFT = "(attribute_not_exists(#used) OR #used < :limit)"
QUOTA_HELD = "#used > :zero"
OWNS_NAME = "#id = :id"


def endpoint_not_found() -> NotFound:
    return NotFound("hosted endpoint not found")


def name_taken() -> EndpointNameTaken:
    return EndpointNameTaken()


def quota_exceeded() -> QuotaExceeded:
    return QuotaExceeded(f"at most {MAX_ENDPOINTS_PER_USER} endpoints", quota="endpoints",
                         limit=MAX_ENDPOINTS_PER_USER)


def version_conflict(current: int) -> VersionConflict:
    return VersionConflict("the endpoint changed since that version", {"currentVersion": current})


def _tools_json(snapshot: Snapshot) -> str:
    return json.dumps([{"name": t.name, "description": t.description, "inputSchema": t.input_schema,
                        "enabled": t.enabled, "requiresApproval": t.requires_approval} for t in snapshot.tools],
                      ensure_ascii=False, separators=(",", ":"))


def _pending_tools_json(snapshot: Snapshot) -> str:
    return json.dumps([{"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                       for t in snapshot.tools], ensure_ascii=False, separators=(",", ":"))


def _diff_json(diff: SnapshotDiff) -> str:
    return json.dumps({"added": diff.added, "removed": diff.removed, "changed": diff.changed},
                      ensure_ascii=False, separators=(",", ":"))


def to_endpoint_item(endpoint: HostedEndpoint) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "pk": endpoint.user_id, "sk": f"{EP}{endpoint.endpoint_id}", "endpointId": endpoint.endpoint_id,
        "name": endpoint.name, "displayName": endpoint.display_name, "host": endpoint.host,
        "urlMasked": endpoint.url_masked, "urlSha256": endpoint.url_sha256, "sealed": endpoint.sealed_secret,
        "status": endpoint.status.value, "version": endpoint.version,
        "snapshot": _tools_json(endpoint.snapshot), "fingerprint": endpoint.snapshot.fingerprint,
        "takenAt": to_sort_time(endpoint.snapshot.taken_at),
        "createdAt": to_sort_time(endpoint.created_at), "updatedAt": to_sort_time(endpoint.updated_at),
    }
    if endpoint.pending is not None:
        fields |= {"pendingFingerprint": endpoint.pending.snapshot.fingerprint,
                   "pendingTakenAt": to_sort_time(endpoint.pending.snapshot.taken_at),
                   "pendingDiff": _diff_json(endpoint.pending.diff)}
    return to_item(fields)


def to_pending_item(endpoint: HostedEndpoint) -> dict[str, Any]:
    assert endpoint.pending is not None
    pending = endpoint.pending.snapshot
    return to_item({"pk": endpoint.user_id, "sk": f"{PENDING}{endpoint.endpoint_id}",
                    "endpointId": endpoint.endpoint_id, "fingerprint": pending.fingerprint,
                    "takenAt": to_sort_time(pending.taken_at), "tools": _pending_tools_json(pending)})


def _pending_from_items(item: dict[str, Any], pending_item: dict[str, Any]) -> PendingSnapshot:
    tools = tuple(SnapshotTool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
                  for t in json.loads(pending_item["tools"]))
    diff = json.loads(item["pendingDiff"])
    return PendingSnapshot(
        snapshot=Snapshot(fingerprint=pending_item["fingerprint"], taken_at=parse_time(pending_item["takenAt"]),
                          tools=tools),
        diff=SnapshotDiff(added=tuple(diff["added"]), removed=tuple(diff["removed"]),
                          changed=tuple(diff["changed"])))


def pending_matches(item: dict[str, Any], pending_item: dict[str, Any] | None) -> bool:
    """Whether `pending_item` is the pending snapshot the endpoint item names (or none is named)."""
    wanted = item.get("pendingFingerprint")
    if wanted is None:
        return True
    return pending_item is not None and pending_item.get("fingerprint") == wanted


def endpoint_from_item(item: dict[str, Any], pending_item: dict[str, Any] | None = None) -> HostedEndpoint:
    tools = tuple(SnapshotTool(name=t["name"], description=t["description"], input_schema=t["inputSchema"],
                               enabled=t["enabled"], requires_approval=t["requiresApproval"])
                  for t in json.loads(item["snapshot"]))
    pending = None
    if item.get("pendingFingerprint") is not None:
        if pending_item is None or not pending_matches(item, pending_item):
            raise ValueError("the endpoint item names a pending snapshot that is not the one given")
        pending = _pending_from_items(item, pending_item)
    return HostedEndpoint(
        endpoint_id=item["endpointId"], user_id=item["pk"], name=item["name"], display_name=item["displayName"],
        host=item["host"], url_masked=item["urlMasked"], url_sha256=item["urlSha256"], sealed_secret=item["sealed"],
        status=item["status"], version=int(item["version"]),
        snapshot=Snapshot(fingerprint=item["fingerprint"], taken_at=parse_time(item["takenAt"]), tools=tools),
        created_at=parse_time(item["createdAt"]), updated_at=parse_time(item["updatedAt"]), pending=pending,
    )


def endpoint_key(user_id: str, endpoint_id: str) -> dict[str, Any]:
    return key(pk=user_id, sk=f"{EP}{endpoint_id}")


def pending_key(user_id: str, endpoint_id: str) -> dict[str, Any]:
    return key(pk=user_id, sk=f"{PENDING}{endpoint_id}")


def is_endpoint_item(item: dict[str, Any]) -> bool:
    return str(item.get("sk", "")).startswith(EP)


def is_pending_item(item: dict[str, Any]) -> bool:
    return str(item.get("sk", "")).startswith(PENDING)


def _get(db: Db, user_id: str, sk: str) -> dict[str, Any] | None:
    return from_item(db.client.get_item(TableName=db.tables.hosted_endpoints, Key=key(pk=user_id, sk=sk),
                                        ConsistentRead=True).get("Item"))


def get_endpoint(db: Db, user_id: str, endpoint_id: str) -> HostedEndpoint | None:
    """One GetItem, two while a drift is pending."""
    for _ in range(READ_TRIES):
        found = _get(db, user_id, f"{EP}{endpoint_id}")
        if found is None:
            return None
        if found.get("pendingFingerprint") is None:
            return endpoint_from_item(found)
        pending_item = _get(db, user_id, f"{PENDING}{endpoint_id}")
        if pending_matches(found, pending_item):
            return endpoint_from_item(found, pending_item)
    raise ConcurrentUpdate("the endpoint kept changing while it was read")


def endpoint_read_with(db: Db, user_id: str, endpoint_id: str, item: dict[str, Any] | None,
                       pending_item: dict[str, Any] | None) -> HostedEndpoint | None:
    """The endpoint from its item and its pending item read together by another read (a call's BatchGetItem):
    built from them when they agree, else read again (a refresh wrote between the two)."""
    if item is None:
        return None
    if pending_matches(item, pending_item):
        return endpoint_from_item(item, pending_item)
    return get_endpoint(db, user_id, endpoint_id)


def tool_schemas(db: Db, user_id: str, endpoint_id: str) -> dict[str, dict[str, Any]] | None:
    """The pinned snapshot's tools and their input schemas (what a grant narrowed to this endpoint may name),
    or None when the user has no such endpoint (another user's included)."""
    endpoint = get_endpoint(db, user_id, endpoint_id)
    return None if endpoint is None else {t.name: t.input_schema for t in endpoint.snapshot.tools}


def name_in_use(db: Db, user_id: str, name: str) -> bool:
    found = db.client.get_item(TableName=db.tables.hosted_endpoints, Key=key(pk=user_id, sk=f"{NAME}{name}"),
                               ConsistentRead=True).get("Item")
    return found is not None


def list_endpoints(db: Db, user_id: str, *, limit: int, cursor: str | None) -> tuple[list[HostedEndpoint], str | None]:
    """One page of the user's endpoints, oldest first, with their pending snapshots."""
    page = query_page(db, table=db.tables.hosted_endpoints, partition=("pk", user_id), limit=limit, cursor=cursor,
                      sort_condition="begins_with(#sk, :ep)", names={"#sk": "sk"}, values={":ep": EP})
    drifted = [item for item in page.items if item.get("pendingFingerprint") is not None]
    pending: dict[str, dict[str, Any]] = {}
    if drifted:
        table = db.tables.hosted_endpoints
        wanted = [key(pk=user_id, sk=f"{PENDING}{item['endpointId']}") for item in drifted]
        pending = {p["endpointId"]: p for p in batch_get(db, {table: wanted})[table]}
    endpoints = []
    for item in page.items:
        pending_item = pending.get(item["endpointId"])
        if pending_matches(item, pending_item):
            endpoints.append(endpoint_from_item(item, pending_item))
            continue
        again = get_endpoint(db, user_id, item["endpointId"])  # a refresh wrote between the two reads
        if again is not None:
            endpoints.append(again)
    return endpoints, page.next_cursor


def quota_used(db: Db, user_id: str) -> int:
    item = from_item(db.client.get_item(TableName=db.tables.hosted_endpoints, Key=key(pk=user_id, sk=QUOTA_SK),
                                        ConsistentRead=True).get("Item")) or {}
    return int(item.get(QUOTA_ATTR, 0))


def unchanged_check_op(db: Db, endpoint: HostedEndpoint) -> dict[str, Any]:
    """A ConditionCheck for a call's claim: the endpoint is still there, not disabled and at the version the call
    read. Every write of the endpoint item moves its version (an update of its status or a tool's switches, a
    refresh that holds or clears a drift, an accept), so the version stands for the tools' switches and lists,
    which are JSON text a condition cannot look into."""
    return {"ConditionCheck": {
        "TableName": db.tables.hosted_endpoints, "Key": endpoint_key(endpoint.user_id, endpoint.endpoint_id),
        "ConditionExpression": f"{EXISTS} AND {AT_VERSION} AND #status <> :disabled",
        "ExpressionAttributeNames": {"#pk": "pk", "#version": "version", "#status": "status"},
        "ExpressionAttributeValues": {":expected": to_value(endpoint.version),
                                      ":disabled": to_value(EndpointStatus.DISABLED.value)}}}


def _put_new_op(db: Db, endpoint: HostedEndpoint) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.hosted_endpoints, "Item": to_endpoint_item(endpoint),
                    "ConditionExpression": ABSENT, "ExpressionAttributeNames": {"#pk": "pk"}}}


def _claim_name_op(db: Db, user_id: str, name: str, endpoint_id: str) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.hosted_endpoints,
                    "Item": to_item({"pk": user_id, "sk": f"{NAME}{name}", "endpointId": endpoint_id}),
                    "ConditionExpression": ABSENT, "ExpressionAttributeNames": {"#pk": "pk"}}}


def _release_name_op(db: Db, user_id: str, name: str, endpoint_id: str) -> dict[str, Any]:
    return {"Delete": {"TableName": db.tables.hosted_endpoints, "Key": key(pk=user_id, sk=f"{NAME}{name}"),
                       "ConditionExpression": f"{EXISTS} AND {OWNS_NAME}",
                       "ExpressionAttributeNames": {"#pk": "pk", "#id": "endpointId"},
                       "ExpressionAttributeValues": {":id": to_value(endpoint_id)}}}


def _take_quota_op(db: Db, user_id: str) -> dict[str, Any]:
    return {"Update": {"TableName": db.tables.hosted_endpoints, "Key": key(pk=user_id, sk=QUOTA_SK),
                       "UpdateExpression": "ADD #used :one", "ConditionExpression": QUOTA_LEFT,
                       "ExpressionAttributeNames": {"#used": QUOTA_ATTR},
                       "ExpressionAttributeValues": {":one": to_value(1), ":limit": to_value(MAX_ENDPOINTS_PER_USER)}}}


def _give_back_quota_op(db: Db, user_id: str) -> dict[str, Any]:
    return {"Update": {"TableName": db.tables.hosted_endpoints, "Key": key(pk=user_id, sk=QUOTA_SK),
                       "UpdateExpression": "ADD #used :minusOne", "ConditionExpression": QUOTA_HELD,
                       "ExpressionAttributeNames": {"#used": QUOTA_ATTR},
                       "ExpressionAttributeValues": {":minusOne": to_value(-1), ":zero": to_value(0)}}}


def _replace_op(db: Db, endpoint: HostedEndpoint, expected_version: int) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.hosted_endpoints, "Item": to_endpoint_item(endpoint),
                    "ConditionExpression": f"{EXISTS} AND {AT_VERSION}",
                    "ExpressionAttributeNames": {"#pk": "pk", "#version": "version"},
                    "ExpressionAttributeValues": {":expected": to_value(expected_version)}}}


def _put_pending_op(db: Db, endpoint: HostedEndpoint) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.hosted_endpoints, "Item": to_pending_item(endpoint)}}


def _delete_pending_op(db: Db, endpoint: HostedEndpoint) -> dict[str, Any]:
    return {"Delete": {"TableName": db.tables.hosted_endpoints,
                       "Key": key(pk=endpoint.user_id, sk=f"{PENDING}{endpoint.endpoint_id}")}}


def _delete_op(db: Db, endpoint: HostedEndpoint) -> dict[str, Any]:
    return {"Delete": {"TableName": db.tables.hosted_endpoints,
                       "Key": key(pk=endpoint.user_id, sk=f"{EP}{endpoint.endpoint_id}"),
                       "ConditionExpression": EXISTS, "ExpressionAttributeNames": {"#pk": "pk"}}}


def create(db: Db, endpoint: HostedEndpoint, *, extra: Sequence[Op] = ()) -> None:
    """Endpoint, name and one unit of quota at once. Raises endpoint_name_taken or quota_exceeded."""
    try:
        transact(db, [Op("endpoint", _put_new_op(db, endpoint)),
                      Op("name", _claim_name_op(db, endpoint.user_id, endpoint.name, endpoint.endpoint_id)),
                      Op("quota", _take_quota_op(db, endpoint.user_id)), *extra])
    except TransactionFailed as failed:
        if failed.failed("name"):
            raise name_taken() from None
        if failed.failed("quota"):
            raise quota_exceeded() from None
        raise


def replace(db: Db, endpoint: HostedEndpoint, *, expected_version: int, extra: Sequence[Op] = (),
            pending_changed: bool = False) -> None:
    """The endpoint at `expected_version` replaced. With `pending_changed`, its pending item is written too: put
    when the endpoint holds a pending snapshot, deleted when it does not (an accept, or a drift that went away)."""
    ops = [Op("endpoint", _replace_op(db, endpoint, expected_version))]
    if pending_changed:
        ops.append(Op("pending", _put_pending_op(db, endpoint) if endpoint.pending is not None
                      else _delete_pending_op(db, endpoint)))
    try:
        transact(db, [*ops, *extra])
    except TransactionFailed as failed:
        lost = failed.failed("endpoint")
        if lost is None:
            raise
        if lost.old is None:
            raise endpoint_not_found() from None
        raise version_conflict(int(lost.old["version"])) from None


def delete(db: Db, endpoint: HostedEndpoint, *, extra: Sequence[Op] = ()) -> None:
    try:
        transact(db, [Op("endpoint", _delete_op(db, endpoint)), Op("pending", _delete_pending_op(db, endpoint)),
                      Op("name", _release_name_op(db, endpoint.user_id, endpoint.name, endpoint.endpoint_id)),
                      Op("quota", _give_back_quota_op(db, endpoint.user_id)), *extra])
    except TransactionFailed as failed:
        if failed.failed("endpoint"):
            raise endpoint_not_found() from None
        raise
