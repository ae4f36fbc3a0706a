"""The local SQS stand-in's at-least-once rules, the shard task's wire form, and the model throttle."""

from __future__ import annotations

import random

import msgspec
import pytest

from skillcore.automation.throttle import RateLimiter, ThrottledModel
from skillcore.db.dynamo import ShardLayout
from skillcore.model.port import ModelError
from skillcore.work.dispatch import ShardTask
from skillcore_local.sqs import LocalQueue


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_unacknowledged_message_comes_back_after_the_visibility_timeout() -> None:
    clock = Clock()
    queue = LocalQueue(visibility_timeout=30, max_receives=3, clock=clock)
    queue.send(["a"])
    (first,) = queue.receive(10)
    assert queue.receive(10) == [] and queue.pending() == (0, 1)
    clock.now = 29.9
    assert queue.receive(10) == []
    clock.now = 30
    (again,) = queue.receive(10)
    assert again is first and again.receives == 2
    queue.delete(again, again.receipt)
    assert queue.pending() == (0, 0)


def test_a_stale_receipt_does_not_delete_a_redelivered_message() -> None:
    clock = Clock()
    queue = LocalQueue(visibility_timeout=1, clock=clock)
    queue.send(["a"])
    (message,) = queue.receive(1)
    old = message.receipt
    clock.now = 1
    queue.receive(1)
    queue.delete(message, old)
    assert queue.pending() == (0, 1)


def test_after_max_receives_a_message_moves_to_the_dead_letter_queue() -> None:
    clock = Clock()
    queue = LocalQueue(visibility_timeout=1, max_receives=3, clock=clock)
    queue.send(["poison", "fine"])
    for step in range(3):
        got = queue.receive(10)
        assert {m.body for m in got} == {"poison", "fine"} if step == 0 else {m.body for m in got} == {"poison"}
        for m in got:
            if m.body == "fine":
                queue.delete(m, m.receipt)
        clock.now += 1
    assert queue.receive(10) == []
    assert [m.body for m in queue.dead] == ["poison"]


def test_duplicates_deliver_each_message_twice() -> None:
    queue = LocalQueue()
    queue.duplicates = True
    queue.send(["a", "b"])
    assert sorted(m.body for m in queue.receive(10)) == ["a", "a", "b", "b"]


def test_a_shard_task_round_trips_and_anything_else_is_refused() -> None:
    task = ShardTask(kind="automation", shard=7, now="2031-03-04T05:00:00.000Z", hop=2)
    assert ShardTask.decode(task.encode()) == task
    for body in ("", "{}", "not json", '{"kind":"x","shard":1,"now":"2031-03-04T05:00:00Z"}',
                 '{"kind":"background","shard":-1,"now":"2031-03-04T05:00:00Z"}',
                 '{"kind":"background","shard":1,"now":"yesterday"}',
                 '{"kind":"background","shard":1,"now":"2031-03-04T05:00:00Z","extra":1}'):
        with pytest.raises((msgspec.DecodeError, msgspec.ValidationError, ValueError)):
            ShardTask.decode(body)


def test_readers_walk_every_shard_an_item_can_be_under() -> None:
    assert ShardLayout().read == 8
    assert ShardLayout(write=64, previous=8).read == 64
    assert ShardLayout(write=16, previous=64).read == 64  # shrinking keeps the old shards read


def test_the_rate_limiter_refills_at_its_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(120, burst=2, clock=clock)  # 2 per second
    assert [limiter.try_acquire() for _ in range(3)] == [True, True, False]
    clock.now = 0.5
    assert limiter.try_acquire() and not limiter.try_acquire()


class _Model:
    def __init__(self, throttled: int) -> None:
        self.throttled = throttled
        self.calls = 0

    def converse(self, request):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls <= self.throttled:
            raise ModelError("throttled")
        return "answer"


def _throttled(model: _Model, limiter: RateLimiter | None, clock: Clock, wait_ms: int) -> ThrottledModel:
    def sleep(seconds: float) -> None:
        assert seconds >= 0
        clock.now += seconds

    return ThrottledModel(model, limiter, max_wait_ms=wait_ms, rng=random.Random(1), sleep=sleep, clock=clock)


def test_a_throttled_call_is_retried_with_backoff_until_it_gets_through() -> None:
    clock = Clock()
    model = _Model(throttled=3)
    wrapped = _throttled(model, None, clock, 30_000)
    assert wrapped.converse(None) == "answer"  # type: ignore[arg-type]
    assert model.calls == 4 and wrapped.waits == 3 and clock.now > 0


def test_the_rate_limit_makes_calls_wait_and_a_spent_wait_is_a_transient_error() -> None:
    clock = Clock()
    limiter = RateLimiter(60, burst=1, clock=clock)  # one call a second
    wrapped = _throttled(_Model(throttled=0), limiter, clock, 30_000)
    for _ in range(5):
        wrapped.converse(None)  # type: ignore[arg-type]
    assert clock.now >= 4  # five calls at one a second
    stuck = _throttled(_Model(throttled=10**6), None, clock, 1_000)
    with pytest.raises(ModelError, match="throttled"):
        stuck.converse(None)  # type: ignore[arg-type]


def test_a_scan_with_nothing_due_sends_nothing(monkeypatch) -> None:
    from datetime import UTC, datetime

    from skillcore.work import dispatch

    class Unreachable:
        def send(self, bodies):
            raise AssertionError(f"sent {bodies!r}")

    class Layout:
        shards = ShardLayout()

    monkeypatch.setattr(dispatch, "find_work", lambda shards, sources, now: [])
    summary = dispatch.dispatch(Layout().shards.read, (), Unreachable(), datetime(2026, 12, 4, tzinfo=UTC))  # type: ignore[arg-type]
    assert (summary.messages, summary.shards) == (0, ShardLayout().read)
