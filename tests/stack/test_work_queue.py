"""The scan path's queue over real HTTP: `POST /_local/scan` dispatches shard tasks, the local SQS stand-in
(skillcore_local/sqs.py) delivers them to WorkerFunction at least once. A message is a hint and the claim
the truth: duplicated and reordered deliveries, a worker that crashes mid-batch and a poison message change
nothing about what runs (each job once, one message each), and the poison message ends in the DLQ."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from skillcore import faults
from skillcore_local.sqs import EventSource, _Message

from .conftest import StackClient
from .test_background_http import Caller, arm, due, parse, scan

pytestmark = pytest.mark.stack


@pytest.fixture
def work(stack: StackClient) -> Iterator[EventSource]:
    gateway = stack.local.gateway
    assert gateway is not None
    source = gateway.work
    yield source
    source.queue.duplicates = source.queue.shuffle = False
    source.queue.dead.clear()


@pytest.fixture
def bob(stack: StackClient) -> Iterator[Caller]:
    faults.clear()
    caller = Caller(stack, "bob-queue")
    yield caller
    faults.clear()
    for job in caller.jobs():
        if job["status"] in ("scheduled", "retrying"):
            caller.call("POST", f"/rpc/skills/background-jobs/{job['jobId']}/cancel")


def jobs_for(caller: Caller, count: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    agent = caller.agent()
    caller.grant()
    return agent, [caller.job(agent, note=f"check in {i}") for i in range(count)]


def delivered_once(caller: Caller, agent: dict[str, Any], jobs: list[dict[str, Any]]) -> None:
    ids = [m["messageId"] for m in caller.messages(agent["defaultConversationId"])]
    for job in jobs:
        got = caller.get_job(job["jobId"])
        assert got["status"] == "succeeded" and got["attempts"] == 1, got
        assert ids.count(job["jobId"]) == 1


def test_duplicate_and_reordered_deliveries_run_each_job_once(bob: Caller, stack: StackClient,
                                                              work: EventSource) -> None:
    agent, jobs = jobs_for(bob, 8)
    work.queue.duplicates = True  # every shard task is delivered twice
    work.queue.shuffle = True  # in random order
    summary = scan(stack, max(due(j) for j in jobs))
    assert summary["messages"] >= 1
    delivered_once(bob, agent, jobs)
    # A second delivery of a drained shard's task finds nothing to claim.
    assert summary["claimed"] >= len(jobs)


def test_a_poison_message_lands_in_the_dlq_and_blocks_nothing(bob: Caller, stack: StackClient,
                                                              work: EventSource) -> None:
    agent, jobs = jobs_for(bob, 3)
    work.queue.send(["this is not a shard task", json.dumps({"kind": "background", "shard": -1, "now": "x"})])
    scan(stack, max(due(j) for j in jobs))
    delivered_once(bob, agent, jobs)
    dead = sorted(m.body for m in work.queue.dead)
    assert "this is not a shard task" in dead and len(dead) == 2
    assert all(m.receives == work.queue.max_receives for m in work.queue.dead)
    assert work.queue.pending() == (0, 0)


def test_a_stale_message_does_nothing(bob: Caller, stack: StackClient, work: EventSource) -> None:
    agent, (job,) = jobs_for(bob, 1)
    at = due(job)
    # An hour-old hint for every shard as of the due time: dropped unread (the next scan dispatches again).
    old = int((time.time() - 3600) * 1000)
    for shard in range(64):
        message = _Message(json.dumps({"kind": "background", "shard": shard, "now": at.isoformat()}), time.monotonic())
        message.sent_ms = old
        with work.queue._lock:
            work.queue._messages.append(message)
    worked, crashes = work.drain()
    assert crashes == [] and worked["stale"] == 64 and worked["claimed"] == 0
    assert bob.get_job(job["jobId"])["status"] == "scheduled"
    scan(stack, at)
    delivered_once(bob, agent, [job])


def test_a_worker_crash_mid_batch_leaves_the_job_to_lease_recovery(bob: Caller, stack: StackClient,
                                                                     work: EventSource) -> None:
    agent, jobs = jobs_for(bob, 4)
    last = max(parse(j["nextAttemptAt"]) for j in jobs)
    scan(stack, min(parse(j["nextAttemptAt"]) for j in jobs) - timedelta(seconds=1))  # others' leftovers
    arm(stack, "background.before_side_effect", "crash")
    at = last + timedelta(seconds=1)
    status, body = stack.call("POST", "/_local/scan", body={"time": at.strftime("%Y-%m-%dT%H:%M:%SZ")})
    assert status == 500 and body["error"]["code"] == "internal"
    states = [bob.get_job(j["jobId"]) for j in jobs]
    crashed = [s for s in states if s["status"] == "running"]
    # The crashed batch was delivered again: every other job ran; the crashed one holds its lease.
    assert len(crashed) == 1 and crashed[0]["attempts"] == 1
    assert all(s["status"] == "succeeded" for s in states if s not in crashed)
    assert work.queue.pending() == (0, 0) and work.queue.dead == []
    scan(stack, at + timedelta(minutes=2, seconds=1))  # lease recovery: the job retries
    retry = bob.get_job(crashed[0]["jobId"])
    assert retry["status"] == "retrying", retry
    scan(stack, parse(retry["nextAttemptAt"]) + timedelta(seconds=1))
    ids = [m["messageId"] for m in bob.messages(agent["defaultConversationId"])]
    for job in jobs:
        assert bob.get_job(job["jobId"])["status"] == "succeeded"
        assert ids.count(job["jobId"]) == 1
