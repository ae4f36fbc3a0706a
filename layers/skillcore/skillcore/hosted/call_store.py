"""Hosted call records: items in skill_hosted_endpoints (hosted/endpoint_store.py), one per user + endpoint +
clientCallId, so a call repeated with the same clientCallId answers what the first one answered and calls
nothing (hosted/calls.py).

Why the endpoints table and not a table of their own: a call record belongs to one of the user's endpoints and
is read together with it (same partition `pk = userId`, one BatchGetItem reads the endpoint and the record);
every function that calls out already holds that table's permissions, so no new table, variable or IAM
resource is needed; and the record's few KiB sit well under the item limit. Only call items carry
`expiresTtl`, the table's TTL attribute, so endpoints, names and the quota never expire.

Item: sk = `call#<endpointId>#<clientCallId>`; `callId`, `toolName`, `argumentsDigest`, `status`
(`pending` while the call is out, `done` once answered), `claimedAt`, `expiresTtl` (epoch seconds, a day
after the claim), and once done `httpStatus` and `body` (the answer or the error envelope, JSON text).
Never the arguments, the URL or the token.

Access patterns:
- read: with the endpoint, in the call's one BatchGetItem (`call_key`); `get_call` (consistent) while waiting
  for a concurrent identical call to finish.
- claim: Put conditioned on the item being absent (`claim_op`), composed with the approval's use when there
  is one; a lost condition hands back the record as it was.
- complete: Put of the whole record, done, with its answer (`completed_item`), in one BatchWriteItem with the
  outcome's audit. Unconditional: the claim made this caller the only writer of the record (its callId), and
  the claim's own transaction already holds the call's `allowed` audit.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from skillcore.clock import parse_time, to_sort_time
from skillcore.db.codec import from_item, to_item
from skillcore.db.dynamo import Db, key

CALL = "call#"
RECORD_TTL = timedelta(days=1)
PENDING = "pending"
DONE = "done"


class CallRecord(Struct, frozen=True, kw_only=True):
    user_id: str
    endpoint_id: str
    client_call_id: str
    call_id: str
    tool_name: str
    arguments_digest: str
    status: str
    claimed_at: datetime
    http_status: int | None = None
    body: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self.status == DONE


def call_sort_key(endpoint_id: str, client_call_id: str) -> str:
    return f"{CALL}{endpoint_id}#{client_call_id}"


def call_key(user_id: str, endpoint_id: str, client_call_id: str) -> dict[str, Any]:
    return key(pk=user_id, sk=call_sort_key(endpoint_id, client_call_id))


def is_call_item(item: dict[str, Any]) -> bool:
    return str(item.get("sk", "")).startswith(CALL)


def record_from_item(item: dict[str, Any]) -> CallRecord:
    body = item.get("body")
    return CallRecord(
        user_id=item["pk"], endpoint_id=item["endpointId"], client_call_id=item["clientCallId"],
        call_id=item["callId"], tool_name=item["toolName"], arguments_digest=item["argumentsDigest"],
        status=item["status"], claimed_at=parse_time(item["claimedAt"]),
        http_status=int(item["httpStatus"]) if item.get("httpStatus") is not None else None,
        body=json.loads(body) if body else None,
    )


def get_call(db: Db, user_id: str, endpoint_id: str, client_call_id: str) -> CallRecord | None:
    found = from_item(db.client.get_item(TableName=db.tables.hosted_endpoints,
                                         Key=call_key(user_id, endpoint_id, client_call_id),
                                         ConsistentRead=True).get("Item"))
    return record_from_item(found) if found else None


def _item(record: CallRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": record.user_id, "sk": call_sort_key(record.endpoint_id, record.client_call_id),
        "endpointId": record.endpoint_id, "clientCallId": record.client_call_id, "callId": record.call_id,
        "toolName": record.tool_name, "argumentsDigest": record.arguments_digest, "status": record.status,
        "claimedAt": to_sort_time(record.claimed_at),
        "expiresTtl": int((record.claimed_at + RECORD_TTL).timestamp()),
    }
    if record.http_status is not None:
        item["httpStatus"] = record.http_status
    if record.body is not None:
        item["body"] = json.dumps(record.body, ensure_ascii=False, separators=(",", ":"))
    return to_item(item)


def claim_op(db: Db, record: CallRecord) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.hosted_endpoints, "Item": _item(replace(record, status=PENDING)),
                    "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"}}}


def completed_item(record: CallRecord, http_status: int, body: dict[str, Any]) -> dict[str, Any]:
    """The record done, whole, for an unconditional Put: only the caller that won its claim completes it."""
    return _item(replace(record, status=DONE, http_status=http_status, body=body))
