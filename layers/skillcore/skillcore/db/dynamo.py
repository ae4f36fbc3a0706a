"""DynamoDB plumbing shared by the store modules.

- `Db` bundles the low-level client with the table names (the client API is used throughout: it is lighter
  to import and create than the resource API). Its client raises db/errors.py's types, never botocore's.
- `to_item`/`from_item` (db/codec.py) convert plain dicts to and from the attribute-value format.
- Writes with conditions go through db/transact.py (`transact`, `write`), which names each operation.
- Cursors are opaque, but they are checked to belong to the partition being listed.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore.db.codec import from_item, to_value
from skillcore.db.errors import StoreError, translate
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


def make_client(settings: Settings) -> Any:
    import boto3  # imported here so modules that only describe items stay cheap to import
    from botocore.config import Config

    # A worker's items run on several threads at once, sharing this (thread-safe) client: a connection each.
    config = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=2, read_timeout=5,
                    max_pool_connections=max(10, 2 * settings.worker_concurrency))
    return boto3.client(
        "dynamodb", region_name=settings.region, endpoint_url=settings.dynamodb_endpoint, config=config
    )


def make_db(settings: Settings) -> Db:
    return Db(client=make_client(settings), tables=settings.tables,
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
    (each is whole, and written by one caller). Raises StoreError if some stay unprocessed."""
    request: dict[str, Any] = {t: [{"PutRequest": {"Item": i}} for i in items] for t, items in puts.items() if items}
    for attempt in range(BATCH_PUT_ATTEMPTS):
        if not request:
            return
        if attempt:
            sleep(0.01 * 2**attempt)
        request = db.client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    if request:
        raise StoreError("some items stayed unprocessed", code="UnprocessedItems", operation="BatchWriteItem")


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
