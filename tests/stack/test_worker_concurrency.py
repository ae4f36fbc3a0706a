"""Several items of one shard at once inside one worker (skillcore/work/fanout.py), against DynamoDB Local with
real threads: workers handed the same shard tasks twice (a duplicate delivery), each running up to
`concurrency` jobs at a time, still run every job exactly once; a worker whose time runs short hands the
rest of its shard on as continuations, and across them nothing is lost or run twice."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from skillcore.automation.runner import AutomationRunner
from skillcore.background.models import BackgroundJob
from skillcore.background.worker import Worker
from skillcore.model.offline import OfflineModel
from skillcore.skills.builtin import SKILLS
from skillcore.work.dispatch import ShardTask, find_work, run_task
from skillcore.work.drain import SAFETY_MARGIN_MS, ScanSummary

from .conftest import LocalTables
from .job_world import World, job_world, scan_table
from .test_scan_concurrency import conversation_messages, seed

pytestmark = pytest.mark.stack

T0 = datetime(2031, 5, 6, 7, 0, tzinfo=UTC)


@pytest.fixture
def world(ddb_local: LocalTables) -> Iterator[World]:
    with job_world(ddb_local, "wc") as world:
        yield world


class GaugedWorker(Worker):
    """Counts the jobs it runs at the same moment (the peak), per worker."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._gauge = threading.Lock()
        self.running = 0
        self.peak = 0

    def run(self, job: BackgroundJob, now: datetime, summary: ScanSummary) -> None:
        with self._gauge:
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            super().run(job, now, summary)
        finally:
            with self._gauge:
                self.running -= 1


class Tasks:
    """The queue: a list of task bodies; `send` is what a worker's continuations go to."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies: list[str] = []
        self.continuations = 0

    def send(self, bodies: Any) -> None:
        with self.lock:
            self.bodies.extend(bodies)
            self.continuations += len(bodies)

    def take(self) -> str | None:
        with self.lock:
            return self.bodies.pop(0) if self.bodies else None


def every_job_once(world: World, jobs: int) -> None:
    items = {item["pk"]: item for item in scan_table(world.db, world.settings.tables.jobs)}
    assert Counter(item["status"] for item in items.values()) == {"succeeded": jobs}
    for item in items.values():
        assert (item["attempts"], item["revision"]) == (1, 3), item
    per_conversation: dict[str, set[str]] = {}
    for job in world.jobs:
        per_conversation.setdefault(job.conversation_id, set()).add(job.job_id)
    for conversation_id, job_ids in per_conversation.items():
        assert sorted(m["sk"] for m in conversation_messages(world.db, conversation_id)) == sorted(job_ids)
    succeeded = Counter(e["targetId"] for e in scan_table(world.db, world.settings.tables.audit)
                        if e["action"] == "background.execute" and e["decision"] == "succeeded")
    assert succeeded == dict.fromkeys((j.job_id for j in world.jobs), 1)


def work_tasks(world: World, workers: list[Worker], tasks: Tasks, budget: Callable[[], Callable[[], int]]) -> list[ScanSummary]:
    automations = AutomationRunner(world.new_db(), SKILLS, OfflineModel())
    summaries = [ScanSummary() for _ in workers]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(workers))

    def loop(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            while (body := tasks.take()) is not None:
                done = run_task(ShardTask.decode(body), {"background": workers[i], "automation": automations}, tasks,  # type: ignore[arg-type]
                                budget(),
                                age_seconds=0, max_age_seconds=600)
                for name in ScanSummary.__struct_fields__:
                    setattr(summaries[i], name, getattr(summaries[i], name) + getattr(done.summary, name))
        except BaseException as error:  # noqa: BLE001 - reported to the test below
            errors.append(error)

    threads = [threading.Thread(target=loop, args=(i,), name=f"worker-{i}") for i in range(len(workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    assert not any(t.is_alive() for t in threads), "a worker did not finish"
    assert errors == [], errors
    return summaries


def plenty() -> Callable[[], int]:
    return lambda: 10**9


def test_workers_running_several_items_each_run_every_job_once_under_duplicate_deliveries(world: World) -> None:
    seed(world, users=8, agents_per_user=2, jobs=160, due_by=T0, rng=random.Random(13))
    workers = [GaugedWorker(world.new_db(), SKILLS.background, rng=random.Random(i), concurrency=4) for i in range(3)]
    tasks = Tasks()
    shard_tasks = [t.encode() for t in find_work(world.db.shards.read, (Worker(world.db, SKILLS.background),), T0)]
    assert len(shard_tasks) == world.db.shards.read  # 160 jobs: every shard has due work
    tasks.bodies = shard_tasks + shard_tasks  # every task delivered twice: two workers share each shard

    summaries = work_tasks(world, list(workers), tasks, plenty)

    claimed = sum(s.claimed for s in summaries)
    print(f"\nclaimed {[s.claimed for s in summaries]}, lost races {[s.lost_races for s in summaries]},"
          f" peak in flight {[w.peak for w in workers]}")
    assert claimed == 160
    assert sum(s.succeeded for s in summaries) == 160
    assert sum(s.retried + s.failed + s.recovered for s in summaries) == 0
    assert max(w.peak for w in workers) > 1  # items really ran at once within a worker
    assert all(w.peak <= 4 for w in workers)  # and never more than the bound
    every_job_once(world, 160)


def test_a_short_budget_hands_the_rest_of_a_shard_on_without_losing_or_doubling_a_job(world: World) -> None:
    seed(world, users=4, agents_per_user=2, jobs=120, due_by=T0, rng=random.Random(14))
    workers: list[Worker] = [Worker(world.new_db(), SKILLS.background, rng=random.Random(20 + i), concurrency=4)
                             for i in range(2)]
    tasks = Tasks()
    tasks.bodies = [t.encode() for t in find_work(world.db.shards.read, (Worker(world.db, SKILLS.background),), T0)]

    def short_budget() -> Callable[[], int]:
        """Time for a few item starts, then short: each task runs a handful of jobs and hands on the rest."""
        calls = [0]

        def remaining_ms() -> int:
            calls[0] += 1
            return SAFETY_MARGIN_MS + 1 if calls[0] <= 6 else SAFETY_MARGIN_MS

        return remaining_ms

    summaries = work_tasks(world, workers, tasks, short_budget)

    print(f"\ncontinuations {tasks.continuations}, claimed {[s.claimed for s in summaries]}")
    assert tasks.continuations >= 120 // 8  # the shards could not be drained in one task each
    assert sum(s.claimed for s in summaries) == 120
    assert sum(s.succeeded for s in summaries) == 120
    every_job_once(world, 120)
    # Nothing is left due: a later task finds no work.
    assert find_work(world.db.shards.read, (Worker(world.db, SKILLS.background),), T0 + timedelta(minutes=5)) == []
