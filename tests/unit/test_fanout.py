"""skillcore/work/fanout.py with real threads: the bound, stopping, and a crash that waits for the others."""

from __future__ import annotations

import threading
import time

import pytest

from skillcore.settings import BOUNDS
from skillcore.work.fanout import DEFAULT_CONCURRENCY, Fanout


class Gauge:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.threads: set[str] = set()

    def __call__(self, item: int) -> int:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.threads.add(threading.current_thread().name)
        time.sleep(0.02)
        with self.lock:
            self.now -= 1
        return item * 10


@pytest.mark.parametrize("limit", [2, 4, 7])
def test_at_most_limit_items_run_at_once_and_every_item_runs(limit: int) -> None:
    gauge = Gauge()
    results = Fanout(limit).run(range(30), gauge, stop=lambda: False)
    assert results == [i * 10 for i in range(30)]
    assert gauge.peak == limit  # reached, never passed
    assert threading.current_thread().name not in gauge.threads


def test_limit_one_is_the_plain_loop_on_the_callers_thread() -> None:
    gauge = Gauge()
    assert Fanout(1).run(range(5), gauge, stop=lambda: False) == [0, 10, 20, 30, 40]
    assert gauge.peak == 1
    assert gauge.threads == {threading.current_thread().name}


@pytest.mark.parametrize("limit", [1, 3])
def test_no_item_starts_once_stop_is_true_and_started_ones_finish(limit: int) -> None:
    finished: list[int] = []
    lock = threading.Lock()

    def work(item: int) -> int:
        time.sleep(0.01)
        with lock:
            finished.append(item)
        return item

    results = Fanout(limit).run(range(100), work, stop=lambda: len(finished) >= 6)
    # Asked before each start: at most `limit` items were in flight when the sixth finished.
    assert 6 <= len(results) <= 6 + limit - 1
    assert sorted(finished) == sorted(results)  # everything started also finished before run returned
    assert results == sorted(results)


class Crash(BaseException):
    pass


def test_a_crash_stops_new_items_and_is_raised_after_the_others_finish() -> None:
    finished: list[int] = []
    lock = threading.Lock()

    def work(item: int) -> int:
        if item == 2:
            raise Crash
        time.sleep(0.05)
        with lock:
            finished.append(item)
        return item

    with pytest.raises(Crash):
        Fanout(3).run(range(50), work, stop=lambda: False)
    assert {0, 1} <= set(finished)  # in flight with the crash: finished before it was raised
    assert len(finished) < 10  # nothing much started after it


def test_the_default_is_the_settings_default() -> None:
    assert BOUNDS["worker_concurrency"][0] == DEFAULT_CONCURRENCY
    with pytest.raises(ValueError):
        Fanout(0)
