"""The limiter the router and the MCP toolbox ask before a handler runs, and the meter of the model's usage.

    with limiter.admit(user_id, RateClass.CHAT, model=True):   # 429 rate_limited / budget_exhausted
        handler(...)                                           # its model calls are charged to user_id

`admit` takes one request of the class (one conditional UpdateItem, limits/store.py) and, for a model-backed
operation, reserves its expected tokens of the day's budget (one more); on the way out it settles the reserve
with the usage the model reported (one UpdateItem, none when they are equal). The model calls made inside are
counted by `Metered`, a ChatModel wrapper that adds each response's `input_tokens + output_tokens` to the
charge of the current context (a context variable: the thread fan-outs copy the context, so a call made on
another thread is counted too). Background and automation runs call `budget_left` before their model calls
and are skipped with the recorded reason `budget_exhausted` when it is spent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from datetime import datetime

from skillcore.clock import Clock, to_api_time
from skillcore.db.dynamo import Db
from skillcore.limits import store
from skillcore.limits.errors import BudgetExhausted, RateLimited
from skillcore.limits.models import Limits, RateClass, Usage, day_of, resets_at, retry_after
from skillcore.model.port import ChatModel, ModelRequest, ModelResponse
from skillcore.observability import budget_exhausted, rate_limited


class Charge:
    """The model tokens one operation used so far (its model calls may run on several threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.tokens = 0

    def add(self, tokens: int) -> None:
        with self._lock:
            self.tokens += tokens


_charge: ContextVar[Charge | None] = ContextVar("skillcore_model_charge", default=None)


class Metered:
    """A ChatModel whose every answer's reported usage is added to the current operation's charge."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    def converse(self, request: ModelRequest) -> ModelResponse:
        response = self._model.converse(request)
        charge = _charge.get()
        if charge is not None:
            charge.add(max(0, response.input_tokens) + max(0, response.output_tokens))
        return response


class Limiter:
    def __init__(self, db: Db, limits: Limits, *, clock: Clock, reserve: Callable[[RateClass | None], int]) -> None:
        self._db = db
        self.limits = limits
        self._clock = clock
        self._reserve = reserve  # the tokens a model-backed operation of the class reserves before it runs

    def take(self, user_id: str, rate_class: RateClass, now: datetime | None = None) -> None:
        """One request of the class, or 429 `rate_limited` (nothing is taken then)."""
        limit = self.limits.per_minute.get(rate_class, 0)
        if limit <= 0:
            return
        now = now or self._clock()
        if not store.take(self._db, user_id, rate_class, limit, now):
            rate_limited(rate_class.value)
            raise RateLimited(rate_class=rate_class.value, limit=limit, retry_after_seconds=retry_after(now))

    def exhausted(self, user_id: str, now: datetime) -> BudgetExhausted:
        budget_exhausted()
        reset = resets_at(now)
        return BudgetExhausted(tokens_per_day=self.limits.tokens_per_day, resets_at=to_api_time(reset),
                               retry_after_seconds=max(1, int((reset - now).total_seconds())))

    @contextmanager
    def admit(self, user_id: str, rate_class: RateClass | None, *, model: bool = False) -> Iterator[None]:
        """The request counted against its class, and a model-backed one against the day's budget; inside, the
        model's usage is charged to the user, and settled on the way out."""
        now = self._clock()
        if rate_class is not None:
            self.take(user_id, rate_class, now)
        if not model:
            yield
            return
        with self.charged(user_id, self._reserve(rate_class), now):
            yield

    @contextmanager
    def charged(self, user_id: str, reserve: int, now: datetime | None = None) -> Iterator[Charge]:
        """Reserves `reserve` tokens of the day's budget (or 429 `budget_exhausted`), counts the model's usage of
        the block and settles the reserve with it on the way out (a failed block too)."""
        now = now or self._clock()
        budget = self.limits.tokens_per_day
        reserved = min(reserve, budget) if budget > 0 else 0
        if budget > 0 and not store.reserve(self._db, user_id, reserved, budget, now):
            raise self.exhausted(user_id, now)
        charge = Charge()
        token = _charge.set(charge)
        try:
            yield charge
        finally:
            _charge.reset(token)
            if budget > 0:
                store.add(self._db, user_id, charge.tokens - reserved, now)
            elif charge.tokens:
                store.add(self._db, user_id, charge.tokens, now)

    def run_charged(self, user_id: str, now: datetime) -> AbstractContextManager[Charge]:
        """`charged` for a background or automation run: the reserve of one model answer."""
        return self.charged(user_id, self._reserve(None), now)

    def budget_left(self, user_id: str, now: datetime) -> bool:
        """Whether the user's budget of the day has room (one GetItem); always with no budget."""
        budget = self.limits.tokens_per_day
        return budget <= 0 or store.used(self._db, user_id, now) < budget

    def usage(self, user_id: str, now: datetime | None = None) -> Usage:
        now = now or self._clock()
        return Usage(day=day_of(now), tokens_used=store.used(self._db, user_id, now),
                     tokens_per_day=self.limits.tokens_per_day, resets_at=resets_at(now))
