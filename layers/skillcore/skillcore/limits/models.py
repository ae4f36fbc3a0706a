"""The route classes a rate applies to, and the limits as settings give them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:
    from skillcore.settings import Settings


class RateClass(StrEnum):
    """A route class: the routes (and MCP tools) that share one per-user rate, `SKILLS_RATE_<CLASS>_PER_MINUTE`."""

    CHAT = "chat"                  # chat turns
    DRAFTING = "drafting"          # capability draft creation and generation (the model at 4,096 tokens)
    HOSTED_CALLS = "hosted_calls"  # calls to a hosted endpoint's tools
    REFRESH = "refresh"            # a hosted endpoint's refresh (connects out and lists tools)
    WRITES = "writes"              # every other mutation


WINDOW_SECONDS = 60


class Limits(Struct, frozen=True, kw_only=True):
    """Requests per minute by class (0: no limit) and the daily model budget in tokens (0: none)."""

    per_minute: dict[RateClass, int]
    tokens_per_day: int

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            per_minute={c: int(getattr(settings, f"rate_{c.value}_per_minute")) for c in RateClass},
            tokens_per_day=settings.model_tokens_per_day,
        )


def window_of(now: datetime) -> int:
    """The fixed minute `now` falls in, as epoch seconds of its start."""
    epoch = int(now.timestamp())
    return epoch - epoch % WINDOW_SECONDS


def retry_after(now: datetime) -> int:
    """Whole seconds until the minute of `now` ends (at least 1)."""
    end = window_of(now) + WINDOW_SECONDS
    return max(1, -int(-(end - now.timestamp()) // 1))


def day_of(now: datetime) -> str:
    return now.astimezone(UTC).date().isoformat()


def resets_at(now: datetime) -> datetime:
    """The next UTC midnight: when the day's budget starts again."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


class Usage(Struct, frozen=True, kw_only=True):
    """The user's model tokens of the day (used, including calls in flight) against the budget."""

    day: str
    tokens_used: int
    tokens_per_day: int
    resets_at: datetime
