"""Concurrent scanners against DynamoDB Local: real threads, one boto3 client each, racing to claim the same
due jobs. The conditional claim on id + revision + status must let exactly one of them run each job.

Each test builds its own copy of the template's tables (a fresh prefix) on the session's DynamoDB Local,
so nothing else due in the store can be claimed by these scans.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from skillcore.background import job_store
from skillcore.background.models import BackgroundJob
from skillcore.background.worker import Worker
from skillcore.chat.service import ChatDeps, post_message
from skillcore.clock import to_api_time
from skillcore.conversations.conversation_store import get_conversation
from skillcore.db.codec import from_item
from skillcore.db.dynamo import Db
from skillcore.executor.assembly import build_executor
from skillcore.model.offline import OfflineModel
from skillcore.skills.builtin import SKILLS
from skillcore.work.drain import ScanSummary
from skillcore_local.ddb_local import client as ddb_client

from .conftest import LocalTables
from .job_world import World, grant_users, job_world, put_jobs, reminder_job, scan_table

pytestmark = pytest.mark.stack

T0 = datetime(2031, 3, 4, 5, 0, tzinfo=UTC)


@pytest.fixture
def world(ddb_local: LocalTables) -> Iterator[World]:
    with job_world(ddb_local, "cc") as world:
        yield world


def seed(world: World, *, users: int, agents_per_user: int, jobs: int, due_by: datetime, rng: random.Random) -> None:
    """Users with the grant, agents with their default conversations, and `jobs` due jobs (written in batches)."""
    created = due_by - timedelta(hours=1)
    grant_users(world, users=users, agents_per_user=agents_per_user, created=created, user_prefix="cc-user")
    for i in range(jobs):
        agent = world.agents[i % len(world.agents)]
        run_at = due_by - timedelta(seconds=rng.randrange(0, 600))
        world.jobs.append(reminder_job(agent, run_at=run_at, created=created, note=f"job {i}"))
    put_jobs(world)


def conversation_messages(db: Db, conversation_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    request: dict[str, Any] = {
        "TableName": db.tables.messages, "KeyConditionExpression": "#pk = :pk",
        "ExpressionAttributeNames": {"#pk": "pk"}, "ExpressionAttributeValues": {":pk": {"S": conversation_id}},
        "ConsistentRead": True,
    }
    while True:
        page = db.client.query(**request)
        items += [from_item(i) or {} for i in page.get("Items", [])]
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def run_scanners(world: World, count: int, now: datetime, *, seed_value: int, budget_s: float = 45.0) -> list[ScanSummary]:
    """`count` scanner threads start together (a barrier) and scan at `now` once each, as concurrent
    invocations of the scan Lambda would."""
    dbs = [world.new_db() for _ in range(count)]
    workers = [Worker(db, SKILLS.background, rng=random.Random(seed_value + i)) for i, db in enumerate(dbs)]
    deadline = time.monotonic() + budget_s
    barrier = threading.Barrier(count)
    summaries: list[ScanSummary | None] = [None] * count
    errors: list[BaseException] = []

    def remaining_ms() -> int:
        return max(0, int((deadline - time.monotonic()) * 1000)) + 20_001  # the worker keeps a 20 s margin

    def scanner(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            summaries[i] = workers[i].scan(now, remaining_ms)
        except BaseException as error:  # noqa: BLE001 - reported to the test below
            errors.append(error)

    threads = [threading.Thread(target=scanner, args=(i,), name=f"scanner-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=budget_s + 30)
    assert not any(t.is_alive() for t in threads), "a scanner did not finish"
    assert errors == [], errors
    return [s for s in summaries if s is not None]


@pytest.mark.parametrize("scanners", [4, 8])
def test_concurrent_scanners_run_every_job_exactly_once(world: World, scanners: int) -> None:
    rng = random.Random(1000 + scanners)
    seed(world, users=10, agents_per_user=2, jobs=200, due_by=T0, rng=rng)

    summaries = run_scanners(world, scanners, T0, seed_value=scanners)

    claimed = sum(s.claimed for s in summaries)
    lost = sum(s.lost_races for s in summaries)
    print(f"\n{scanners} scanners: claimed {[s.claimed for s in summaries]} (sum {claimed}), "
          f"lost races {[s.lost_races for s in summaries]} (sum {lost})")
    assert claimed == 200
    assert sum(s.succeeded for s in summaries) == 200
    assert sum(s.retried + s.failed + s.recovered for s in summaries) == 0

    jobs = {item["pk"]: item for item in scan_table(world.db, world.settings.tables.jobs)}
    assert set(jobs) == {j.job_id for j in world.jobs}
    assert Counter(item["status"] for item in jobs.values()) == {"succeeded": 200}
    for item in jobs.values():
        assert item["attempts"] == 1, item
        assert item["revision"] == 3, item  # scheduled -> running -> succeeded, nothing else
        assert not {"leaseExpiresAt", "leaseShard", "leaseAt", "dueShard", "dueAt"} & set(item), item

    expected_by_conversation: dict[str, set[str]] = {}
    for job in world.jobs:
        expected_by_conversation.setdefault(job.conversation_id, set()).add(job.job_id)
    total = 0
    for conversation_id, job_ids in expected_by_conversation.items():
        messages = conversation_messages(world.db, conversation_id)
        ids = [m["sk"] for m in messages]
        assert sorted(ids) == sorted(job_ids), conversation_id
        assert all(m["origin"] == "background" and m["role"] == "assistant" for m in messages)
        total += len(messages)
    assert total == 200

    succeeded = Counter(
        e["targetId"] for e in scan_table(world.db, world.settings.tables.audit)
        if e["action"] == "background.execute" and e["decision"] == "succeeded"
    )
    assert succeeded == dict.fromkeys((j.job_id for j in world.jobs), 1)

    # A second wave finds nothing left to do.
    again = run_scanners(world, scanners, T0 + timedelta(minutes=5), seed_value=100 + scanners)
    assert sum(s.claimed + s.recovered for s in again) == 0


class _BeforeSummary:
    """A boto3 client that, once, runs `interleave` right before its first write to the conversations table:
    it pins the moment between a background writer's recount and its summary write."""

    def __init__(self, client: Any, table: str, interleave: Callable[[], None]) -> None:
        self._client, self._table, self._interleave, self.fired = client, table, interleave, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def update_item(self, **kwargs: Any) -> Any:
        if kwargs.get("TableName") == self._table and not self.fired:
            self.fired = True
            self._interleave()
        return self._client.update_item(**kwargs)


def _claim_and_run(worker: Worker, job: BackgroundJob, now: datetime) -> ScanSummary:
    summary = ScanSummary()
    claimed = worker.claim(job_store.Candidate(job.job_id, job.revision, job.status), now, summary)
    assert claimed is not None
    worker.run(claimed, now, summary)
    return summary


@pytest.mark.parametrize("other_writer", ["another job", "a chat turn"])
def test_conversation_summary_survives_a_concurrent_writer(world: World, other_writer: str) -> None:
    """A reminder recounts its conversation's visible messages and then overwrites the summary. Another
    writer committing in between (a second reminder of the same agent, or the user's chat turn) must not
    be lost: afterwards messageCount, lastMessageAt and the preview describe the messages that exist."""
    seed(world, users=1, agents_per_user=1, jobs=2, due_by=T0, rng=random.Random(7))
    agent = world.agents[0]
    first, second = sorted(world.jobs, key=lambda j: j.job_id)

    def interleave() -> None:
        if other_writer == "another job":
            assert _claim_and_run(Worker(world.new_db(), SKILLS.background), second, T0).succeeded == 1
        else:
            db = world.new_db()
            deps = ChatDeps(
                db=db, clock=lambda: T0 + timedelta(seconds=1),
                executor_for=lambda now: build_executor(SKILLS, OfflineModel(), db, now=now,
                                                        clock=lambda: T0 + timedelta(seconds=1), max_tokens=512),
            )
            post_message(deps, user_id=agent.user_id, conversation_id=agent.default_conversation_id, from_person=True,
                         client_message_id="during-the-reminder", text="hello there", agent_id=None)

    hooked = _BeforeSummary(ddb_client(world.endpoint), world.settings.tables.conversations, interleave)
    worker = Worker(Db(client=hooked, tables=world.settings.tables), SKILLS.background)
    assert _claim_and_run(worker, first, T0).succeeded == 1
    assert hooked.fired

    messages = sorted(conversation_messages(world.db, agent.default_conversation_id), key=lambda m: m["seq"])
    expected = 2 if other_writer == "another job" else 3
    assert len(messages) == expected
    summary = get_conversation(world.db, agent.user_id, agent.default_conversation_id)
    assert summary is not None
    assert (summary.message_count, to_api_time(summary.last_message_at) if summary.last_message_at else None) == (
        len(messages), to_api_time(datetime.fromisoformat(messages[-1]["createdAt"].replace("Z", "+00:00"))),
    ), f"summary after a concurrent writer: count {summary.message_count}, stored messages {len(messages)}"
