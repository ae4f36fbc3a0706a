"""Per-user limits without a store: the router and the toolbox ask the injected limiter before a limited
route's handler (429 with Retry-After and the details, the handler never called), every mutation counts as a
write unless it declares its class, and the limiter's arithmetic (windows, resets, reserves settled with the
usage the model reported). The counters' conditional updates themselves are DynamoDB's: tests/integration
(moto) and tests/stack (DynamoDB Local, threads) check them."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from msgspec import Struct
from pydantic import BaseModel

from skillcore.api.app import Caller, Routes
from skillcore.api.toolbox import Toolbox
from skillcore.limits import service, store
from skillcore.limits.errors import BudgetExhausted, RateLimited
from skillcore.limits.models import Limits, RateClass, resets_at, retry_after, window_of
from skillcore.limits.service import Limiter, Metered
from skillcore.model.port import ModelRequest, ModelResponse
from tests.unit.test_router import event

NOW = datetime(2026, 12, 4, 21, 30, 15, 500_000, tzinfo=UTC)


class Echo(Struct, frozen=True):
    ok: bool


class Nothing(BaseModel):
    pass


class CountingLimiter:
    """M requests of each class per user, then 429 as the real limiter answers it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.taken: Counter[tuple[str, RateClass | None, bool]] = Counter()

    @contextmanager
    def admit(self, user_id: str, rate_class: RateClass | None, *, model: bool = False) -> Iterator[None]:
        key = (user_id, rate_class, model)
        if self.taken[key] >= self.limit:
            raise RateLimited(rate_class=str(rate_class), limit=self.limit, retry_after_seconds=retry_after(NOW))
        self.taken[key] += 1
        yield


def routes_with(limiter: CountingLimiter, called: list[str]) -> Routes:
    routes = Routes()
    routes.limiter = limiter

    def chat(caller: Caller) -> Echo:
        called.append("chat")
        return Echo(ok=True)

    def write(caller: Caller) -> Echo:
        called.append("write")
        return Echo(ok=True)

    def read(caller: Caller) -> Echo:
        called.append("read")
        return Echo(ok=True)

    routes.route("POST", "/rpc/chat", response=Echo, rate=RateClass.CHAT, model=True)(chat)
    routes.route("PUT", "/rpc/thing", response=Echo)(write)
    routes.route("GET", "/rpc/thing", response=Echo)(read)
    return routes


def test_a_limited_route_answers_429_with_retry_after_and_never_runs_its_handler() -> None:
    limiter, called = CountingLimiter(2), []
    routes = routes_with(limiter, called)
    answers = [routes.resolve(event("POST", "/rpc/chat")) for _ in range(3)]
    assert [a["statusCode"] for a in answers] == [200, 200, 429]
    assert called == ["chat", "chat"]
    refused = answers[2]
    body = json.loads(refused["body"])["error"]
    assert body["code"] == "rate_limited"
    assert refused["headers"]["Retry-After"] == str(body["details"]["retryAfterSeconds"]) == "45"
    assert limiter.taken[("u-1", RateClass.CHAT, True)] == 2


def test_every_mutation_counts_as_a_write_and_a_read_counts_nowhere() -> None:
    limiter, called = CountingLimiter(1), []
    routes = routes_with(limiter, called)
    assert [routes.resolve(event("PUT", "/rpc/thing"))["statusCode"] for _ in range(2)] == [200, 429]
    assert [routes.resolve(event("GET", "/rpc/thing"))["statusCode"] for _ in range(3)] == [200, 200, 200]
    assert called == ["write", "read", "read", "read"]
    assert set(limiter.taken) == {("u-1", RateClass.WRITES, False)}
    assert {r.path: r.rate for r in routes.operations if r.method != "POST"} == {"/rpc/thing": None}
    assert [(r.method, r.rate) for r in routes.operations] == [
        ("POST", RateClass.CHAT), ("PUT", RateClass.WRITES), ("GET", None)]


def test_a_router_without_a_limiter_checks_nothing() -> None:
    called: list[str] = []
    routes = routes_with(CountingLimiter(0), called)
    routes.limiter = None
    assert routes.resolve(event("POST", "/rpc/chat"))["statusCode"] == 200


def test_a_tool_of_a_class_is_limited_as_its_route() -> None:
    toolbox = Toolbox()
    toolbox.limiter = CountingLimiter(1)

    @toolbox.tool("start_something", arguments=Nothing, rate=RateClass.DRAFTING, model=True)
    def start(caller: Caller, arguments: Nothing) -> Echo:
        """Starts something."""
        return Echo(ok=True)

    caller = Caller("user-alice", False)
    first, second = toolbox.call(caller, "start_something", {}), toolbox.call(caller, "start_something", {})
    assert not first.is_error and second.is_error
    assert second.body["error"]["code"] == "rate_limited"
    assert {e.code for e in toolbox.tools[0].documented_errors()} >= {"rate_limited", "budget_exhausted"}


def test_windows_retry_after_and_the_budget_reset() -> None:
    assert window_of(NOW) == int(datetime(2026, 12, 4, 21, 30, tzinfo=UTC).timestamp())
    assert retry_after(NOW) == 45  # 44.5 s left, rounded up
    assert retry_after(datetime(2026, 12, 4, 21, 30, 59, 999_000, tzinfo=UTC)) == 1
    assert resets_at(NOW) == datetime(2026, 12, 5, tzinfo=UTC)


class Ledger:
    """The limits store's functions on a dict, with DynamoDB's conditions (one caller at a time here)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rates: Counter[str] = Counter()
        self.used: Counter[str] = Counter()
        monkeypatch.setattr(store, "take", self.take)
        monkeypatch.setattr(store, "reserve", self.reserve)
        monkeypatch.setattr(store, "add", self.add)
        monkeypatch.setattr(store, "used", lambda db, user, now: self.used[user])

    def take(self, db: Any, user: str, rate_class: RateClass, limit: int, now: datetime) -> bool:
        if self.rates[f"{user}#{rate_class}"] >= limit:
            return False
        self.rates[f"{user}#{rate_class}"] += 1
        return True

    def reserve(self, db: Any, user: str, tokens: int, budget: int, now: datetime) -> bool:
        if self.used[user] and self.used[user] > budget - tokens:
            return False
        self.used[user] += tokens
        return True

    def add(self, db: Any, user: str, tokens: int, now: datetime) -> None:
        self.used[user] += tokens


class Model:
    def converse(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="hi", input_tokens=70, output_tokens=30)


def limiter(per_minute: int = 2, tokens_per_day: int = 1000) -> Limiter:
    limits = Limits(per_minute={c: per_minute for c in RateClass}, tokens_per_day=tokens_per_day)
    return Limiter(None, limits, clock=lambda: NOW, reserve=lambda c: 400)  # type: ignore[arg-type]


def test_a_model_backed_operation_reserves_then_settles_with_the_reported_usage(monkeypatch: pytest.MonkeyPatch) -> None:
    ledger, model = Ledger(monkeypatch), Metered(Model())
    request = ModelRequest(system=(), messages=())
    with limiter().admit("alice", RateClass.CHAT, model=True):
        assert ledger.used["alice"] == 0  # nothing reserved before the model is asked
        model.converse(request)
        assert ledger.used["alice"] == 400  # reserved by the first call, while the operation runs
        model.converse(request)
    assert ledger.used["alice"] == 200  # two answers of 100 tokens, the reserve settled
    with limiter().admit("alice", RateClass.CHAT, model=True):
        pass  # a turn that never asks the model (a replay, a workflow step) costs the budget nothing
    assert ledger.used["alice"] == 200
    model.converse(request)  # outside an operation: charged to no one
    assert ledger.used["alice"] == 200


def test_a_failed_operation_gives_its_reserve_back(monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger(monkeypatch)
    with pytest.raises(RuntimeError), limiter().admit("alice", RateClass.DRAFTING, model=True):
        Metered(Model()).converse(ModelRequest(system=(), messages=()))
        raise RuntimeError("the operation failed after its model call")
    assert ledger.used["alice"] == 100
    ledger.used["alice"] = 0
    with pytest.raises(RuntimeError), limiter().admit("alice", RateClass.DRAFTING, model=True):
        raise RuntimeError("the operation failed before its model call")
    assert ledger.used["alice"] == 0


def test_over_the_budget_is_429_budget_exhausted_with_the_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger(monkeypatch)
    ledger.used["alice"] = 700  # 400 more would pass 1000
    with pytest.raises(BudgetExhausted) as refused, limiter().admit("alice", RateClass.CHAT, model=True):
        Metered(Model()).converse(ModelRequest(system=(), messages=()))
        raise AssertionError("not admitted")
    assert refused.value.details == {"tokensPerDay": 1000, "resetsAt": "2026-12-05T00:00:00Z",
                                     "retryAfterSeconds": 8984}
    assert ledger.used["alice"] == 700 and ledger.rates["alice#chat"] == 1  # the request was counted first
    assert limiter().budget_left("alice", NOW)  # 700 of 1000: a run may still start
    ledger.used["alice"] = 1000
    assert not limiter().budget_left("alice", NOW)
    assert limiter(tokens_per_day=0).budget_left("alice", NOW)  # no budget configured


def test_a_class_of_limit_zero_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger(monkeypatch)
    for _ in range(5):
        with limiter(per_minute=0).admit("alice", RateClass.WRITES):
            pass
    assert not ledger.rates
    with pytest.raises(RateLimited):
        for _ in range(3):
            with limiter(per_minute=2).admit("alice", RateClass.WRITES):
                pass


def test_the_charge_is_per_context(monkeypatch: pytest.MonkeyPatch) -> None:
    Ledger(monkeypatch)
    assert service._charge.get() is None
    with limiter().charged("alice", 10) as charge:
        assert service._charge.get() is charge
    assert service._charge.get() is None
