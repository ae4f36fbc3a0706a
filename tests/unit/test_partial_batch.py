"""skillcore/work/batch.py: the worker's partial batch response (SQS ReportBatchItemFailures)."""

from collections.abc import Mapping
from typing import Any

import pytest

from skillcore.work.batch import partial_batch


def record(message_id: str, body: str) -> dict[str, Any]:
    return {"messageId": message_id, "body": body, "attributes": {"SentTimestamp": "1700000000000"}}


def test_only_the_records_that_raised_are_listed_in_order() -> None:
    seen: list[str] = []

    def handle(item: Mapping[str, Any]) -> None:
        seen.append(item["messageId"])
        if item["body"] == "poison":
            raise ValueError("not a shard task")

    event = {"Records": [record("a", "ok"), record("b", "poison"), record("c", "ok"), record("d", "poison")]}
    assert partial_batch(event, handle) == {"batchItemFailures": [{"itemIdentifier": "b"}, {"itemIdentifier": "d"}]}
    assert seen == ["a", "b", "c", "d"]  # a failure holds up none of the others


def test_a_batch_that_all_failed_is_answered_not_raised() -> None:
    def handle(item: Mapping[str, Any]) -> None:
        raise KeyError("SentTimestamp")

    event = {"Records": [record("a", "x"), record("b", "y")]}
    assert partial_batch(event, handle) == {"batchItemFailures": [{"itemIdentifier": "a"}, {"itemIdentifier": "b"}]}


def test_an_empty_or_successful_batch_lists_nothing() -> None:
    assert partial_batch({"Records": []}, lambda item: None) == {"batchItemFailures": []}
    assert partial_batch({"Records": [record("a", "x")]}, lambda item: None) == {"batchItemFailures": []}


def test_an_event_without_records_is_refused() -> None:
    with pytest.raises(ValueError, match="SQS event"):
        partial_batch({"detail": {}}, lambda item: None)


def test_a_base_exception_is_not_swallowed() -> None:
    def handle(item: Mapping[str, Any]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        partial_batch({"Records": [record("a", "x")]}, handle)
