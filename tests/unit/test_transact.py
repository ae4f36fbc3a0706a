"""db/transact.py against a real DynamoDB client whose transport is botocore's Stubber.

The client validates every request against the service model and the Stubber checks the exact parameters,
so these tests hold the helper to the wire: the reasons of a cancelled transaction are read by operation
(a failure of the 3rd operation is reported under the 3rd operation's name), the old item (ALL_OLD) comes
back deserialised, and a transaction another one keeps cancelling is retried a bounded number of times
with jitter, then answered 409 `concurrent_update`. db/dynamo.py's `batch_put` too: one BatchWriteItem over
several tables, the unprocessed items (and only those) sent again after a growing pause, and a StoreError when
some are still unprocessed after the last attempt.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError
from botocore.stub import Stubber

from skillcore.db.dynamo import BATCH_PUT_ATTEMPTS, Db, batch_put
from skillcore.db.errors import (
    ConditionFailed,
    StoreError,
    StoreUnavailable,
    TransactionCanceled,
    TransactionFailed,
    TransactionThrottled,
)
from skillcore.db.transact import Backoff, Op, transact, write
from skillcore.errors import ConcurrentUpdate
from skillcore.settings import Settings

TABLE = "t"



def put(pk: str, *, conditional: bool = True) -> dict[str, Any]:
    params: dict[str, Any] = {"TableName": TABLE, "Item": {"pk": {"S": pk}}}
    if conditional:
        params |= {"ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"}}
    return {"Put": params}


def asked_old(request: dict[str, Any]) -> dict[str, Any]:
    ((kind, params),) = request.items()
    return {kind: {**params, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}


OPS = [Op("turn", put("a")), Op("message", put("b")), Op("quota", put("c"))]
WIRE = [asked_old(op.request) for op in OPS]


def cancelled(stub: Stubber, reasons: list[dict[str, Any]], items: list[dict[str, Any]] = WIRE) -> None:
    stub.add_client_error(
        "transact_write_items", service_error_code="TransactionCanceledException",
        service_message="Transaction cancelled", modeled_fields={"CancellationReasons": reasons},
        expected_params={"TransactItems": items},
    )


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class BoundsRng:
    """Records the bounds each jittered delay is drawn from and answers their midpoint."""

    def __init__(self) -> None:
        self.bounds: list[tuple[float, float]] = []

    def uniform(self, low: float, high: float) -> float:
        self.bounds.append((low, high))
        return (low + high) / 2


def test_a_failure_of_the_third_operation_is_reported_under_its_name_with_the_old_item(
    db: Db, stub: Stubber
) -> None:
    cancelled(stub, [{"Code": "None"}, {"Code": "None"}, {
        "Code": "ConditionalCheckFailed", "Message": "The conditional request failed",
        "Item": {"pk": {"S": "c"}, "used": {"N": "5"}, "tags": {"SS": ["x", "y"]}},
    }])
    with pytest.raises(TransactionFailed) as caught:
        transact(db, OPS, sleep=Sleeps())
    failed = caught.value
    assert failed.names == ("quota",)
    quota = failed.failed("quota")
    assert quota is not None and quota.index == 2
    assert quota.old == {"pk": "c", "used": 5, "tags": ["x", "y"]}
    assert failed.failed("turn") is None and failed.failed("message") is None


def test_several_failures_keep_operation_order_and_each_its_own_item(db: Db, stub: Stubber) -> None:
    cancelled(stub, [
        {"Code": "ConditionalCheckFailed", "Item": {"pk": {"S": "a"}}},
        {"Code": "None"},
        {"Code": "ConditionalCheckFailed", "Item": {"pk": {"S": "c"}}},
    ])
    with pytest.raises(TransactionFailed) as caught:
        transact(db, OPS, sleep=Sleeps())
    assert caught.value.names == ("turn", "quota")
    assert [f.old for f in caught.value.failures] == [{"pk": "a"}, {"pk": "c"}]


def test_all_old_is_asked_for_conditional_operations_only(db: Db, stub: Stubber) -> None:
    ops = [Op("audit", put("a", conditional=False)), Op("job", put("b"))]
    stub.add_response("transact_write_items", {}, expected_params={
        "TransactItems": [put("a", conditional=False), asked_old(put("b"))],
    })
    transact(db, ops)


def test_a_transaction_conflict_is_retried_with_jitter_and_then_commits(db: Db, stub: Stubber) -> None:
    cancelled(stub, [{"Code": "None"}, {"Code": "TransactionConflict"}, {"Code": "None"}])
    stub.add_response("transact_write_items", {}, expected_params={"TransactItems": WIRE})
    sleeps, rng = Sleeps(), BoundsRng()
    transact(db, OPS, sleep=sleeps, rng=rng, backoff=Backoff(attempts=3, base_s=0.02, cap_s=0.2))
    assert rng.bounds == [(0, 0.02)]
    assert sleeps.delays == [0.01]


def test_conflicts_are_retried_a_bounded_number_of_times_then_answer_409_concurrent_update(
    db: Db, stub: Stubber
) -> None:
    for _ in range(4):
        cancelled(stub, [{"Code": "TransactionConflict"}, {"Code": "None"}, {"Code": "None"}])
    sleeps, rng = Sleeps(), BoundsRng()
    with pytest.raises(ConcurrentUpdate) as caught:
        transact(db, OPS, sleep=sleeps, rng=rng, backoff=Backoff(attempts=4, base_s=0.05, cap_s=0.15))
    # Full jitter over a doubling window, capped; one sleep between each of the 4 attempts.
    assert rng.bounds == [(0, 0.05), (0, 0.1), (0, 0.15)]
    assert len(sleeps.delays) == 3
    assert caught.value.code == "concurrent_update"
    assert caught.value.status == 409


def test_real_jitter_stays_inside_the_window(db: Db, stub: Stubber) -> None:
    for _ in range(3):
        cancelled(stub, [{"Code": "TransactionConflict"}, {"Code": "None"}, {"Code": "None"}])
    sleeps = Sleeps()
    with pytest.raises(ConcurrentUpdate):
        transact(db, OPS, sleep=sleeps, backoff=Backoff(attempts=3, base_s=0.02, cap_s=0.2))
    assert len(sleeps.delays) == 2
    assert 0 <= sleeps.delays[0] <= 0.02 and 0 <= sleeps.delays[1] <= 0.04


def test_a_transaction_still_throttled_after_its_retries_is_unavailable(db: Db, stub: Stubber) -> None:
    for _ in range(3):
        cancelled(stub, [{"Code": "ThrottlingError"}, {"Code": "None"}, {"Code": "None"}])
    sleeps = Sleeps()
    with pytest.raises(TransactionThrottled) as caught:
        transact(db, OPS, sleep=sleeps, backoff=Backoff(attempts=3, base_s=0.02, cap_s=0.2))
    # both a cancellation (its reasons) and transient: a request answers it 503 store_unavailable
    assert isinstance(caught.value, TransactionCanceled) and isinstance(caught.value, StoreUnavailable)
    assert [r.code for r in caught.value.reasons] == ["ThrottlingError", "None", "None"]
    assert len(sleeps.delays) == 2


def test_a_condition_failure_is_never_retried_even_beside_a_conflict(db: Db, stub: Stubber) -> None:
    cancelled(stub, [{"Code": "TransactionConflict"}, {"Code": "ConditionalCheckFailed"}, {"Code": "None"}])
    sleeps = Sleeps()
    with pytest.raises(TransactionFailed) as caught:
        transact(db, OPS, sleep=sleeps)
    assert caught.value.names == ("message",) and sleeps.delays == []


def test_a_malformed_transaction_surfaces_at_once(db: Db, stub: Stubber) -> None:
    cancelled(stub, [{"Code": "ValidationError", "Message": "bad"}, {"Code": "None"}, {"Code": "None"}])
    sleeps = Sleeps()
    with pytest.raises(TransactionCanceled) as caught:
        transact(db, OPS, sleep=sleeps)
    assert not isinstance(caught.value, TransactionFailed) and sleeps.delays == []
    assert [r.code for r in caught.value.reasons] == ["ValidationError", "None", "None"]


def test_a_single_conditional_write_names_its_operation_and_carries_the_old_item(db: Db, stub: Stubber) -> None:
    stub.add_client_error(
        "put_item", service_error_code="ConditionalCheckFailedException", service_message="failed",
        modeled_fields={"Item": {"pk": {"S": "a"}, "revision": {"N": "3"}}},
        expected_params={**asked_old(put("a"))["Put"]},
    )
    with pytest.raises(ConditionFailed) as caught:
        write(db, Op("automation_job", put("a")))
    assert caught.value.operation == "automation_job"
    assert caught.value.old == {"pk": "a", "revision": 3}


def test_a_single_write_returns_the_new_item_when_asked(db: Db, stub: Stubber) -> None:
    stub.add_response("update_item", {"Attributes": {"pk": {"S": "a"}, "n": {"N": "2"}}}, expected_params={
        "TableName": TABLE, "Key": {"pk": {"S": "a"}}, "UpdateExpression": "ADD #n :one",
        "ConditionExpression": "attribute_exists(#pk)", "ExpressionAttributeNames": {"#n": "n", "#pk": "pk"},
        "ExpressionAttributeValues": {":one": {"N": "1"}}, "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        "ReturnValues": "ALL_NEW",
    })
    after = write(db, Op("counter", {"Update": {
        "TableName": TABLE, "Key": {"pk": {"S": "a"}}, "UpdateExpression": "ADD #n :one",
        "ConditionExpression": "attribute_exists(#pk)", "ExpressionAttributeNames": {"#n": "n", "#pk": "pk"},
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }}), return_values="ALL_NEW")
    assert after == {"pk": "a", "n": 2}


def test_a_single_write_meeting_a_transaction_is_retried_then_concurrent_update(db: Db, stub: Stubber) -> None:
    for _ in range(2):
        stub.add_client_error("put_item", service_error_code="TransactionConflictException", service_message="busy")
    sleeps = Sleeps()
    with pytest.raises(ConcurrentUpdate):
        write(db, Op("job", put("a")), sleep=sleeps, backoff=Backoff(attempts=2))
    assert len(sleeps.delays) == 1


def test_throttling_and_network_errors_are_store_unavailable_and_others_plain_store_errors(
    db: Db, stub: Stubber, raw: Any
) -> None:
    stub.add_client_error("get_item", service_error_code="ProvisionedThroughputExceededException",
                          service_message="slow down")
    with pytest.raises(StoreUnavailable) as throttled:
        db.client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})
    assert throttled.value.code == "ProvisionedThroughputExceededException"
    assert throttled.value.operation == "get_item"

    stub.add_client_error("get_item", service_error_code="InternalServerError", http_status_code=500)
    with pytest.raises(StoreUnavailable):
        db.client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})

    stub.add_client_error("query", service_error_code="ValidationException", service_message="bad key")
    with pytest.raises(StoreError) as invalid:
        db.client.query(TableName=TABLE, KeyConditionExpression="#pk = :pk",
                        ExpressionAttributeNames={"#pk": "pk"}, ExpressionAttributeValues={":pk": {"S": "a"}})
    assert type(invalid.value) is StoreError and invalid.value.code == "ValidationException"

    def refuse(**_: Any) -> None:
        raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1")

    raw.meta.events.register_first("before-send.dynamodb.GetItem", refuse)
    stub.deactivate()
    try:
        with pytest.raises(StoreUnavailable) as unreachable:
            db.client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})
    finally:
        stub.activate()
    assert unreachable.value.code == "EndpointConnectionError"


def test_the_db_wraps_its_client_once_and_passes_meta_through(raw: Any) -> None:
    db = Db(client=raw, tables=Settings.from_env({}).tables)
    again = Db(client=db.client, tables=db.tables)
    assert again.client is db.client
    assert db.client.meta is raw.meta  # the bench's request counter hooks meta.events


# ---------------------------------------------------------------- batch_put (db/dynamo.py)


def _item(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": "x"}}


def _puts(**tables: list[str]) -> dict[str, Any]:
    return {table: [{"PutRequest": {"Item": _item(pk)}} for pk in pks] for table, pks in tables.items()}


def test_batch_put_is_one_request_over_two_tables(db: Db, stub: Stubber) -> None:
    stub.add_response("batch_write_item", {}, {"RequestItems": _puts(calls=["a"], audit=["b"])})
    pauses: list[float] = []
    batch_put(db, {"calls": [_item("a")], "audit": [_item("b")], "unused": []}, sleep=pauses.append)
    assert pauses == []


def test_batch_put_sends_only_the_unprocessed_items_again(db: Db, stub: Stubber) -> None:
    stub.add_response("batch_write_item", {"UnprocessedItems": _puts(audit=["b"])},
                      {"RequestItems": _puts(calls=["a"], audit=["b"])})
    stub.add_response("batch_write_item", {"UnprocessedItems": {}}, {"RequestItems": _puts(audit=["b"])})
    pauses: list[float] = []
    batch_put(db, {"calls": [_item("a")], "audit": [_item("b")]}, sleep=pauses.append)
    assert pauses == [0.02]


def test_batch_put_raises_when_items_stay_unprocessed(db: Db, stub: Stubber) -> None:
    for _ in range(BATCH_PUT_ATTEMPTS):
        stub.add_response("batch_write_item", {"UnprocessedItems": _puts(audit=["b"])},
                          {"RequestItems": _puts(audit=["b"])})
    pauses: list[float] = []
    with pytest.raises(StoreUnavailable):
        batch_put(db, {"audit": [_item("b")]}, sleep=pauses.append)
    assert pauses == [0.02, 0.04, 0.08, 0.16]
