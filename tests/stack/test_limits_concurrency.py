"""Per-user limits under real concurrency, against DynamoDB Local.

Threads start together behind a barrier:
- over real HTTP (the local gateway and ChatTurnFunction): limit + 10 chat turns of one user at once over
  SKILLS_RATE_CHAT_PER_MINUTE (the test stack's 60, tests/local_stack.py: 70 turns) let exactly the limit
  through; the other 10 are 429 `rate_limited` with `Retry-After` equal to `details.retryAfterSeconds`, and
  wrote nothing;
- through the store with one client per thread: 40 requests over a limit of 7 take exactly 7; 40 reserves of
  100 tokens in a budget of 1,000 admit exactly 10;
- the day's budget spent: a chat turn is 429 `budget_exhausted` with `details.resetsAt` (the next UTC
  midnight) and `GET /rpc/usage` shows it;
- the open drafts: the 6th draft of a user holding 5 open ones is 422 `quota_exceeded` (`drafts`).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from skillcore.db.dynamo import Db, make_db
from skillcore.limits import store
from skillcore.limits.models import RateClass
from skillcore.settings import Settings
from tests.support import together

from .conftest import Caller, LocalTables, StackClient


def early_in_a_minute(margin_s: float = 25.0) -> None:
    """Waits for a fresh minute when fewer than `margin_s` seconds of this one are left: a race must not straddle
    two windows (each has its own counter)."""
    left = 60 - time.time() % 60
    if left < margin_s:
        time.sleep(left + 0.2)


def test_parallel_chat_turns_over_the_rate_let_exactly_the_limit_through(stack: StackClient) -> None:
    user = Caller(stack, "limits")
    conversation = user.agent()["defaultConversationId"]
    limit = Settings.from_env(stack.env).rate_chat_per_minute
    n = limit + 10
    early_in_a_minute()
    started = time.perf_counter()
    answers = together(n, lambda i: stack.request(
        "POST", f"/rpc/conversations/{conversation}/messages", token=user.auth,
        body={"clientMessageId": f"m-{i}", "text": f"hello {i}"}, timeout=60.0))
    elapsed = time.perf_counter() - started
    statuses = Counter(a.status for a in answers)
    print(f"\nrate limit over HTTP: {n} parallel chat turns over a limit of {limit}: {statuses[200]} through, "
          f"{statuses[429]} rate_limited, in {elapsed:.2f} s")
    assert statuses == {200: limit, 429: n - limit}, statuses
    for refused in (a for a in answers if a.status == 429):
        error = refused.json()["error"]
        assert error["code"] == "rate_limited" and error["details"]["rateClass"] == "chat"
        assert refused.header("Retry-After") == str(error["details"]["retryAfterSeconds"])
        assert 1 <= error["details"]["retryAfterSeconds"] <= 60
    # Only the admitted turns were written: the history holds their 2 messages each (read to its last page).
    items: list[Any] = []
    cursor = ""
    while True:
        page = user.ok("GET", f"/rpc/conversations/{conversation}/messages?limit=100{cursor}")
        items += page["items"]
        if not page["nextCursor"]:
            break
        cursor = f"&cursor={page['nextCursor']}"
    assert len(items) == 2 * limit


def test_parallel_takes_and_reserves_in_the_store_admit_exactly_the_limit(ddb_local: LocalTables) -> None:
    settings = Settings.from_env(ddb_local.env)
    dbs: list[Db] = [make_db(settings) for _ in range(40)]  # one client per thread, as separate Lambdas
    user, now = f"store-{uuid.uuid4().hex[:12]}", datetime.now(UTC)

    taken = together(40, lambda i: store.take(dbs[i], user, RateClass.WRITES, 7, now))
    reserved = together(40, lambda i: store.reserve(dbs[i], user, 100, 1_000, now))
    print(f"\nin the store: 40 takes over a limit of 7: {sum(taken)} taken; "
          f"40 reserves of 100 in a budget of 1000: {sum(reserved)} admitted")
    assert sum(taken) == 7 and sum(reserved) == 10
    assert store.used(dbs[0], user, now) == 1_000
    store.add(dbs[0], user, -250, now)  # settled: 250 of the reserves were not used
    assert store.reserve(dbs[0], user, 100, 1_000, now) and store.used(dbs[0], user, now) == 850
    # The next minute is a new counter.
    assert store.take(dbs[0], user, RateClass.WRITES, 7, now + timedelta(seconds=60))


def test_a_spent_budget_is_429_budget_exhausted_and_the_meter_shows_it(stack: StackClient) -> None:
    user = Caller(stack, "budget")
    conversation = user.agent()["defaultConversationId"]
    usage = user.ok("GET", "/rpc/usage")
    assert usage["tokensUsed"] == 0 and usage["tokensPerDay"] == Settings.from_env(stack.env).model_tokens_per_day
    assert set(usage["ratesPerMinute"]) == {c.value for c in RateClass}

    user.ok("POST", f"/rpc/conversations/{conversation}/messages", {"clientMessageId": "m-1", "text": "hello"})
    after_one = user.ok("GET", "/rpc/usage")["tokensUsed"]
    assert after_one > 0  # the offline model's reported usage, the reserve settled

    db = make_db(Settings.from_env(stack.env))
    now = datetime.now(UTC)
    store.add(db, user.user, usage["tokensPerDay"], now)
    response = stack.request("POST", f"/rpc/conversations/{conversation}/messages", token=user.auth,
                             body={"clientMessageId": "m-2", "text": "again"})
    error = response.json()["error"]
    assert response.status == 429 and error["code"] == "budget_exhausted", error
    tomorrow = (now + timedelta(days=1)).strftime("%Y-%m-%dT00:00:00Z")
    assert error["details"]["resetsAt"] == tomorrow
    assert response.header("Retry-After") == str(error["details"]["retryAfterSeconds"])
    meter = user.ok("GET", "/rpc/usage")
    assert meter["tokensUsed"] == after_one + usage["tokensPerDay"] and meter["resetsAt"] == tomorrow


def test_the_draft_over_the_open_drafts_quota_is_refused(stack: StackClient) -> None:
    user = Caller(stack, "drafts")
    limit = Settings.from_env(stack.env).max_open_drafts
    early_in_a_minute(margin_s=40.0)  # the drafting rate, where it is as low as the quota, must not cut in first
    for i in range(limit):
        user.ok("POST", "/rpc/user-capability-drafts", {"description": f"a daily routine number {i}"}, status=201)
    status, body = user.call("POST", "/rpc/user-capability-drafts", {"description": "one routine too many"})
    assert status == 422 and body["error"]["code"] == "quota_exceeded", body
    assert body["error"]["details"] == {"quota": "drafts", "limit": limit}
