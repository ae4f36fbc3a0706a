"""Automation schedules: local wall times in IANA zones resolved to UTC slots (skillcore.automation.schedule).

Expected instants come from the current zone rules (America/Nuuk's 23:00 spring-forward is in tzdata
since 2023); transitions that are awkward to hard-code
(Lord Howe's 30-minute shift) are found by asking zoneinfo itself. The property tests check every slot
from 2025 to 2030 against a characterisation that does not reuse the module's algorithm: the slot shows
the configured wall time and no earlier instant does, or the wall time lies between two consecutive
minutes of the clock (a gap) and the slot is the later minute.
"""

from __future__ import annotations

import bisect
import struct
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillcore.automation.schedule import (
    Schedule,
    ScheduleError,
    ScheduleType,
    latest_slot_at_or_before,
    local_day,
    next_run,
)
from skillcore.timezones import zone

MINUTE = timedelta(minutes=1)
FIRST_DAY = date(2025, 1, 1)
LAST_DAY = date(2030, 12, 31)

PROPERTY_ZONES = (
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "America/Santiago",
    "Africa/Cairo",
    "Asia/Shanghai",
    "Pacific/Chatham",
    # Springs forward at 23:00 local straight to 00:00: the gap ends on the next date.
    "America/Nuuk",
)

# Wall times that some of the zones above skip or repeat.
TRANSITION_PRONE = ("00:00", "00:30", "01:30", "02:00", "02:15", "02:30", "02:45", "03:00", "23:00", "23:30")


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def daily(local_time: str, timezone: str) -> Schedule:
    return Schedule(schedule_type=ScheduleType.DAILY, local_time=local_time, timezone=timezone)


def weekly(local_time: str, timezone: str, weekday: int) -> Schedule:
    return Schedule(
        schedule_type=ScheduleType.WEEKLY, local_time=local_time, timezone=timezone, weekday=weekday
    )


def runs(schedule: Schedule, after: datetime, count: int) -> list[datetime]:
    found: list[datetime] = []
    for _ in range(count):
        after = next_run(schedule, after)
        found.append(after)
    return found


@dataclass(frozen=True)
class Transition:
    at: datetime  # the first UTC instant with the new offset
    before: timedelta
    after: timedelta

    @property
    def wall_before(self) -> datetime:
        """The wall time the clock would have shown at `at` had it not changed."""
        return (self.at + self.before).replace(tzinfo=None)

    @property
    def wall_after(self) -> datetime:
        return (self.at + self.after).replace(tzinfo=None)


def transitions(timezone: str, year: int) -> list[Transition]:
    """The zone's offset changes in `year`, to the minute: an hourly scan, then bisection."""
    tz = zone(timezone)
    found: list[Transition] = []
    instant, end = utc(year, 1, 1), utc(year + 1, 1, 1)
    offset = instant.astimezone(tz).utcoffset()
    while instant < end:
        later = instant + timedelta(hours=1)
        later_offset = later.astimezone(tz).utcoffset()
        if later_offset != offset:
            low, high = instant, later
            while high - low > MINUTE:
                middle = low + (high - low) / 2
                low, high = (middle, high) if middle.astimezone(tz).utcoffset() == offset else (low, middle)
            assert offset is not None and later_offset is not None
            found.append(Transition(high, offset, later_offset))
        instant, offset = later, later_offset
    return found


# --- examples -------------------------------------------------------------------------------------------


def test_new_york_spring_forward_runs_at_the_first_instant_after_the_gap() -> None:
    schedule = daily("02:30", "America/New_York")
    slot = next_run(schedule, utc(2026, 3, 7, 12))
    assert slot == utc(2026, 3, 8, 7)  # 03:00 EDT: 02:30 does not exist on 2026-03-08
    assert slot.astimezone(zone("America/New_York")).strftime("%H:%M") == "03:00"
    assert local_day(schedule, slot) == date(2026, 3, 8)
    assert next_run(schedule, slot) == utc(2026, 3, 9, 6, 30)  # 02:30 EDT again


def test_new_york_fall_back_runs_once_at_the_first_occurrence() -> None:
    schedule = daily("01:30", "America/New_York")
    first = next_run(schedule, utc(2026, 10, 31, 12))
    assert first == utc(2026, 11, 1, 5, 30)  # 01:30 EDT; 01:30 EST (06:30Z) is not a slot
    assert next_run(schedule, first) == utc(2026, 11, 2, 6, 30)
    # In the repeated hour itself, the second 01:30 is skipped too.
    assert next_run(schedule, utc(2026, 11, 1, 6)) == utc(2026, 11, 2, 6, 30)


def test_london_gap_fold_and_summer_time() -> None:
    schedule = daily("01:30", "Europe/London")
    assert next_run(schedule, utc(2026, 3, 28, 12)) == utc(2026, 3, 29, 1)  # 02:00 BST, after the gap
    assert next_run(schedule, utc(2026, 10, 24, 12)) == utc(2026, 10, 25, 0, 30)  # first 01:30, BST
    assert next_run(schedule, utc(2026, 10, 25, 0, 30)) == utc(2026, 10, 26, 1, 30)  # GMT
    assert next_run(daily("10:00", "Europe/London"), utc(2026, 7, 1)) == utc(2026, 7, 1, 9)


@pytest.mark.parametrize("year", [2025, 2026])
def test_lord_howe_half_hour_shifts(year: int) -> None:
    fold, gap = transitions("Australia/Lord_Howe", year)  # April: back to +10:30, October: on to +11
    assert fold.before - fold.after == gap.after - gap.before == timedelta(minutes=30)
    assert fold.wall_before.time() == gap.wall_before.time() == time(2, 0)

    # 02:15 does not exist on the October day (02:00 -> 02:30): it runs at 02:30, the transition itself.
    in_gap = daily("02:15", "Australia/Lord_Howe")
    slot = next_run(in_gap, gap.at - timedelta(hours=12))
    assert slot == gap.at
    assert slot.astimezone(zone("Australia/Lord_Howe")).time() == time(2, 30)
    assert local_day(in_gap, slot) == gap.wall_before.date()

    # 01:45 happens twice on the April day (02:00 -> 01:30): the first one, 15 minutes before the change.
    repeated = daily("01:45", "Australia/Lord_Howe")
    slot = next_run(repeated, fold.at - timedelta(hours=12))
    assert slot == fold.at - timedelta(minutes=15)
    assert next_run(repeated, slot) - slot == timedelta(hours=24, minutes=30)


def test_santiago_midnight_transitions() -> None:
    # 2026-09-06: 00:00 -> 01:00 (-04 -> -03). Both 00:00 and 00:30 run at 01:00.
    for local_time in ("00:00", "00:30"):
        schedule = daily(local_time, "America/Santiago")
        slot = next_run(schedule, utc(2026, 9, 6, 3, 59))
        assert slot == utc(2026, 9, 6, 4)
        assert local_day(schedule, slot) == date(2026, 9, 6)
    # 2026-04-05 00:00 -03 -> 2026-04-04 23:00 -04: Saturday 23:30 happens twice, Sunday 00:00 once.
    assert next_run(daily("23:30", "America/Santiago"), utc(2026, 4, 4, 12)) == utc(2026, 4, 5, 2, 30)
    assert runs(daily("00:00", "America/Santiago"), utc(2026, 4, 3, 12), 2) == [
        utc(2026, 4, 4, 3),
        utc(2026, 4, 5, 4),
    ]


def test_cairo_midnight_transitions() -> None:
    # Friday 2026-04-24: 00:00 -> 01:00 (+02 -> +03).
    for local_time in ("00:00", "00:30"):
        assert next_run(daily(local_time, "Africa/Cairo"), utc(2026, 4, 23, 12)) == utc(2026, 4, 23, 22)
    # Thursday 2026-10-29: 24:00 +03 -> 23:00 +02, so 23:30 happens twice; the first is at +03.
    schedule = daily("23:30", "Africa/Cairo")
    slot = next_run(schedule, utc(2026, 10, 29, 12))
    assert slot == utc(2026, 10, 29, 20, 30)
    assert next_run(schedule, slot) == utc(2026, 10, 30, 21, 30)
    assert next_run(daily("00:30", "Africa/Cairo"), utc(2026, 10, 29, 12)) == utc(2026, 10, 29, 22, 30)


def test_shanghai_has_no_dst() -> None:
    schedule = daily("10:00", "Asia/Shanghai")  # the default memory job
    assert runs(schedule, utc(2026, 3, 1), 3) == [utc(2026, 3, 1, 2), utc(2026, 3, 2, 2), utc(2026, 3, 3, 2)]
    assert next_run(schedule, utc(2026, 7, 15, 1, 59)) == utc(2026, 7, 15, 2)


def test_chatham_quarter_hour_offsets() -> None:
    schedule = daily("10:00", "Pacific/Chatham")
    assert next_run(schedule, utc(2026, 1, 14)) == utc(2026, 1, 14, 20, 15)  # +13:45
    assert next_run(schedule, utc(2026, 7, 14)) == utc(2026, 7, 14, 21, 15)  # +12:45
    # 2026-09-27 02:45 -> 03:45: 03:00 runs at 03:45 +13:45.
    assert next_run(daily("03:00", "Pacific/Chatham"), utc(2026, 9, 26)) == utc(2026, 9, 26, 14)
    # 2026-04-05 03:45 -> 02:45: 03:00 happens twice, the first at +13:45.
    assert next_run(daily("03:00", "Pacific/Chatham"), utc(2026, 4, 4)) == utc(2026, 4, 4, 13, 15)


def test_weekly_runs_on_its_iso_weekday() -> None:
    schedule = weekly("10:00", "Asia/Shanghai", weekday=1)
    slots = runs(schedule, utc(2026, 1, 7), 3)  # a Wednesday
    assert slots == [utc(2026, 1, 12, 2), utc(2026, 1, 19, 2), utc(2026, 1, 26, 2)]
    assert {local_day(schedule, slot).isoweekday() for slot in slots} == {1}
    # Sunday 02:30 in New York, across the spring-forward Sunday.
    sundays = runs(weekly("02:30", "America/New_York", weekday=7), utc(2026, 3, 1, 12), 2)
    assert sundays == [utc(2026, 3, 8, 7), utc(2026, 3, 15, 6, 30)]


def test_after_exactly_on_a_slot_returns_the_next_one() -> None:
    schedule = daily("10:00", "Asia/Shanghai")
    assert next_run(schedule, utc(2026, 5, 1, 2)) == utc(2026, 5, 2, 2)
    assert next_run(schedule, utc(2026, 5, 1, 2) - timedelta(microseconds=1)) == utc(2026, 5, 1, 2)
    # Any offset is accepted; the answer is UTC, whole minutes.
    slot = next_run(schedule, datetime(2026, 5, 1, 9, 59, 59, 999, tzinfo=zone("Asia/Shanghai")))
    assert slot == utc(2026, 5, 1, 2)
    assert slot.tzinfo is UTC
    assert (slot.second, slot.microsecond) == (0, 0)


def test_latest_slot_after_a_forty_day_downtime() -> None:
    schedule = daily("10:00", "Asia/Shanghai")
    due = utc(2026, 1, 1, 2)
    assert latest_slot_at_or_before(schedule, due, utc(2026, 2, 10, 1)) == utc(2026, 2, 9, 2)
    assert latest_slot_at_or_before(schedule, due, utc(2026, 2, 10, 2)) == utc(2026, 2, 10, 2)
    assert latest_slot_at_or_before(schedule, due, due) == due
    # Decades of downtime cost the same: the search starts from now.
    assert latest_slot_at_or_before(schedule, due, utc(2056, 1, 1)) == utc(2055, 12, 31, 2)
    assert latest_slot_at_or_before(
        weekly("10:00", "Asia/Shanghai", 1), utc(2026, 1, 5, 2), utc(2026, 2, 14)
    ) == utc(2026, 2, 9, 2)


def test_latest_slot_refuses_a_future_due() -> None:
    with pytest.raises(ValueError, match="future"):
        latest_slot_at_or_before(daily("10:00", "Asia/Shanghai"), utc(2026, 1, 2, 2), utc(2026, 1, 1))


def test_gap_ending_on_the_next_date_still_belongs_to_its_own_day() -> None:
    """America/Nuuk: 2025-03-29 23:00 -02 -> 2025-03-30 00:00 -01. Saturday has no 23:30; its run fires at
    Sunday 00:00 (01:00Z) and is Saturday's. Sunday keeps its own 23:30."""
    schedule = daily("23:30", "America/Nuuk")
    slots = runs(schedule, utc(2025, 3, 28, 12), 3)
    assert slots == [utc(2025, 3, 29, 1, 30), utc(2025, 3, 30, 1), utc(2025, 3, 31, 0, 30)]
    assert [local_day(schedule, slot) for slot in slots] == [
        date(2025, 3, 28),
        date(2025, 3, 29),
        date(2025, 3, 30),
    ]
    assert slots[1].astimezone(zone("America/Nuuk")).date() == date(2025, 3, 30)
    assert latest_slot_at_or_before(schedule, slots[0], utc(2025, 3, 30, 23)) == slots[1]
    # Weekly on Saturday: that Saturday's run also fires on the Sunday wall clock.
    saturday = weekly("23:30", "America/Nuuk", weekday=6)
    slot = next_run(saturday, utc(2025, 3, 25))
    assert slot == utc(2025, 3, 30, 1)
    assert local_day(saturday, slot) == date(2025, 3, 29)


@pytest.mark.parametrize("local_time", ["00:00", "12:00"])
def test_a_date_the_zone_skipped_has_no_run(local_time: str) -> None:
    """Samoa jumped from 2011-12-29 23:59 -10 to 2011-12-31 00:00 +14: there was no 2011-12-30."""
    schedule = daily(local_time, "Pacific/Apia")
    slots = runs(schedule, utc(2011, 12, 29), 2)
    assert [local_day(schedule, slot) for slot in slots] == [date(2011, 12, 29), date(2011, 12, 31)]
    friday = weekly(local_time, "Pacific/Apia", weekday=5)
    assert local_day(friday, next_run(friday, utc(2011, 12, 24))) == date(2012, 1, 6)


def _tzif_single_jump(at: datetime, before: timedelta, after: timedelta) -> bytes:
    """A version-1 TZif file with one transition (RFC 8536): no real zone jumps 24 h at midday."""
    names = b"A\x00B\x00"
    data = (
        struct.pack(">l", int(at.timestamp()))
        + bytes([1])
        + struct.pack(">lBB", int(before.total_seconds()), 0, 0)
        + struct.pack(">lBB", int(after.total_seconds()), 0, 2)
        + names
    )
    return b"TZif" + bytes(16) + struct.pack(">6l", 0, 0, 0, 1, 2, len(names)) + data


@pytest.fixture
def midday_jump_zone(tmp_path: Path) -> Iterator[str]:
    """Test/MiddayJump: -10 until 2030-06-15 12:00 local, then +14, i.e. straight to 2030-06-16 12:00."""
    path = tmp_path / "Test" / "MiddayJump"
    path.parent.mkdir()
    path.write_bytes(_tzif_single_jump(utc(2030, 6, 15, 22), timedelta(hours=-10), timedelta(hours=14)))
    zoneinfo.reset_tzpath(to=[str(tmp_path)])
    try:
        yield "Test/MiddayJump"
    finally:
        zoneinfo.reset_tzpath()


def test_a_gap_ending_on_the_next_dates_slot_gives_the_instant_to_that_date(midday_jump_zone: str) -> None:
    at_noon = daily("12:00", midday_jump_zone)
    slots = runs(at_noon, utc(2030, 6, 14), 2)
    assert slots == [utc(2030, 6, 14, 22), utc(2030, 6, 15, 22)]
    assert [local_day(at_noon, slot) for slot in slots] == [date(2030, 6, 14), date(2030, 6, 16)]
    # An hour later the gap's end is not the next date's slot, so 2030-06-15 keeps a (late) run.
    at_one = daily("13:00", midday_jump_zone)
    slots = runs(at_one, utc(2030, 6, 14), 3)
    assert slots == [utc(2030, 6, 14, 23), utc(2030, 6, 15, 22), utc(2030, 6, 15, 23)]
    assert [local_day(at_one, slot) for slot in slots] == [
        date(2030, 6, 14),
        date(2030, 6, 15),
        date(2030, 6, 16),
    ]


def test_local_day_rejects_an_instant_that_is_not_a_slot() -> None:
    schedule = daily("02:30", "America/New_York")
    with pytest.raises(ValueError, match="not a slot"):
        local_day(schedule, utc(2026, 3, 8, 7, 30))  # 03:30 EDT: the day's run was 03:00
    with pytest.raises(ValueError, match="not a slot"):
        local_day(daily("01:30", "America/New_York"), utc(2026, 11, 1, 6, 30))  # the second 01:30


def test_naive_datetimes_are_refused() -> None:
    schedule = daily("10:00", "Asia/Shanghai")
    naive = datetime(2026, 1, 1, 10)
    with pytest.raises(ValueError, match="aware"):
        next_run(schedule, naive)
    with pytest.raises(ValueError, match="aware"):
        latest_slot_at_or_before(schedule, naive, utc(2026, 1, 2))
    with pytest.raises(ValueError, match="aware"):
        local_day(schedule, naive)


# --- validation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "local_time", ["24:00", "9:00", "10:60", "10:00:00", " 10:00", "10:00\n", "١٠:٠٠", ""]
)
def test_bad_local_time_is_rejected(local_time: str) -> None:
    with pytest.raises(ScheduleError, match="local time must be HH:MM") as raised:
        daily(local_time, "Asia/Shanghai")
    assert raised.value.field == "local_time"


@pytest.mark.parametrize("local_time", ["00:00", "09:05", "23:59"])
def test_good_local_time_is_accepted(local_time: str) -> None:
    assert daily(local_time, "Asia/Shanghai").local_time == local_time


def parse(**fields: object) -> Schedule:
    """A schedule from raw input, as the API hands it over."""
    return Schedule(**{"local_time": "10:00", "timezone": "Asia/Shanghai", **fields})  # type: ignore[arg-type]


def test_weekday_only_on_weekly() -> None:
    with pytest.raises(ScheduleError, match="daily schedule takes no weekday"):
        parse(schedule_type="daily", weekday=1)
    with pytest.raises(ScheduleError, match="needs a weekday") as raised:
        parse(schedule_type="weekly")
    assert raised.value.field == "weekday"
    for bad in (0, 8, True, "3", 3.0):
        with pytest.raises(ScheduleError, match="weekday must be an integer from 1"):
            parse(schedule_type="weekly", weekday=bad)
    assert parse(schedule_type="weekly", weekday=7).weekday == 7


@pytest.mark.parametrize("timezone", ["Mars/Olympus_Mons", "", "../etc/passwd", "/etc/localtime", "EST5EDT "])
def test_unknown_zone_is_rejected(timezone: str) -> None:
    with pytest.raises(ValueError, match="IANA"):
        daily("10:00", timezone)


def test_schedule_is_frozen_and_closed() -> None:
    schedule = daily("10:00", "Asia/Shanghai")
    with pytest.raises(AttributeError):
        setattr(schedule, "local_time", "11:00")  # noqa: B010 - the assignment itself is under test
    with pytest.raises(TypeError, match="Unexpected keyword argument 'cron'"):
        parse(schedule_type="daily", cron="* * * * *")
    with pytest.raises(ScheduleError, match="schedule type must be daily or weekly"):
        parse(schedule_type="hourly")


# --- properties over 2025..2030 -------------------------------------------------------------------------


@dataclass
class Tally:
    gap_days: int = 0
    repeated_days: int = 0
    next_date_days: int = 0


def all_slots(schedule: Schedule) -> list[datetime]:
    """Every slot by chaining next_run, from weeks before 2025-01-01 to after 2030-12-31 anywhere."""
    slots: list[datetime] = []
    after, end = utc(2024, 12, 1), utc(2031, 1, 2)
    while after < end:
        after = next_run(schedule, after)
        slots.append(after)
    return slots


def check_slot(schedule: Schedule, day: date, slot: datetime, tally: Tally) -> None:
    """`slot` is `day`'s run: at the wall time's first occurrence, or the first minute after its gap."""
    tz = zone(schedule.timezone)
    wall = datetime.combine(day, schedule.time_of_day)

    def clock(instant: datetime) -> datetime:
        return instant.astimezone(tz).replace(tzinfo=None)

    assert slot.tzinfo is UTC and (slot.second, slot.microsecond) == (0, 0)
    if clock(slot) == wall:
        assert slot.astimezone(tz).date() == day
        # Every instant showing `wall` is wall - offset for an offset in force around it.
        offsets = {
            (slot + shift).astimezone(tz).utcoffset()
            for shift in (timedelta(days=-1), timedelta(), timedelta(days=1))
        }
        showing = {(wall - offset).replace(tzinfo=UTC) for offset in offsets if offset is not None}
        showing = {instant for instant in showing if clock(instant) == wall}
        assert slot == min(showing)
        tally.repeated_days += len(showing) > 1
    else:
        # Skipped: the clock jumps over `wall` between the minute before the slot and the slot.
        assert clock(slot - MINUTE) < wall < clock(slot)
        tally.gap_days += 1
        if clock(slot).date() != day:
            assert clock(slot).date() == day + timedelta(days=1)
            tally.next_date_days += 1


def check_schedule(schedule: Schedule) -> tuple[list[datetime], Tally]:
    slots = all_slots(schedule)
    assert all(earlier < later for earlier, later in pairwise(slots))
    days = [local_day(schedule, slot) for slot in slots]
    in_range = [(day, slot) for day, slot in zip(days, slots, strict=True) if FIRST_DAY <= day <= LAST_DAY]
    expected_days = [
        FIRST_DAY + timedelta(days=offset)
        for offset in range((LAST_DAY - FIRST_DAY).days + 1)
        if schedule.runs_on(FIRST_DAY + timedelta(days=offset))
    ]
    # Exactly one run per local day (daily) or per ISO week on the weekday (weekly): no day twice, none missing.
    assert [day for day, _ in in_range] == expected_days
    if schedule.weekday is not None:
        weeks = [day.isocalendar()[:2] for day in expected_days]
        assert len(set(weeks)) == len(weeks)
    tally = Tally()
    for day, slot in in_range:
        check_slot(schedule, day, slot, tally)
    return slots, tally


random_local_time = st.builds(
    lambda hour, minute: f"{hour:02d}:{minute:02d}", st.integers(0, 23), st.integers(0, 59)
)
local_times = st.one_of(st.sampled_from(TRANSITION_PRONE), random_local_time)
instants_in_range = st.datetimes(datetime(2025, 1, 2), datetime(2030, 12, 30), timezones=st.just(UTC))

PROPERTY_SETTINGS = settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("timezone", PROPERTY_ZONES)
@PROPERTY_SETTINGS
@given(local_time=local_times, data=st.data())
def test_daily_schedule_properties(timezone: str, local_time: str, data: st.DataObject) -> None:
    schedule = daily(local_time, timezone)
    slots, _ = check_schedule(schedule)
    check_arbitrary_instants(schedule, slots, data)


@pytest.mark.parametrize("timezone", PROPERTY_ZONES)
@PROPERTY_SETTINGS
@given(local_time=local_times, weekday=st.integers(1, 7), data=st.data())
def test_weekly_schedule_properties(
    timezone: str, local_time: str, weekday: int, data: st.DataObject
) -> None:
    schedule = weekly(local_time, timezone, weekday)
    slots, _ = check_schedule(schedule)
    check_arbitrary_instants(schedule, slots, data)


def check_arbitrary_instants(schedule: Schedule, slots: list[datetime], data: st.DataObject) -> None:
    """next_run and latest_slot_at_or_before from any instant agree with the chained slot sequence."""
    for _ in range(12):
        after = data.draw(instants_in_range)
        assert next_run(schedule, after) == slots[bisect.bisect_right(slots, after)]
        now = data.draw(instants_in_range)
        latest = slots[bisect.bisect_right(slots, now) - 1]
        due = slots[data.draw(st.integers(0, slots.index(latest)))]
        assert latest_slot_at_or_before(schedule, due, now) == latest


# Each corner the zones hold, checked deterministically (the random draws above may miss some): how many
# days of 2025..2030 fall in a gap, in a repeated hour, or in a gap that ends on the next date.
CORNERS = [
    ("America/New_York", "02:30", Tally(gap_days=6)),
    ("America/New_York", "01:30", Tally(repeated_days=6)),
    ("Europe/London", "01:30", Tally(gap_days=6, repeated_days=6)),
    ("Australia/Lord_Howe", "02:15", Tally(gap_days=6)),
    ("Australia/Lord_Howe", "01:45", Tally(repeated_days=6)),
    ("America/Santiago", "00:00", Tally(gap_days=6)),  # its fall-back repeats Saturday 23:xx, not 00:00
    ("America/Santiago", "23:30", Tally(repeated_days=6)),
    ("Africa/Cairo", "00:30", Tally(gap_days=6)),
    ("Africa/Cairo", "23:30", Tally(repeated_days=6)),
    ("Pacific/Chatham", "03:00", Tally(gap_days=6, repeated_days=6)),
    ("America/Nuuk", "23:30", Tally(gap_days=6, repeated_days=6, next_date_days=6)),
]


@pytest.mark.parametrize(("timezone", "local_time", "expected"), CORNERS)
def test_each_corner_is_exercised_every_year(timezone: str, local_time: str, expected: Tally) -> None:
    _, tally = check_schedule(daily(local_time, timezone))
    assert tally == expected


def test_a_zone_without_transitions_never_hits_a_corner() -> None:
    slots, tally = check_schedule(daily("10:00", "Asia/Shanghai"))
    assert tally == Tally()
    assert {slot.time() for slot in slots} == {time(2, 0)}
