"""Idempotency records: a request's key claimed once, in the same write as the data it guards.

Three features keep one record per idempotency key: the chat turn (conversations/turn_store.py, key =
conversation + clientMessageId), the tool execution (tools/execution_store.py, key = the execution's digest) and
the hosted call (hosted/call_store.py, key = user + endpoint + clientCallId). Each record holds the request's
payload fingerprint (the attributes named by its `Scheme.payload`), so a retry can be told from a reuse of the
key for another request, and, where the feature keeps one, its answer as JSON text (`Scheme.response`). What
else a record holds (status, timestamps, TTL) is the feature's.

    slot = Slot(scheme, table, {"pk": ..., "sk": ...})
    claim_op(slot, payload, attributes)     the Put, conditioned on no record under the key: a named `Op` to
                                            compose with the data's own writes in one transaction
    claim(db, slot, payload, attributes)    the same Put alone (1 PutItem): None when won, else the record
    lost_claim(error, slot)                 the record a lost claim met, from the failed condition's ALL_OLD:
                                            the one place a claim's ConditionalCheckFailed is read
    Record.same_payload(payload)            the payload check: a retry, or the key reused for another request
    complete_op(slot, set_, remove)         an unconditional Update of the claimed record (its caller won it)
    completed_item(slot, payload, attrs)    the whole record, for an unconditional Put (a BatchWriteItem)
    read(db, slot)                          a consistent GetItem (waiting for a concurrent twin)
    Record.response                         the stored answer, to replay

The claim follows the house rule for conditional writes (db/transact.py): the condition names its attribute
(`attribute_not_exists(#pk)` with ExpressionAttributeNames) and asks for the item as it was
(ReturnValuesOnConditionCheckFailure=ALL_OLD), so a lost claim hands back the winner's record without a read.
The claim never overwrites: a record stays until its TTL, and the feature decides what a stored record means
(replay it, wait for it, refuse the reuse, or run again).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct

from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, key
from skillcore.db.errors import ConditionFailed, TransactionFailed
from skillcore.db.transact import Op, write

Payload = Mapping[str, str]  # attribute -> fingerprint value: {"textSha256": ...}, {"toolName": ..., ...}


class Scheme(Struct, frozen=True):
    """How one feature keeps its records: the claim's operation name (in its transaction, and in a lost
    condition), the attributes that fingerprint a request, the attribute holding the answer (JSON text)."""

    name: str
    payload: tuple[str, ...]
    response: str | None = None


class Slot(Struct, frozen=True):
    """Where one key's record lives: its table and its key's attributes (plain values)."""

    scheme: Scheme
    table: str
    key: dict[str, str]

    @property
    def item_key(self) -> dict[str, Any]:
        """The key in attribute-value form, for GetItem, BatchGetItem and Update."""
        return key(**self.key)


class Record(Struct, frozen=True):
    """A stored record as read (deserialised), with the scheme it was written under."""

    scheme: Scheme
    item: dict[str, Any]

    def payload(self) -> dict[str, str | None]:
        return {name: self.item.get(name) for name in self.scheme.payload}

    def same_payload(self, payload: Payload) -> bool:
        """True for a retry of the request that claimed the key; False when the key is reused for another one."""
        return all(self.item.get(name) == payload.get(name) for name in self.scheme.payload)

    @property
    def response(self) -> dict[str, Any] | None:
        """The stored answer, None while there is none (a claim not completed yet, or a scheme without one)."""
        raw = self.item.get(self.scheme.response) if self.scheme.response else None
        return json.loads(raw) if raw else None


def fingerprint(text: str) -> str:
    """The SHA-256 (hex) of a text: the usual payload fingerprint."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def encode_response(body: Mapping[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def record_of(scheme: Scheme, item: dict[str, Any] | None) -> Record | None:
    return Record(scheme, item) if item else None


def _check_payload(slot: Slot, payload: Payload) -> None:
    if set(payload) != set(slot.scheme.payload):
        raise ValueError(f"payload of {slot.scheme.name} must be {slot.scheme.payload}, not {tuple(payload)}")


def _whole(slot: Slot, payload: Payload, attributes: Mapping[str, Any]) -> dict[str, Any]:
    _check_payload(slot, payload)
    clash = (set(attributes) & set(payload)) | (set(attributes) & set(slot.key))
    if clash:
        raise ValueError(f"attributes of {slot.scheme.name} repeat the key or the payload: {sorted(clash)}")
    return to_item({**slot.key, **payload, **attributes})


def claim_op(slot: Slot, payload: Payload, attributes: Mapping[str, Any]) -> Op:
    """The record's Put, conditioned on no record under its key, named after the scheme."""
    (partition, *_rest) = slot.key
    return Op(slot.scheme.name, {"Put": {
        "TableName": slot.table, "Item": _whole(slot, payload, attributes),
        "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": partition},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }})


def lost_claim(error: TransactionFailed | ConditionFailed, slot: Slot) -> Record | None:
    """The record that was there when this slot's claim lost its condition; None when the error is not that
    (another operation of the transaction failed). A lost claim whose old item did not come back (ALL_OLD is
    not promised on every path) is a record known only by its key: `item` holds the key alone."""
    if isinstance(error, TransactionFailed):
        failure = error.failed(slot.scheme.name)
        if failure is None:
            return None
        old = failure.old
    elif error.operation == slot.scheme.name:
        old = error.old
    else:
        return None
    return Record(slot.scheme, old or dict(slot.key))


def claim(db: Db, slot: Slot, payload: Payload, attributes: Mapping[str, Any]) -> Record | None:
    """The claim written alone (1 PutItem): None when this caller won the key, else the record already there."""
    try:
        write(db, claim_op(slot, payload, attributes))
    except ConditionFailed as error:
        lost = lost_claim(error, slot)
        if lost is None:
            raise
        return lost
    return None


def complete_op(slot: Slot, set_: Mapping[str, Any], remove: Sequence[str] = ()) -> Op:
    """An unconditional Update of the claimed record: the claim made its caller the record's only writer."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    sets: list[str] = []
    for i, (name, value) in enumerate(set_.items()):
        names[f"#s{i}"] = name
        values[f":s{i}"] = to_value(value)
        sets.append(f"#s{i} = :s{i}")
    removes: list[str] = []
    for i, name in enumerate(remove):
        names[f"#r{i}"] = name
        removes.append(f"#r{i}")
    expression = " ".join(part for part in (
        f"SET {', '.join(sets)}" if sets else "", f"REMOVE {', '.join(removes)}" if removes else "") if part)
    if not expression:
        raise ValueError("a completion changes something")
    request: dict[str, Any] = {"TableName": slot.table, "Key": slot.item_key, "UpdateExpression": expression,
                               "ExpressionAttributeNames": names}
    if values:
        request["ExpressionAttributeValues"] = values
    return Op(slot.scheme.name, {"Update": request})


def completed_item(slot: Slot, payload: Payload, attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The whole record (attribute-value form) for an unconditional Put, such as one of a BatchWriteItem."""
    return _whole(slot, payload, attributes)


def read(db: Db, slot: Slot) -> Record | None:
    """The record under the slot's key (1 consistent GetItem), or None."""
    found = db.client.get_item(TableName=slot.table, Key=slot.item_key, ConsistentRead=True)
    return record_of(slot.scheme, from_item(found.get("Item")))
