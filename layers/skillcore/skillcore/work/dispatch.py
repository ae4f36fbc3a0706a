"""At scale the scan only dispatches (docs/architecture.md, flow 3): it finds the shards with due work and sends one
queue message per shard; WorkerFunction runs each shard with the same conditional claims as before.

- `find_work` (the scan): one Query with Limit 1 per shard and index (due background jobs, expired
  background leases, due automation slots), so its cost grows with the shard count, never the backlog.
- `run_task` (the worker): a message is a hint, the claim is the truth. A duplicate finds its jobs claimed
  and does nothing; a stale one (older than `max_age`, by SQS's SentTimestamp) is dropped, since the next
  scan dispatches again; one whose shard ran past the invocation's time hands the rest on as a continuation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Literal, cast

import msgspec
from msgspec import Struct

from skillcore.clock import parse_time, to_sort_time
from skillcore.db.records import ScanFailures
from skillcore.work.drain import DueProbe, ScanSummary, ShardSource
from skillcore.work.sqs_queue import WorkQueue

Kind = Literal["background", "automation"]  # a ShardSource's kind
MAX_HOPS = 50  # continuations of one shard task: a bound on a loop, far above what a drain needs


class ShardTask(Struct, frozen=True, forbid_unknown_fields=True):
    """One queue message: work `shard` of the `kind` queue as of the scan's `now` (API time). `recover`:
    also retry the shard's jobs whose lease expired. `hop`: how many continuations came before this one."""

    kind: Kind
    shard: int
    now: str
    recover: bool = False
    hop: int = 0

    def encode(self) -> str:
        return msgspec.json.encode(self).decode()

    @classmethod
    def decode(cls, body: str) -> ShardTask:
        """The task of a message body; msgspec.ValidationError/DecodeError for anything else (a poison message)."""
        task = msgspec.json.decode(body, type=cls)
        if task.shard < 0 or task.hop < 0:
            raise msgspec.ValidationError("shard and hop must not be negative")
        parse_time(task.now)
        return task


class DispatchSummary(Struct):
    shards: int = 0
    messages: int = 0
    background: int = 0
    automation: int = 0


def find_work(shards: int, sources: Sequence[DueProbe], now: datetime) -> list[ShardTask]:
    """The shard tasks of this scan: every shard (of every shard count still in use) with due work."""
    at = to_sort_time(now)
    tasks: list[ShardTask] = []
    for shard_no in range(shards):
        for source in sources:
            due, recover = source.probe(shard_no, now)
            if due or recover:
                tasks.append(ShardTask(kind=cast(Kind, source.kind), shard=shard_no, now=at, recover=recover))
    return tasks


def dispatch(shards: int, sources: Sequence[DueProbe], queue: WorkQueue, now: datetime) -> DispatchSummary:
    tasks = find_work(shards, sources, now)
    if tasks:  # a scan with nothing due never reaches the queue
        queue.send([task.encode() for task in tasks])
    return DispatchSummary(
        shards=shards, messages=len(tasks),
        background=sum(t.kind == "background" for t in tasks), automation=sum(t.kind == "automation" for t in tasks),
    )


class TaskResult(Struct):
    summary: ScanSummary
    continued: bool = False
    stale: bool = False


def run_task(
    task: ShardTask, sources: Mapping[str, ShardSource], queue: WorkQueue,
    remaining_ms: Callable[[], int], *, age_seconds: float, max_age_seconds: float,
) -> TaskResult:
    """Works one shard until it is drained or the invocation's time runs short; then sends the rest on."""
    summary = ScanSummary()
    if age_seconds > max_age_seconds:
        return TaskResult(summary, stale=True)
    now = parse_time(task.now)
    started_ms = remaining_ms()
    failures = ScanFailures()
    source = sources[task.kind]
    if task.recover:
        source.recover_shard(task.shard, now, summary, failures)
    # The task's "now" stands for the moment it was sent: its age is part of each run's slot delay.
    more = source.work_shard(task.shard, now, remaining_ms, summary, failures,
                             since=time.monotonic() - max(0.0, age_seconds))
    summary.errors = failures.count
    continued = more and task.hop < MAX_HOPS
    if continued:
        # The rest of the shard, as of a "now" moved on by the time this invocation took, so the leases
        # its claims take are measured from when they are taken.
        later = now + timedelta(milliseconds=max(0, started_ms - remaining_ms()))
        queue.send([msgspec.structs.replace(task, now=to_sort_time(later), recover=False, hop=task.hop + 1).encode()])
    return TaskResult(summary, continued=continued)
