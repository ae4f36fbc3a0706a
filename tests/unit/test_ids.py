"""skillcore.ids: ULIDs checked against the python-ulid reference, monotonic minting, stable ids."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ulid import ULID

from skillcore import ids as ids_module
from skillcore.ids import new_id, stable_id

T0 = datetime(2026, 12, 2, 9, 30, 15, 123000, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _own_sequence():
    """Each test starts a fresh sequence and leaves the process's as it found it."""
    saved = ids_module._previous
    ids_module._previous = 0
    yield
    ids_module._previous = saved


@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 1, 1), timezones=st.just(UTC)))
def test_ids_are_ulids_of_the_clock_millisecond(now: datetime) -> None:
    minted = new_id(now)
    parsed = ULID.from_str(minted)
    assert len(minted) == 26 and str(parsed) == minted
    assert parsed.milliseconds == int(now.timestamp() * 1000)


def test_ids_minted_in_one_millisecond_sort_in_minting_order() -> None:
    ids = [new_id(T0) for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert {ULID.from_str(i).milliseconds for i in ids} == {int(T0.timestamp() * 1000)}


def test_ids_sort_by_time_and_the_random_part_differs() -> None:
    later = [new_id(T0 + timedelta(milliseconds=n)) for n in (5, 6, 1000, 86_400_000)]
    assert later == sorted(later)
    randoms = {ULID.from_str(new_id(T0 + timedelta(days=1, milliseconds=n))).bytes[6:] for n in range(0, 200, 2)}
    assert len(randoms) == 100


def test_a_clock_that_steps_back_still_orders_ids_within_its_millisecond() -> None:
    new_id(T0 + timedelta(days=5))
    earlier = [new_id(T0) for _ in range(50)]
    assert earlier == sorted(earlier)


def test_an_exhausted_millisecond_starts_fresh_randomness() -> None:
    millis = int(T0.timestamp() * 1000)
    ids_module._previous = (millis << 80) | ((1 << 80) - 1)
    minted = ULID.from_str(new_id(T0))
    assert minted.milliseconds == millis


def test_concurrent_minting_never_repeats() -> None:
    minted: list[str] = []
    lock = threading.Lock()

    def mint() -> None:
        mine = [new_id(T0 + timedelta(hours=1)) for _ in range(500)]
        with lock:
            minted.extend(mine)

    threads = [threading.Thread(target=mint) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(minted)) == 4000


def test_stable_ids_are_deterministic_crockford_and_distinct() -> None:
    first = stable_id("user-1", "memory-extraction")
    assert first == stable_id("user-1", "memory-extraction")
    assert len(first) == 26 and set(first) <= set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    assert first != stable_id("user-1", "memory-extractio", "n")  # parts are separated, not concatenated
    assert first != stable_id("user-2", "memory-extraction")
    # Stored natural keys depend on this value never changing.
    assert stable_id("a", "b") == "1W2CVKPSEDN6KPK10FR8MKDAZ3"


def test_ids_minted_together_sort_in_order_whatever_other_threads_mint() -> None:
    """new_ids' ids are adjacent (each the previous plus one), so no id another thread mints for another
    millisecond can fall between them; new_id's would be ordered only while nothing else was minted between."""
    stop = threading.Event()

    def others() -> None:
        n = 0
        while not stop.is_set():
            new_id(T0 + timedelta(milliseconds=1 + n % 7))
            n += 1

    noise = [threading.Thread(target=others) for _ in range(3)]
    for thread in noise:
        thread.start()
    try:
        groups = [ids_module.new_ids(T0, 3) for _ in range(3000)]
    finally:
        stop.set()
        for thread in noise:
            thread.join()
    for group in groups:
        values = [int(ULID.from_str(i)) for i in group]
        assert values == [values[0], values[0] + 1, values[0] + 2]
        assert {ULID.from_str(i).milliseconds for i in group} == {int(T0.timestamp() * 1000)}
