"""The sharded, sparse "due" index shared by the two queues (background jobs, automation jobs).

An item that can be claimed carries `dueShard` ("due#0".."due#<N-1>", by a hash of its id) and `dueAt`
("<time ms>#<id>"); an item that cannot carries neither, so the index holds exactly the claimable items.
Spreading one instant's items over N partitions keeps each GSI partition's write rate within DynamoDB's
per-partition limit and gives the dispatcher N independent units of work to hand to concurrent workers.

N is a setting (`ShardLayout.write`, SKILLS_DUE_SHARDS). Changing it needs no migration: items are written
under the current count, and readers walk `ShardLayout.read` shards, the largest count ever used
(SKILLS_DUE_SHARDS_PREVIOUS), so an item written under an older, larger count is still found; a smaller
count's shards are a prefix of a larger one's. An item moves to its new shard the next time it is written.
"""

from __future__ import annotations

import contextlib
import hashlib
from datetime import datetime
from typing import Any

from skillcore.clock import to_sort_time
from skillcore.db.dynamo import SHARDS, Db, ShardLayout
from skillcore.db.errors import ConditionFailed
from skillcore.db.transact import Op, write

DUE_INDEX = "due"
__all__ = ["DUE_INDEX", "SHARDS", "ShardLayout", "due_attrs", "query_due", "quarantine", "shard"]


def shard(item_id: str, shards: int = SHARDS) -> int:
    return int.from_bytes(hashlib.sha256(item_id.encode()).digest()[:4], "big") % shards


def due_attrs(item_id: str, at: datetime, shards: int = SHARDS) -> dict[str, str]:
    return {"dueShard": f"due#{shard(item_id, shards)}", "dueAt": f"{to_sort_time(at)}#{item_id}"}


def query_due(db: Db, table: str, shard_no: int, now: datetime, *, limit: int) -> list[dict[str, Any]]:
    """One Query: the items of one shard due at or before `now`, earliest first (raw attribute values)."""
    response = db.client.query(
        TableName=table, IndexName=DUE_INDEX,
        KeyConditionExpression="#shard = :shard AND #due <= :bound",
        ExpressionAttributeNames={"#shard": "dueShard", "#due": "dueAt"},
        ExpressionAttributeValues={":shard": {"S": f"due#{shard_no}"}, ":bound": {"S": f"{to_sort_time(now)}#~"}},
        Limit=limit,
    )
    return list(response.get("Items", []))


def quarantine(db: Db, table: str, item_id: str, index_fields: tuple[str, ...], now: datetime) -> None:
    """Takes an unreadable item out of the sparse scan indexes (it stays in the table, untouched otherwise,
    with `unreadableAt`), so a scan logs it once instead of meeting it first in its shard forever. Saving a
    valid record over it (a fix, a restore) puts it back. An item gone meanwhile is fine."""
    names = {f"#r{i}": name for i, name in enumerate(index_fields)} | {"#pk": "pk", "#bad": "unreadableAt"}
    op = {
        "Update": {
            "TableName": table, "Key": {"pk": {"S": item_id}},
            "UpdateExpression": f"SET #bad = :at REMOVE {', '.join(f'#r{i}' for i in range(len(index_fields)))}",
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": {":at": {"S": to_sort_time(now)}},
        }
    }
    with contextlib.suppress(ConditionFailed):
        write(db, Op("quarantine", op))
