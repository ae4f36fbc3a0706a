"""The deployed work queue's sender (db/work_queue.SqsWorkQueue), on a real boto3 SQS client: botocore's
Stubber checks every SendMessageBatch request's shape and answers what SQS would (partial failures
included); moto's SQS takes a dispatch end to end."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from skillcore.db.errors import StoreError, StoreUnavailable
from skillcore.work.dispatch import ShardTask
from skillcore.work.sqs_queue import BATCH, MAX_BATCH_BYTES, SqsWorkQueue, batches

URL = "https://sqs.us-east-1.amazonaws.com/123456789012/skillcore-work"


def _client() -> Any:
    return boto3.client("sqs", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")


def _bodies(count: int) -> list[str]:
    return [ShardTask(kind="background", shard=i, now="2031-03-04T05:00:00.000Z").encode() for i in range(count)]


def _entries(bodies: list[str], first: int) -> list[dict[str, str]]:
    return [{"Id": str(first + i), "MessageBody": body} for i, body in enumerate(bodies)]


def _ok(ids: list[str]) -> dict[str, Any]:
    return {"Successful": [{"Id": i, "MessageId": f"m-{i}", "MD5OfMessageBody": "0" * 32} for i in ids], "Failed": []}


def _queue(stub_client: Any, sleeps: list[float]) -> SqsWorkQueue:
    return SqsWorkQueue(stub_client, URL, sleep=sleeps.append)


def test_twenty_three_tasks_go_in_batches_of_ten_with_the_task_as_body() -> None:
    client, sleeps = _client(), []
    bodies = _bodies(23)
    with Stubber(client) as stub:
        for start, end in ((0, 10), (10, 20), (20, 23)):
            # Stubber checks the request's parameters exactly (and against SQS's model).
            stub.add_response("send_message_batch", _ok([str(i) for i in range(start, end)]),
                              {"QueueUrl": URL, "Entries": _entries(bodies[start:end], start)})
        _queue(client, sleeps).send(bodies)
        stub.assert_no_pending_responses()
    assert sleeps == []
    assert ShardTask.decode(bodies[22]) == ShardTask(kind="background", shard=22, now="2031-03-04T05:00:00.000Z")


def test_a_batch_never_carries_more_than_256_kib_of_bodies() -> None:
    big = "x" * (100 * 1024)
    bodies = [big, big, big, "small", big]
    groups = batches(bodies)
    assert [[e["Id"] for e in g] for g in groups] == [["0", "1"], ["2", "3", "4"]]
    for group in groups:
        assert len(group) <= BATCH
        assert sum(len(e["MessageBody"].encode()) for e in group) <= MAX_BATCH_BYTES
    # Exactly the limit fits in one batch; one byte more does not.
    exact = ["a" * (MAX_BATCH_BYTES // 2)] * 2
    assert len(batches(exact)) == 1
    assert len(batches([*exact, "b"])) == 2
    with pytest.raises(StoreError) as refused:
        batches(["y" * (MAX_BATCH_BYTES + 1)])
    assert refused.value.code == "MessageTooLong"


def test_entries_sqs_refused_for_its_own_reasons_are_sent_again_and_only_they() -> None:
    client, sleeps = _client(), []
    bodies = _bodies(4)
    with Stubber(client) as stub:
        stub.add_response("send_message_batch", {
            "Successful": [{"Id": "0", "MessageId": "m0", "MD5OfMessageBody": "0" * 32},
                           {"Id": "2", "MessageId": "m2", "MD5OfMessageBody": "0" * 32}],
            "Failed": [{"Id": "1", "SenderFault": False, "Code": "InternalError"},
                       {"Id": "3", "SenderFault": False, "Code": "RequestThrottled"}],
        }, {"QueueUrl": URL, "Entries": _entries(bodies, 0)})
        stub.add_response("send_message_batch", {
            "Successful": [{"Id": "3", "MessageId": "m3", "MD5OfMessageBody": "0" * 32}],
            "Failed": [{"Id": "1", "SenderFault": False, "Code": "InternalError"}],
        }, {"QueueUrl": URL, "Entries": [_entries(bodies, 0)[1], _entries(bodies, 0)[3]]})
        stub.add_response("send_message_batch", _ok(["1"]), {"QueueUrl": URL, "Entries": [_entries(bodies, 0)[1]]})
        _queue(client, sleeps).send(bodies)
        stub.assert_no_pending_responses()
    assert sleeps == [0.05, 0.1]  # backoff between the attempts


def test_what_stays_refused_is_reported_after_every_batch_was_tried() -> None:
    client, sleeps = _client(), []
    bodies = _bodies(12)
    first, second = _entries(bodies[:10], 0), _entries(bodies[10:], 10)
    with Stubber(client) as stub:
        # Entry 4 is the request's fault (never retried); entry 7 keeps failing on SQS's side.
        stub.add_response("send_message_batch", {
            "Successful": [{"Id": e["Id"], "MessageId": "m", "MD5OfMessageBody": "0" * 32}
                           for e in first if e["Id"] not in {"4", "7"}],
            "Failed": [{"Id": "4", "SenderFault": True, "Code": "InvalidMessageContents"},
                       {"Id": "7", "SenderFault": False, "Code": "InternalError"}],
        }, {"QueueUrl": URL, "Entries": first})
        for _ in range(2):
            stub.add_response("send_message_batch", {
                "Successful": [], "Failed": [{"Id": "7", "SenderFault": False, "Code": "InternalError"}],
            }, {"QueueUrl": URL, "Entries": [first[7]]})
        stub.add_response("send_message_batch", _ok(["10", "11"]), {"QueueUrl": URL, "Entries": second})
        with pytest.raises(StoreError) as raised:
            _queue(client, sleeps).send(bodies)
        stub.assert_no_pending_responses()  # the second batch was still sent
    assert raised.value.code == "SendFailed"
    assert not isinstance(raised.value, StoreUnavailable)
    assert str(raised.value) == "2 of 12 messages not accepted (InternalError, InvalidMessageContents)"


def test_a_failed_request_is_a_transient_store_error() -> None:
    client = _client()
    with Stubber(client) as stub:
        stub.add_client_error("send_message_batch", service_error_code="AWS.SimpleQueueService.NonExistentQueue",
                              http_status_code=400)
        with pytest.raises(StoreUnavailable) as raised:
            _queue(client, []).send(_bodies(1))
    assert raised.value.operation == "send_message_batch"


def test_nothing_to_send_sends_nothing() -> None:
    client = _client()
    with Stubber(client) as stub:
        _queue(client, []).send([])
        stub.assert_no_pending_responses()


def test_every_task_arrives_once_on_a_real_sqs_api() -> None:
    with mock_aws():
        client = _client()
        url = client.create_queue(QueueName="skillcore-work")["QueueUrl"]
        bodies = _bodies(25)
        SqsWorkQueue(client, url).send(bodies)
        received: list[str] = []
        while True:
            page = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["SentTimestamp"])
            messages = page.get("Messages", [])
            if not messages:
                break
            for message in messages:
                assert int(message["Attributes"]["SentTimestamp"]) > 0
                received.append(message["Body"])
                client.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert sorted(received) == sorted(bodies)
    assert {json.loads(b)["shard"] for b in received} == set(range(25))
