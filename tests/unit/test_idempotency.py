"""db/idempotency.py against a real DynamoDB client whose transport is botocore's Stubber.

The Stubber checks the exact parameters, so the claim is held to the house rule on the wire: one Put of the
whole record (key, payload fingerprint, the feature's attributes) conditioned on `attribute_not_exists(#pk)` with
ExpressionAttributeNames and ReturnValuesOnConditionCheckFailure=ALL_OLD; a lost claim hands back the record as it
was, from a lone write and from a transaction alike, and is told apart from another operation's failure; the
payload check tells a retry from a reuse of the key; the completion is one unconditional Update or whole Put.
"""

from __future__ import annotations

import pytest
from botocore.stub import Stubber

from skillcore.db import idempotency as idem
from skillcore.db.dynamo import Db
from skillcore.db.errors import ConditionFailed, TransactionFailed
from skillcore.db.transact import Op, transact

TABLE = "t"
SCHEME = idem.Scheme("call", payload=("toolName", "argumentsDigest"), response="body")
SLOT = idem.Slot(SCHEME, TABLE, {"pk": "u1", "sk": "call#e1#c1"})
PAYLOAD = {"toolName": "add", "argumentsDigest": "d1"}
ITEM = {"pk": {"S": "u1"}, "sk": {"S": "call#e1#c1"}, "toolName": {"S": "add"}, "argumentsDigest": {"S": "d1"},
        "status": {"S": "pending"}}
CLAIM = {"Put": {"TableName": TABLE, "Item": ITEM, "ConditionExpression": "attribute_not_exists(#pk)",
                 "ExpressionAttributeNames": {"#pk": "pk"}, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}



def test_the_claim_is_a_named_put_conditioned_on_no_record_asking_for_the_old_one() -> None:
    op = idem.claim_op(SLOT, PAYLOAD, {"status": "pending"})
    assert op == Op("call", CLAIM)


def test_the_claim_names_the_partition_attribute_of_a_key_without_sort_key() -> None:
    slot = idem.Slot(idem.Scheme("tool_execution", payload=("inputSha256",)), TABLE, {"pk": "k"})
    put = idem.claim_op(slot, {"inputSha256": "x"}, {"status": "running"}).request["Put"]
    assert put["ExpressionAttributeNames"] == {"#pk": "pk"}
    assert put["Item"] == {"pk": {"S": "k"}, "inputSha256": {"S": "x"}, "status": {"S": "running"}}


def test_a_payload_that_is_not_the_schemes_or_attributes_repeating_it_are_refused() -> None:
    with pytest.raises(ValueError):
        idem.claim_op(SLOT, {"toolName": "add"}, {})
    with pytest.raises(ValueError):
        idem.claim_op(SLOT, PAYLOAD, {"toolName": "other"})
    with pytest.raises(ValueError):
        idem.claim_op(SLOT, PAYLOAD, {"sk": "other"})


def test_a_lone_claim_won_answers_none(db: Db, stub: Stubber) -> None:
    stub.add_response("put_item", {}, expected_params=CLAIM["Put"])
    assert idem.claim(db, SLOT, PAYLOAD, {"status": "pending"}) is None


def test_a_lone_claim_lost_answers_the_record_as_it_was_without_a_read(db: Db, stub: Stubber) -> None:
    old = {**ITEM, "argumentsDigest": {"S": "d2"}, "status": {"S": "done"}, "body": {"S": '{"callId":"x"}'}}
    stub.add_client_error("put_item", service_error_code="ConditionalCheckFailedException",
                          modeled_fields={"Item": old}, expected_params=CLAIM["Put"])
    record = idem.claim(db, SLOT, PAYLOAD, {"status": "pending"})
    assert record is not None
    assert record.item["status"] == "done" and record.response == {"callId": "x"}
    assert not record.same_payload(PAYLOAD)
    assert record.same_payload({"toolName": "add", "argumentsDigest": "d2"})


def test_a_claim_lost_in_a_transaction_is_read_from_its_named_failure(db: Db, stub: Stubber) -> None:
    audit = Op("audit", {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "a"}}}})
    stub.add_client_error(
        "transact_write_items", service_error_code="TransactionCanceledException",
        modeled_fields={"CancellationReasons": [
            {"Code": "ConditionalCheckFailed", "Item": ITEM}, {"Code": "None"}]},
        expected_params={"TransactItems": [CLAIM, audit.request]})
    with pytest.raises(TransactionFailed) as caught:
        transact(db, [idem.claim_op(SLOT, PAYLOAD, {"status": "pending"}), audit])
    record = idem.lost_claim(caught.value, SLOT)
    assert record is not None and record.same_payload(PAYLOAD) and record.response is None


def test_another_operations_failure_is_not_a_lost_claim(db: Db, stub: Stubber) -> None:
    other = Op("approval", {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "a"}},
                                    "ConditionExpression": "attribute_exists(#pk)",
                                    "ExpressionAttributeNames": {"#pk": "pk"}}})
    stub.add_client_error(
        "transact_write_items", service_error_code="TransactionCanceledException",
        modeled_fields={"CancellationReasons": [{"Code": "None"}, {"Code": "ConditionalCheckFailed"}]},
        expected_params={"TransactItems": [
            CLAIM, {"Put": {**other.request["Put"], "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}]})
    with pytest.raises(TransactionFailed) as caught:
        transact(db, [idem.claim_op(SLOT, PAYLOAD, {"status": "pending"}), other])
    assert idem.lost_claim(caught.value, SLOT) is None
    assert idem.lost_claim(ConditionFailed("x", operation="approval"), SLOT) is None


def test_a_lost_claim_without_its_old_item_is_known_by_its_key() -> None:
    record = idem.lost_claim(ConditionFailed("x", operation="call", old=None), SLOT)
    assert record is not None and record.item == {"pk": "u1", "sk": "call#e1#c1"}
    assert not record.same_payload(PAYLOAD)


def test_the_completion_is_an_unconditional_update_with_named_attributes() -> None:
    op = idem.complete_op(SLOT, {"status": "done", "durationMs": 12}, remove=("errorCode",))
    assert op == Op("call", {"Update": {
        "TableName": TABLE, "Key": {"pk": {"S": "u1"}, "sk": {"S": "call#e1#c1"}},
        "UpdateExpression": "SET #s0 = :s0, #s1 = :s1 REMOVE #r0",
        "ExpressionAttributeNames": {"#s0": "status", "#s1": "durationMs", "#r0": "errorCode"},
        "ExpressionAttributeValues": {":s0": {"S": "done"}, ":s1": {"N": "12"}},
    }})
    with pytest.raises(ValueError):
        idem.complete_op(SLOT, {})


def test_the_completed_item_is_the_whole_record() -> None:
    item = idem.completed_item(SLOT, PAYLOAD, {"status": "done", "body": idem.encode_response({"a": "é"})})
    assert item == {**ITEM, "status": {"S": "done"}, "body": {"S": '{"a":"é"}'}}


def test_read_is_one_consistent_get(db: Db, stub: Stubber) -> None:
    key = {"pk": {"S": "u1"}, "sk": {"S": "call#e1#c1"}}
    stub.add_response("get_item", {"Item": {**ITEM, "body": {"S": "{}"}}},
                      expected_params={"TableName": TABLE, "Key": key, "ConsistentRead": True})
    stub.add_response("get_item", {}, expected_params={"TableName": TABLE, "Key": key, "ConsistentRead": True})
    found = idem.read(db, SLOT)
    assert found is not None and found.payload() == PAYLOAD and found.response == {}
    assert idem.read(db, SLOT) is None


def test_the_fingerprint_is_the_texts_sha256() -> None:
    assert idem.fingerprint("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
