"""When an automation job runs: a local wall time in an IANA zone, turned into UTC slots.

A schedule is "every day at HH:MM" or "every ISO weekday N at HH:MM" in the job's time zone. The scan only
compares UTC instants (`next_run_at <= now`), so every local rule below is resolved here, once, into a UTC
slot. The functions are pure: the caller passes the clock.

The contract is exactly one slot per local day (daily) or per local ISO week, on its weekday (weekly),
whatever the clocks do:

- Normal day: the slot is the configured wall time.
- Spring forward, the wall time does not exist (America/New_York 2026-03-08 02:30): the slot is the first
  valid instant after the gap, 03:00 EDT = 07:00Z. Running late beats skipping the day. The same rule covers
  30-minute shifts (Australia/Lord_Howe 02:00 -> 02:30) and midnight gaps (America/Santiago, Africa/Cairo,
  where 00:00..00:59 does not exist on the transition day and 00:30 runs at 01:00).
- Fall back, the wall time occurs twice (New York 01:30 on 2026-11-01): the slot is the first occurrence
  (fold=0); the second occurrence is not a slot, so the day still has one run. Midnight folds repeat the
  previous evening (Santiago and Cairo repeat 23:00..23:59).

Corner: a gap whose end lies on the next local date. America/Nuuk springs forward at 23:00 local, straight
to 00:00 (2025-03-29 23:00 -> 2025-03-30 00:00): a 23:30 job has no 23:30 on Saturday, and the first valid
instant after the gap, 00:00 -01 = 01:00Z, already reads Sunday. That slot still belongs to Saturday: it
is Saturday's run, fired late. `local_day` returns 2025-03-29 for it, and Sunday keeps its own 23:30, so
each local day still has exactly one slot (the Sunday wall clock shows two runs). The rule that decides
which day a slot belongs to is the date it was computed for, never the date on the clock when it fires.

Two degenerate consequences, both only possible with jumps of 24 hours or more, keep the invariant honest:

- A date that never appears on the local clock has no slot and no run (Pacific/Apia skipped 2011-12-30
  entirely, Pacific/Kwajalein 1993-08-21): there is no local day to run for. A weekly job on that weekday
  has no run that week.
- If a date's gap ended exactly on the next date's slot, both dates would resolve to one instant; the
  later date, whose wall time it really is, owns it, and the swallowed date has none. Never two runs at
  one instant, never two runs for one date.

Slots are whole UTC minutes (tzinfo=UTC): wall times are HH:MM and every offset in use is whole minutes.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo
from enum import StrEnum

from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore import checks
from skillcore.timezones import valid_timezone, zone

MINUTE = timedelta(minutes=1)
ONE_DAY = timedelta(days=1)
ONE_WEEK = timedelta(days=7)

# Real slots lie a day apart at most (one skipped date aside), so the nearest one is within a few
# candidate dates; the bound only turns an impossible zone into an error instead of a hang.
_MAX_CANDIDATES = 8


class ScheduleType(StrEnum):
    DAILY = "daily"
    WEEKLY = "weekly"


class ScheduleError(ValueError):
    """A schedule rule broken by one field (named as in the model, for the API's error paths)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Schedule(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Checked on construction; raises ScheduleError naming the field."""

    schedule_type: ScheduleType
    local_time: str  # HH:MM, 24-hour
    weekday: int | None = None  # ISO weekday, Monday = 1
    timezone: str

    def __post_init__(self) -> None:
        try:
            force_setattr(self, "schedule_type", ScheduleType(self.schedule_type))
        except ValueError:
            raise ScheduleError("schedule_type", "schedule type must be daily or weekly") from None
        # [0-9] rather than \d, which also accepts non-ASCII digits; fullmatch, so no trailing newline.
        if not checks.matches(self.local_time, r"([01][0-9]|2[0-3]):[0-5][0-9]"):
            raise ScheduleError("local_time", "local time must be HH:MM, 00:00 to 23:59")
        # An int only, so that True or "3" is not silently read as a day.
        if self.weekday is not None and not checks.integer(self.weekday, 1, 7):
            raise ScheduleError("weekday", "weekday must be an integer from 1 (Monday) to 7 (Sunday)")
        if not isinstance(self.timezone, str) or not valid_timezone(self.timezone):
            raise ScheduleError("timezone", "timezone must be an IANA time zone name")
        if self.schedule_type is ScheduleType.WEEKLY and self.weekday is None:
            raise ScheduleError("weekday", "a weekly schedule needs a weekday (1 = Monday .. 7 = Sunday)")
        if self.schedule_type is ScheduleType.DAILY and self.weekday is not None:
            raise ScheduleError("weekday", "a daily schedule takes no weekday")

    @property
    def time_of_day(self) -> time:
        hours, minutes = self.local_time.split(":")
        return time(int(hours), int(minutes))

    @property
    def step(self) -> timedelta:
        return ONE_DAY if self.schedule_type is ScheduleType.DAILY else ONE_WEEK

    def runs_on(self, day: date) -> bool:
        """Whether `day` is a date this schedule has a slot for (ignoring dates the zone skipped)."""
        return self.weekday is None or day.isoweekday() == self.weekday


def next_run(schedule: Schedule, after: datetime) -> datetime:
    """The first slot strictly after `after`, in UTC."""
    _require_aware(after, "after")
    tz = zone(schedule.timezone)
    # A slot fires on its own date or, out of a gap crossing midnight, the next one: start a day early.
    day = _first_run_day_on_or_after(schedule, _wall_date(tz, after) - ONE_DAY)
    for _ in range(_MAX_CANDIDATES):
        slot = _slot_on(schedule, tz, day)
        if slot is not None and slot > after:
            return slot
        day += schedule.step
    raise RuntimeError(f"no slot found after {after.isoformat()} in {schedule.timezone}")


def latest_slot_at_or_before(schedule: Schedule, due: datetime, now: datetime) -> datetime:
    """The latest slot <= `now` for a job whose stored slot `due` has come: a job that missed several
    slots (downtime, paused scan) runs once, for the most recent one.

    The search starts at `now` and walks back, so a downtime of years costs the same as one of a minute.
    `due` bounds the answer from below: if it is not on this schedule's grid (stored before an edit), the
    job still runs once for it rather than for an older slot.
    """
    _require_aware(due, "due")
    _require_aware(now, "now")
    if due > now:
        raise ValueError("due is still in the future: no slot has come")
    tz = zone(schedule.timezone)
    # Slots of dates after now's local date fire after now; one extra day covers clock folds.
    day = _last_run_day_on_or_before(schedule, _wall_date(tz, now) + ONE_DAY)
    for _ in range(_MAX_CANDIDATES):
        slot = _slot_on(schedule, tz, day)
        if slot is not None and slot <= now:
            return max(slot, due.astimezone(UTC))
        day -= schedule.step
    raise RuntimeError(f"no slot found at or before {now.isoformat()} in {schedule.timezone}")


def local_day(schedule: Schedule, slot: datetime) -> date:
    """The local date whose run `slot` is; it is the slot's wall-clock date except when a gap pushed the
    run past midnight, where it is the day before (see the module docstring)."""
    _require_aware(slot, "slot")
    tz = zone(schedule.timezone)
    wall_date = _wall_date(tz, slot)
    # The wall date goes first: if a gap ever ended exactly on the next date's slot (a jump of 24 h or
    # more), the instant is that date's run, and next_run's strict `>` yields it only once.
    for day in (wall_date, wall_date - ONE_DAY):
        if schedule.runs_on(day) and _slot_on(schedule, tz, day) == slot:
            return day
    raise ValueError(f"{slot.isoformat()} is not a slot of this schedule")


def _slot_on(schedule: Schedule, tz: tzinfo, day: date) -> datetime | None:
    """The slot of local date `day` (which must be a run day), or None when the date has none."""
    slot = _first_instant_at_or_after(tz, datetime.combine(day, schedule.time_of_day))
    if _wall_date(tz, slot) == day:
        return slot
    # The wall time fell into a gap that ends on a later date: the run is late, but still this day's,
    # unless the clock never showed this date at all.
    return slot if _date_exists(tz, day) else None


def _first_instant_at_or_after(tz: tzinfo, wall: datetime) -> datetime:
    """The UTC instant of naive local `wall`: its first occurrence if it exists (fold=0 is the earlier
    one in a repeated hour), else the first whole minute after the gap that swallowed it."""
    instant = wall.replace(tzinfo=tz).astimezone(UTC)
    if _wall(tz, instant) == wall:
        return instant
    return _gap_end(tz, wall)


def _gap_end(tz: tzinfo, wall: datetime) -> datetime:
    """First whole UTC minute whose local wall time is later than `wall`, which lies in a gap.

    In a gap fold=0 and fold=1 apply the offsets from before and after the transition, which yields two
    instants on either side of it: before the transition the clock still reads earlier than `wall`,
    after it later. Bisecting over minutes finds the transition without knowing the zone's rules.
    """
    before, after = sorted(wall.replace(tzinfo=tz, fold=fold).astimezone(UTC) for fold in (0, 1))
    # Bisect over whole minutes from a whole-minute origin; clock(origin) < wall < clock(origin + high min).
    origin = before.replace(second=0, microsecond=0)
    low, high = 0, -(-(after - origin) // MINUTE)
    while high - low > 1:
        middle = (low + high) // 2
        if _wall(tz, origin + middle * MINUTE) > wall:
            high = middle
        else:
            low = middle
    return origin + high * MINUTE


def _date_exists(tz: tzinfo, day: date) -> bool:
    """Whether the local clock ever shows `day` (false only for dates skipped by a 24-hour jump)."""
    return _wall_date(tz, _first_instant_at_or_after(tz, datetime.combine(day, time()))) == day


def _first_run_day_on_or_after(schedule: Schedule, day: date) -> date:
    if schedule.weekday is None:
        return day
    return day + timedelta(days=(schedule.weekday - day.isoweekday()) % 7)


def _last_run_day_on_or_before(schedule: Schedule, day: date) -> date:
    if schedule.weekday is None:
        return day
    return day - timedelta(days=(day.isoweekday() - schedule.weekday) % 7)


def _wall(tz: tzinfo, instant: datetime) -> datetime:
    return instant.astimezone(tz).replace(tzinfo=None)


def _wall_date(tz: tzinfo, instant: datetime) -> date:
    return instant.astimezone(tz).date()


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime")
