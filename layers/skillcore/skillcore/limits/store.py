"""Limits table: skillcore-limits. One small item per counter, each changed by ONE conditional UpdateItem.

Key design: pk = userId, sk = the counter:
- `rate#<class>#<window>`: the requests of one route class in one fixed minute (`window` = epoch seconds of
  the minute's start), attribute `n`. Taking a request is `ADD n :1` conditioned on `attribute_not_exists(n)
  OR n < :limit`: DynamoDB applies the updates of one item one at a time, so of N concurrent requests over a
  limit of M exactly M succeed and the others fail the condition (nothing written). Why a fixed-window counter
  and not a refilling token bucket: an update expression has `+` and `-` but no multiplication, no min() and no
  conditional SET, so "tokens + elapsed x rate, capped at the burst" cannot be computed by DynamoDB in the same
  request; a bucket would need a read and a conditional write (two requests, and retries under contention).
  The price of the window: a client may spend a minute's limit at the end of one minute and again at the
  start of the next (at most twice the limit within any 60 s).
- `tokens#<YYYY-MM-DD>`: the day's (UTC) model tokens, attribute `used`. A model-backed operation reserves its
  expected tokens first (`ADD used :reserve` conditioned on `attribute_not_exists(used) OR used <= :room`,
  room = budget - reserve: exact under concurrency, as above) and settles after its model calls with the usage
  the model reported (`ADD used :actual - reserve`, no condition; a failed operation gives its reserve back).
Every item carries `ttl` (epoch seconds, the table's TTL attribute): a minute's counter is deleted a few minutes
after its window (DynamoDB deletes lazily; the window in the key keeps an old counter from ever counting
again), a day's budget two days after.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from skillcore.db.codec import to_value
from skillcore.db.dynamo import Db, key
from skillcore.db.errors import ConditionFailed
from skillcore.limits.models import WINDOW_SECONDS, RateClass, day_of, window_of

RATE_TTL_SECONDS = 5 * WINDOW_SECONDS
BUDGET_TTL_SECONDS = 2 * 86_400


def rate_key(user_id: str, rate_class: RateClass, now: datetime) -> dict[str, Any]:
    return key(pk=user_id, sk=f"rate#{rate_class.value}#{window_of(now)}")


def budget_key(user_id: str, now: datetime) -> dict[str, Any]:
    return key(pk=user_id, sk=f"tokens#{day_of(now)}")


def take(db: Db, user_id: str, rate_class: RateClass, limit: int, now: datetime) -> bool:
    """One request of `rate_class` in the current minute, if fewer than `limit` were taken: True, else False."""
    try:
        db.client.update_item(
            TableName=db.tables.limits, Key=rate_key(user_id, rate_class, now),
            UpdateExpression="ADD #n :one SET #ttl = :ttl",
            ConditionExpression="attribute_not_exists(#n) OR #n < :limit",
            ExpressionAttributeNames={"#n": "n", "#ttl": "ttl"},
            ExpressionAttributeValues={":one": to_value(1), ":limit": to_value(limit),
                                       ":ttl": to_value(window_of(now) + RATE_TTL_SECONDS)},
        )
    except ConditionFailed:
        return False
    return True


def reserve(db: Db, user_id: str, tokens: int, budget: int, now: datetime) -> bool:
    """`tokens` of the day's budget, if they fit (used + tokens <= budget, or nothing used yet): True, else False."""
    try:
        db.client.update_item(
            TableName=db.tables.limits, Key=budget_key(user_id, now),
            UpdateExpression="ADD #used :tokens SET #ttl = if_not_exists(#ttl, :ttl)",
            ConditionExpression="attribute_not_exists(#used) OR #used <= :room",
            ExpressionAttributeNames={"#used": "used", "#ttl": "ttl"},
            ExpressionAttributeValues={":tokens": to_value(tokens), ":room": to_value(budget - tokens),
                                       ":ttl": to_value(int(now.timestamp()) + BUDGET_TTL_SECONDS)},
        )
    except ConditionFailed:
        return False
    return True


def add(db: Db, user_id: str, tokens: int, now: datetime) -> None:
    """`tokens` more (or fewer: a reserve given back) on the day of `now`."""
    if tokens == 0:
        return
    db.client.update_item(
        TableName=db.tables.limits, Key=budget_key(user_id, now),
        UpdateExpression="ADD #used :tokens SET #ttl = if_not_exists(#ttl, :ttl)",
        ExpressionAttributeNames={"#used": "used", "#ttl": "ttl"},
        ExpressionAttributeValues={":tokens": to_value(tokens),
                                   ":ttl": to_value(int(now.timestamp()) + BUDGET_TTL_SECONDS)},
    )


def used(db: Db, user_id: str, now: datetime) -> int:
    """The day's tokens so far (one GetItem)."""
    item = db.client.get_item(TableName=db.tables.limits, Key=budget_key(user_id, now),
                              ProjectionExpression="#used", ExpressionAttributeNames={"#used": "used"}).get("Item")
    return max(0, int(item["used"]["N"])) if item and "used" in item else 0
