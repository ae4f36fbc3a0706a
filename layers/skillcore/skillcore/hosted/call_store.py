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

The record is an idempotency record (db/idempotency.py): its key is the slot, its payload fingerprint the
`toolName` and `argumentsDigest` (the same clientCallId with another tool or other arguments is a reuse of the
key, not a retry), its answer `body`.

Access patterns:
- read: with the endpoint, in the call's one BatchGetItem (hosted/call_state.py, by `call_slot`); `get_call`
  (consistent) while waiting for a concurrent identical call to finish.
- claim: Put conditioned on the item being absent (`claim_op`), composed with the approval's use when there
  is one; a lost condition hands back the record as it was (`lost_call`).
- complete: Put of the whole record, done, with its answer (`completed_item`), in one BatchWriteItem with the
  outcome's audit. Unconditional: the claim made this caller the only writer of the record (its callId), and
  the claim's own transaction already holds the call's `allowed` audit.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from msgspec import Struct

from skillcore.clock import parse_time, to_sort_time
from skillcore.db import idempotency as idem
from skillcore.db.dynamo import Db
from skillcore.db.errors import ConditionFailed, TransactionFailed
from skillcore.db.transact import Op

CALL = "call#"
RECORD_TTL = timedelta(days=1)
PENDING = "pending"
DONE = "done"
SCHEME = idem.Scheme("call", payload=("toolName", "argumentsDigest"), response="body")


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

    def same_request(self, tool_name: str, arguments_digest: str) -> bool:
        """A retry of this call (True), or its clientCallId reused for another tool or other arguments."""
        return idem.Record(SCHEME, {"toolName": self.tool_name, "argumentsDigest": self.arguments_digest}) \
            .same_payload(payload(tool_name, arguments_digest))


def payload(tool_name: str, arguments_digest: str) -> dict[str, str]:
    return {"toolName": tool_name, "argumentsDigest": arguments_digest}


def call_sort_key(endpoint_id: str, client_call_id: str) -> str:
    return f"{CALL}{endpoint_id}#{client_call_id}"


def call_slot(db: Db, user_id: str, endpoint_id: str, client_call_id: str) -> idem.Slot:
    return idem.Slot(SCHEME, db.tables.hosted_endpoints, {"pk": user_id, "sk": call_sort_key(endpoint_id, client_call_id)})


def is_call_item(item: dict[str, Any]) -> bool:
    return str(item.get("sk", "")).startswith(CALL)


def record_from_item(item: dict[str, Any]) -> CallRecord:
    record = idem.Record(SCHEME, item)
    return CallRecord(
        user_id=item["pk"], endpoint_id=item["endpointId"], client_call_id=item["clientCallId"],
        call_id=item["callId"], tool_name=item["toolName"], arguments_digest=item["argumentsDigest"],
        status=item["status"], claimed_at=parse_time(item["claimedAt"]),
        http_status=int(item["httpStatus"]) if item.get("httpStatus") is not None else None,
        body=record.response,
    )


def get_call(db: Db, user_id: str, endpoint_id: str, client_call_id: str) -> CallRecord | None:
    found = idem.read(db, call_slot(db, user_id, endpoint_id, client_call_id))
    return record_from_item(found.item) if found else None


def _slot(db: Db, record: CallRecord) -> idem.Slot:
    return call_slot(db, record.user_id, record.endpoint_id, record.client_call_id)


def _attributes(record: CallRecord, status: str, http_status: int | None = None,
                body: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "endpointId": record.endpoint_id, "clientCallId": record.client_call_id, "callId": record.call_id,
        "status": status, "claimedAt": to_sort_time(record.claimed_at),
        "expiresTtl": int((record.claimed_at + RECORD_TTL).timestamp()),
        "httpStatus": http_status, "body": idem.encode_response(body) if body is not None else None,
    }


def claim_op(db: Db, record: CallRecord) -> Op:
    """The record, pending, conditioned on no record under its key (named "call" in the claim's transaction)."""
    return idem.claim_op(_slot(db, record), payload(record.tool_name, record.arguments_digest),
                         _attributes(record, PENDING))


def lost_call(error: TransactionFailed | ConditionFailed, db: Db, record: CallRecord) -> CallRecord | None:
    """The record this claim lost to, from the failed condition's ALL_OLD (read again when the old item did not
    come back); None when the claim did not lose (another operation failed)."""
    lost = idem.lost_claim(error, _slot(db, record))
    if lost is None:
        return None
    if "callId" not in lost.item:
        return get_call(db, record.user_id, record.endpoint_id, record.client_call_id)
    return record_from_item(lost.item)


def completed_item(db: Db, record: CallRecord, http_status: int, body: dict[str, Any]) -> dict[str, Any]:
    """The record done, whole, for an unconditional Put: only the caller that won its claim completes it."""
    return idem.completed_item(_slot(db, record), payload(record.tool_name, record.arguments_digest),
                               _attributes(record, DONE, http_status, body))
