"""DynamoDB plumbing shared by the store modules.

- `Db` bundles the low-level client with the table names (the client API is used throughout: it is lighter
  to import and create than the resource API). Its client raises db/errors.py's types, never botocore's.
- `to_item`/`from_item` (db/codec.py) convert plain dicts to and from the attribute-value format.
- Writes with conditions go through db/transact.py (`transact`, `write`), which names each operation.
- Cursors are opaque, but they are checked to belong to the partition being listed.
- `make_client` bounds every call: its timeouts and attempts (StoreTimeouts), and no attempt starts that could
  not end before the invocation does (`time_left`).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore.db.codec import from_item, to_value
from skillcore.db.errors import StoreError, StoreUnavailable, translate
from skillcore.errors import invalid_cursor
from skillcore.settings import Settings, TableNames


class StoreClient:
    """A boto3 DynamoDB client whose calls raise db/errors.py's types: the one place botocore errors are
    translated, whoever builds the Db (the handlers, the tests, a hooked client in a test)."""

    __slots__ = ("_calls", "raw")

    def __init__(self, raw: Any):
        self.raw = raw
        self._calls: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        cached = self._calls.get(name)
        if cached is not None:
            return cached
        attr = getattr(self.raw, name)
        if name.startswith("_") or not callable(attr):
            return attr  # meta, exceptions: passed through (the bench hooks meta.events)

        def call(**kwargs: Any) -> Any:
            try:
                return attr(**kwargs)
            except (ClientError, BotoCoreError) as error:
                raise translate(error, name) from error

        self._calls[name] = call
        return call


SHARDS = 8  # the due-index shard count every item was written under before it became a setting


class ShardLayout(Struct, frozen=True):
    """The due index's shards (db/due_index.py). `write`: the count new writes use; `previous`: the largest
    count items may still be written under. Readers walk `read` shards, so no item is lost to a change."""

    write: int = SHARDS
    previous: int = SHARDS

    @property
    def read(self) -> int:
        return max(self.write, self.previous)


class Db(Struct, frozen=True):
    client: Any
    tables: TableNames
    shards: ShardLayout = ShardLayout()

    def __post_init__(self) -> None:
        if not isinstance(self.client, StoreClient):
            force_setattr(self, "client", StoreClient(self.client))


# What a request keeps for itself after its last store attempt: answering (503 or not) and returning.
ANSWER_MARGIN_SECONDS = 1.0


class NoTimeLeft(BotoCoreError):
    """An attempt that could not end before the invocation does was not started (a StoreUnavailable)."""

    fmt = "no attempt started: {left:.1f} s left, an attempt may take {attempt:.1f} s"


class StoreTimeouts(Struct, frozen=True):
    """How long one DynamoDB call may take, and the rule that keeps a request within its invocation.

    Each attempt takes at most `connect_s + read_s` (a stalled DynamoDB: the connection, then no answer), and
    botocore makes at most `attempts` of them in all (standard mode, `total_max_attempts`; its backoff between
    them is 25 ms x 2^i after a timeout, at most 1, 2, 4, 8 s after throttling). Alone that is up to
    5 x (2 + 5) s + 15 s = 50 s for one call, far past API Gateway's 30 s, and a request makes several calls
    (before this rule, a turn under a stopped DynamoDB answered 500 after 5 read timeouts, 25 s). So before
    each attempt (botocore's retries included) `deadline_check` asks the invocation's time left: an attempt
    starts only while `time_left - ANSWER_MARGIN_SECONDS >= connect_s + read_s`; otherwise the call fails at once with
    StoreUnavailable, which the router answers 503 `store_unavailable` with Retry-After. Hence the last
    attempt ends at least ANSWER_MARGIN_SECONDS (1 s) before the invocation's timeout, whatever the number
    of calls and retries: with the HTTP functions' Timeout of 29 s (template Globals, below API Gateway's
    30 s, which a unit test keeps), every answer leaves by 28 s after the invocation began. With the
    defaults, a DynamoDB that stops answering makes a request answer 503 when its stalled call has spent its 5
    attempts (5 read timeouts, 25 s) or when an attempt would start with fewer than 2 + 5 + 1 = 8 s left
    (after 21 s of a 29 s invocation), whichever comes first: by 28 s at the latest.
    """

    connect_s: float = 2.0
    read_s: float = 5.0
    attempts: int = 5

    @classmethod
    def of(cls, settings: Settings) -> StoreTimeouts:
        return cls(connect_s=settings.store_connect_timeout_ms / 1000, read_s=settings.store_read_timeout_ms / 1000,
                   attempts=settings.store_max_attempts)

    @property
    def attempt_s(self) -> float:
        """The longest one attempt may take."""
        return self.connect_s + self.read_s

    def deadline_check(self, time_left: Callable[[], float | None]) -> Callable[..., None]:
        """The `before-send` handler that refuses an attempt the invocation has no time for."""
        def check(**_: Any) -> None:
            left = time_left()
            if left is not None and left - ANSWER_MARGIN_SECONDS < self.attempt_s:
                raise NoTimeLeft(left=left, attempt=self.attempt_s)
        return check


def make_client(settings: Settings, time_left: Callable[[], float | None] | None = None) -> Any:
    """The DynamoDB client; `time_left` (seconds the invocation has left, None outside one) bounds each
    attempt as StoreTimeouts says. Without it only the timeouts and attempts bound a call (scripts, the worker)."""
    # imported here so modules that only describe items stay cheap to import
    from botocore.config import Config

    from skillcore.db.aws import client as aws_client

    timeouts = StoreTimeouts.of(settings)
    # A worker's items run on several threads at once, sharing this (thread-safe) client: a connection each.
    config = Config(retries={"mode": "standard", "total_max_attempts": timeouts.attempts},
                    connect_timeout=timeouts.connect_s, read_timeout=timeouts.read_s,
                    max_pool_connections=max(10, 2 * settings.worker_concurrency))
    client = aws_client(
        "dynamodb", region_name=settings.region, endpoint_url=settings.dynamodb_endpoint, config=config
    )
    if time_left is not None:
        client.meta.events.register("before-send.dynamodb", timeouts.deadline_check(time_left))
    return client


def make_db(settings: Settings, time_left: Callable[[], float | None] | None = None) -> Db:
    return Db(client=make_client(settings, time_left), tables=settings.tables,
              shards=ShardLayout(write=settings.due_shards, previous=settings.due_shards_previous))


def key(**parts: str) -> dict[str, Any]:
    return {k: {"S": v} for k, v in parts.items()}


def batch_get(db: Db, wanted: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """One BatchGetItem (consistent reads) over several tables, re-asking for unprocessed keys; returns
    the items found per table, deserialised. Tables with no keys are left out of the request."""
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in wanted}
    request: dict[str, Any] = {t: {"Keys": keys, "ConsistentRead": True} for t, keys in wanted.items() if keys}
    while request:
        response = db.client.batch_get_item(RequestItems=request)
        for table, items in response.get("Responses", {}).items():
            found[table].extend(from_item(i) or {} for i in items)
        request = response.get("UnprocessedKeys") or {}
    return found


BATCH_PUT_ATTEMPTS = 5


def batch_put(db: Db, puts: dict[str, list[dict[str, Any]]], *, sleep: Any = time.sleep) -> None:
    """Unconditional Puts of items (attribute-value format) over several tables in one BatchWriteItem, the
    unprocessed ones sent again after a short pause. Not atomic: for items whose only rule is to be written
    (each is whole, and written by one caller). Raises StoreUnavailable if some stay unprocessed (DynamoDB
    leaves items unprocessed when it throttles)."""
    request: dict[str, Any] = {t: [{"PutRequest": {"Item": i}} for i in items] for t, items in puts.items() if items}
    for attempt in range(BATCH_PUT_ATTEMPTS):
        if not request:
            return
        if attempt:
            sleep(0.01 * 2**attempt)
        request = db.client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    if request:
        raise StoreUnavailable("some items stayed unprocessed", code="UnprocessedItems", operation="BatchWriteItem")


def encode_cursor(last_key: dict[str, Any] | None) -> str | None:
    if not last_key:
        return None
    raw = json.dumps(last_key, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, *, partition: tuple[str, str]) -> dict[str, Any] | None:
    """Decodes a cursor and checks it belongs to `partition` (attribute, value): a cursor never crosses owners."""
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not isinstance(decoded, dict) or not all(
            isinstance(v, dict) and len(v) == 1 and isinstance(next(iter(v.values())), str) for v in decoded.values()
        ):
            raise ValueError("bad shape")
        attr, value = partition
        if decoded.get(attr) != {"S": value}:
            raise ValueError("foreign cursor")
        return decoded
    except (ValueError, TypeError, json.JSONDecodeError) as error:
        raise invalid_cursor() from error


class Page(Struct, frozen=True):
    items: list[dict[str, Any]]
    next_cursor: str | None


def query_page(
    db: Db,
    *,
    table: str,
    partition: tuple[str, str],
    limit: int,
    cursor: str | None,
    index: str | None = None,
    newest_first: bool = False,
    sort_condition: str | None = None,
    values: dict[str, Any] | None = None,
    names: dict[str, str] | None = None,
    filter_expression: str | None = None,
) -> Page:
    """One Query for one page of a partition. With a filter, DynamoDB may return fewer than `limit` items
    with a cursor; the caller still gets a correct cursor."""
    attr, value = partition
    expr_names = {"#pk": attr, **(names or {})}
    expr_values = {":pk": {"S": value}, **{k: to_value(v) for k, v in (values or {}).items()}}
    condition = "#pk = :pk" + (f" AND {sort_condition}" if sort_condition else "")
    params: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": condition,
        "ExpressionAttributeNames": expr_names,
        "ExpressionAttributeValues": expr_values,
        "Limit": limit,
        "ScanIndexForward": not newest_first,
    }
    if index:
        params["IndexName"] = index
    if filter_expression:
        params["FilterExpression"] = filter_expression
    start = decode_cursor(cursor, partition=partition)
    if start:
        params["ExclusiveStartKey"] = start
    try:
        response = db.client.query(**params)
    except StoreError as error:
        if start and error.code == "ValidationException":
            raise invalid_cursor() from error
        raise
    items = [from_item(i) or {} for i in response.get("Items", [])]
    return Page(items=items, next_cursor=encode_cursor(response.get("LastEvaluatedKey")))
