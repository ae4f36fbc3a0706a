"""The limiter the router and the MCP toolbox ask before a handler runs, and the meter of the model's usage.

    with limiter.admit(user_id, RateClass.CHAT, model=True):   # 429 rate_limited / budget_exhausted
        handler(...)                                           # its model calls are charged to user_id

`admit` takes one request of the class (one conditional UpdateItem, limits/store.py); for a model-backed
operation it opens a charge: `Metered`, the ChatModel wrapper every function's models are built with, reserves
the operation's expected tokens of the day's budget at its first call (one conditional UpdateItem, or 429
`budget_exhausted`) and adds each answer's reported `input_tokens + output_tokens` to the charge; on the way
out the reserve is settled with that usage (one UpdateItem). An operation that does not ask the model (a
replayed turn, a workflow step) costs the budget no request. The charge is a context variable: the thread
fan-outs copy the context, so a call made on another thread is counted too. Automation runs open a charge
too (`run_charged`): a run whose first model call finds the budget spent is skipped with the recorded reason
`budget_exhausted`.
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
    """One operation's model budget: admitted at its first model call (a reserve of the day's budget, or 429
    `budget_exhausted`), the tokens its calls reported counted (they may run on several threads), settled at
    its end. An operation that never asks the model costs the budget no request."""

    def __init__(self, limiter: Limiter, user_id: str, reserve: int, now: datetime) -> None:
        self._lock = threading.Lock()
        self._limiter = limiter
        self.user_id = user_id
        self.reserve = reserve
        self.now = now
        self.admitted = False
        self.tokens = 0

    def admit(self) -> None:
        with self._lock:
            if not self.admitted:
                self._limiter.reserve(self.user_id, self.reserve, self.now)
                self.admitted = True

    def add(self, tokens: int) -> None:
        with self._lock:
            self.tokens += tokens

    def settle(self) -> None:
        """The reserve replaced by the usage reported (a failed operation gives its reserve back)."""
        if self.admitted:
            self._limiter.settle(self.user_id, self.tokens - self.reserve, self.now)


_charge: ContextVar[Charge | None] = ContextVar("skillcore_model_charge", default=None)


class Metered:
    """A ChatModel whose every answer's reported usage is added to the current operation's charge."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    def converse(self, request: ModelRequest) -> ModelResponse:
        charge = _charge.get()
        if charge is not None:
            charge.admit()  # the operation's first call: within the day's budget, or 429 budget_exhausted
        response = self._model.converse(request)
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
        """The model calls of the block charged to the user: the first one reserves `reserve` tokens of the day's
        budget (or raises 429 `budget_exhausted`), and the reserve is settled with the usage reported on the way
        out (a failed block too)."""
        now = now or self._clock()
        budget = self.limits.tokens_per_day
        charge = Charge(self, user_id, min(reserve, budget) if budget > 0 else 0, now)
        token = _charge.set(charge)
        try:
            yield charge
        finally:
            _charge.reset(token)
            charge.settle()

    def reserve(self, user_id: str, tokens: int, now: datetime) -> None:
        """`tokens` of the day's budget (one conditional UpdateItem), or 429 `budget_exhausted`; nothing with no
        budget configured."""
        budget = self.limits.tokens_per_day
        if budget > 0 and not store.reserve(self._db, user_id, tokens, budget, now):
            raise self.exhausted(user_id, now)

    def settle(self, user_id: str, tokens: int, now: datetime) -> None:
        store.add(self._db, user_id, tokens, now)

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
