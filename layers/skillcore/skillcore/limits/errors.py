"""The limits' errors: 429 with when to come back."""

from __future__ import annotations

from typing import TypedDict

from skillcore.errors import DomainError


class TooManyRequests(DomainError):
    """A kind: a per-user limit is spent for now (429)."""

    status = 429


class RateLimitedDetails(TypedDict):
    rateClass: str
    limit: int
    retryAfterSeconds: int


class RateLimited(TooManyRequests):
    """The caller's requests of this route class passed `SKILLS_RATE_<CLASS>_PER_MINUTE` this minute; the answer
    carries `Retry-After` with `details.retryAfterSeconds`."""

    code = "rate_limited"
    details: RateLimitedDetails

    def __init__(self, *, rate_class: str, limit: int, retry_after_seconds: int) -> None:
        super().__init__(f"too many {rate_class} requests: at most {limit} a minute; retry in "
                         f"{retry_after_seconds} s",
                         RateLimitedDetails(rateClass=rate_class, limit=limit, retryAfterSeconds=retry_after_seconds))


class BudgetExhaustedDetails(TypedDict):
    tokensPerDay: int
    resetsAt: str
    retryAfterSeconds: int


class BudgetExhausted(TooManyRequests):
    """The caller's model tokens of the day (UTC) reached `SKILLS_MODEL_TOKENS_PER_DAY`; `details.resetsAt` says
    when the budget starts again."""

    code = "budget_exhausted"
    details: BudgetExhaustedDetails

    def __init__(self, *, tokens_per_day: int, resets_at: str, retry_after_seconds: int) -> None:
        super().__init__(f"today's model budget of {tokens_per_day} tokens is used up; it resets at {resets_at}",
                         BudgetExhaustedDetails(tokensPerDay=tokens_per_day, resetsAt=resets_at,
                                                retryAfterSeconds=retry_after_seconds))
