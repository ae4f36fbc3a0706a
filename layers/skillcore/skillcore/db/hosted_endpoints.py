"""Hosted endpoints table: skill_hosted_endpoints (API.md "Hosted external workflows").

Key design: pk = userId; one partition per user, so every write is a transaction within it and another user's
ids do not exist here. Items by sk:
- `ep#<endpointId>`  the endpoint: name, displayName, host, urlMasked, urlSha256, `sealed` (the URL and token,
                     envelope-encrypted: hosted/secrets.py; the only form they are stored in), status, `version`
                     (the optimistic lock), the snapshot (`snapshot`: its tools as JSON text, with each tool's
                     switches; `fingerprint`, `takenAt`), createdAt, updatedAt. A snapshot is at most 256 KiB of
                     canonical JSON, well under DynamoDB's 400 KB item.
- `name#<name>`      the name-uniqueness item (holds the endpoint id): names are unique per user.
- `quota`            the per-user counter `endpoints` (limit 10), as in db/user_capabilities.py.

Access patterns:
- get one: GetItem `ep#<id>` (consistent).
- list: Query pk, begins_with(sk, "ep#") (ULIDs: oldest first), at most 10 items.
- create = endpoint + name item + quota counter (+ audit), one transaction.
- update = Put of the endpoint conditioned on `version` (+ audit).
- delete = endpoint (conditioned on existing) + name item + counter give-back (+ audit).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from skillcore.clock import parse_time, to_sort_time
from skillcore.db.dynamo import Db, from_item, key, to_item, to_value
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact
from skillcore.errors import AlreadyExists, NotFound, QuotaExceeded, VersionConflict
from skillcore.hosted.models import MAX_ENDPOINTS_PER_USER, HostedEndpoint, Snapshot, SnapshotTool

EP = "ep#"
NAME = "name#"
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


def name_taken() -> AlreadyExists:
    return AlreadyExists("an endpoint with this name already exists", code="endpoint_name_taken")


def quota_exceeded() -> QuotaExceeded:
    return QuotaExceeded(f"at most {MAX_ENDPOINTS_PER_USER} endpoints", quota="endpoints",
                         limit=MAX_ENDPOINTS_PER_USER)


def version_conflict(current: int) -> VersionConflict:
    return VersionConflict("the endpoint changed since that version", details={"currentVersion": current})


def _tools_json(snapshot: Snapshot) -> str:
    return json.dumps([{"name": t.name, "description": t.description, "inputSchema": t.input_schema,
                        "enabled": t.enabled, "requiresApproval": t.requires_approval} for t in snapshot.tools],
                      ensure_ascii=False, separators=(",", ":"))


def to_endpoint_item(endpoint: HostedEndpoint) -> dict[str, Any]:
    return to_item({
        "pk": endpoint.user_id, "sk": f"{EP}{endpoint.endpoint_id}", "endpointId": endpoint.endpoint_id,
        "name": endpoint.name, "displayName": endpoint.display_name, "host": endpoint.host,
        "urlMasked": endpoint.url_masked, "urlSha256": endpoint.url_sha256, "sealed": endpoint.sealed_secret,
        "status": endpoint.status.value, "version": endpoint.version,
        "snapshot": _tools_json(endpoint.snapshot), "fingerprint": endpoint.snapshot.fingerprint,
        "takenAt": to_sort_time(endpoint.snapshot.taken_at),
        "createdAt": to_sort_time(endpoint.created_at), "updatedAt": to_sort_time(endpoint.updated_at),
    })


def endpoint_from_item(item: dict[str, Any]) -> HostedEndpoint:
    tools = tuple(SnapshotTool(name=t["name"], description=t["description"], input_schema=t["inputSchema"],
                               enabled=t["enabled"], requires_approval=t["requiresApproval"])
                  for t in json.loads(item["snapshot"]))
    return HostedEndpoint(
        endpoint_id=item["endpointId"], user_id=item["pk"], name=item["name"], display_name=item["displayName"],
        host=item["host"], url_masked=item["urlMasked"], url_sha256=item["urlSha256"], sealed_secret=item["sealed"],
        status=item["status"], version=int(item["version"]),
        snapshot=Snapshot(fingerprint=item["fingerprint"], taken_at=parse_time(item["takenAt"]), tools=tools),
        created_at=parse_time(item["createdAt"]), updated_at=parse_time(item["updatedAt"]),
    )


def get_endpoint(db: Db, user_id: str, endpoint_id: str) -> HostedEndpoint | None:
    found = from_item(db.client.get_item(TableName=db.tables.hosted_endpoints,
                                         Key=key(pk=user_id, sk=f"{EP}{endpoint_id}"), ConsistentRead=True).get("Item"))
    return endpoint_from_item(found) if found else None


def name_in_use(db: Db, user_id: str, name: str) -> bool:
    found = db.client.get_item(TableName=db.tables.hosted_endpoints, Key=key(pk=user_id, sk=f"{NAME}{name}"),
                               ConsistentRead=True).get("Item")
    return found is not None


def list_endpoints(db: Db, user_id: str) -> list[HostedEndpoint]:
    response = db.client.query(
        TableName=db.tables.hosted_endpoints, KeyConditionExpression="#pk = :pk AND begins_with(#sk, :ep)",
        ExpressionAttributeNames={"#pk": "pk", "#sk": "sk"},
        ExpressionAttributeValues={":pk": to_value(user_id), ":ep": to_value(EP)}, ConsistentRead=True,
    )
    return [endpoint_from_item(from_item(i) or {}) for i in response.get("Items", [])]


def quota_used(db: Db, user_id: str) -> int:
    item = from_item(db.client.get_item(TableName=db.tables.hosted_endpoints, Key=key(pk=user_id, sk=QUOTA_SK),
                                        ConsistentRead=True).get("Item")) or {}
    return int(item.get(QUOTA_ATTR, 0))


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


def replace(db: Db, endpoint: HostedEndpoint, *, expected_version: int, extra: Sequence[Op] = ()) -> None:
    try:
        transact(db, [Op("endpoint", _replace_op(db, endpoint, expected_version)), *extra])
    except TransactionFailed as failed:
        lost = failed.failed("endpoint")
        if lost is None:
            raise
        if lost.old is None:
            raise endpoint_not_found() from None
        raise version_conflict(int(lost.old["version"])) from None


def delete(db: Db, endpoint: HostedEndpoint, *, extra: Sequence[Op] = ()) -> None:
    try:
        transact(db, [Op("endpoint", _delete_op(db, endpoint)),
                      Op("name", _release_name_op(db, endpoint.user_id, endpoint.name, endpoint.endpoint_id)),
                      Op("quota", _give_back_quota_op(db, endpoint.user_id)), *extra])
    except TransactionFailed as failed:
        if failed.failed("endpoint"):
            raise endpoint_not_found() from None
        raise
