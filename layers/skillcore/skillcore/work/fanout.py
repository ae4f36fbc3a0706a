"""Several items of one shard at once, in one worker: a run waits on DynamoDB and on the model, not on the
worker's CPU, so a bounded pool of threads multiplies what one WorkerFunction instance finishes.

Nothing about the guarantees moves here: each item still starts with its own conditional claim, so two
threads (or two workers) can never both run one item. `Fanout.run` only bounds how many items are in
flight, stops starting new ones once `stop()` says so (time is short, a race was lost, an item crashed),
and returns only once every item it started has finished, so a caller that then hands the rest of its
shard on (a continuation) leaves nothing half-done behind.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_CONCURRENCY = 4  # items of one shard in flight per worker: settings.worker_concurrency's default


class Fanout:
    def __init__(self, limit: int = DEFAULT_CONCURRENCY):
        if limit < 1:
            raise ValueError("a fan-out runs at least one item at a time")
        self.limit = limit

    def run(self, items: Iterable[T], fn: Callable[[T], R], *, stop: Callable[[], bool]) -> list[R]:
        """`fn(item)` for the items in their order, at most `limit` at once. `stop()` is asked before each
        item starts (after a place in the pool is free, so it sees what the finished items did); once it
        is true, or an item raised, no further item starts. Returns the results of the items that ran, in
        the order they started, after all of them finished; an exception of one item (only a
        BaseException reaches here: the callers isolate ordinary errors per item) is raised then.
        With `limit` 1 it is the plain loop, on the caller's thread."""
        if self.limit == 1:
            results = []
            for item in items:
                if stop():
                    break
                results.append(fn(item))
            return results
        started: list[Future[R]] = []
        in_flight: set[Future[R]] = set()
        with ThreadPoolExecutor(max_workers=self.limit, thread_name_prefix="shard-item") as pool:
            for item in items:
                while len(in_flight) >= self.limit:
                    _, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                if stop() or any(f.done() and f.exception() is not None for f in started):
                    break
                # Each item runs in a copy of the caller's context (its log keys, its thread-safe state).
                future = pool.submit(contextvars.copy_context().run, fn, item)
                started.append(future)
                in_flight.add(future)
            wait(in_flight)
        failed = next((f.exception() for f in started if f.exception() is not None), None)
        if failed is not None:
            raise failed
        return [f.result() for f in started]
