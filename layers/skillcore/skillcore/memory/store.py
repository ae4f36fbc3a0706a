"""Memories table.

Key design: pk = "<userId>#<agentId>", sk = memoryId. The local secondary index `byStatus` sorts a partition
by `statusKey` = "<status>#<updatedAt>#<memoryId>", so "the active memories of this user's agent" is one key
Query (begins_with "active#"), never a Scan or a filter; forgetting moves the item to "forgotten#...".
Access patterns: list by status (newest first), get one, put, conditional status change.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from skillcore.clock import parse_time, to_sort_time
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, key, query_page
from skillcore.db.errors import ConditionFailed
from skillcore.db.transact import Op, write
from skillcore.errors import NotFound
from skillcore.memory.models import MemoryItem, MemorySource, MemoryStatus

BY_STATUS = "byStatus"
ACTIVE_READ_LIMIT = 200  # an agent's active memories are read in one page; older ones beyond this are not recalled


def partition(user_id: str, agent_id: str) -> str:
    return f"{user_id}#{agent_id}"


def status_key(status: MemoryStatus, updated_at: datetime, memory_id: str) -> str:
    return f"{status.value}#{to_sort_time(updated_at)}#{memory_id}"


def to_memory_item(memory: MemoryItem) -> dict[str, Any]:
    return to_item({
        "pk": partition(memory.user_id, memory.agent_id),
        "sk": memory.memory_id,
        "userId": memory.user_id,
        "agentId": memory.agent_id,
        "title": memory.title,
        "content": memory.content,
        "importance": memory.importance,
        "status": memory.status.value,
        "source": memory.source.value,
        "createdAt": to_sort_time(memory.created_at),
        "updatedAt": to_sort_time(memory.updated_at),
        "statusKey": status_key(memory.status, memory.updated_at, memory.memory_id),
    })


def memory_from_item(item: dict[str, Any]) -> MemoryItem:
    return MemoryItem(
        memory_id=item["sk"], user_id=item["userId"], agent_id=item["agentId"], title=item["title"],
        content=item["content"], importance=int(item["importance"]), status=MemoryStatus(item["status"]),
        source=MemorySource(item["source"]), created_at=parse_time(item["createdAt"]),
        updated_at=parse_time(item["updatedAt"]),
    )


def list_active_agent_memories(db: Db, user_id: str, agent_id: str, *, limit: int = ACTIVE_READ_LIMIT) -> list[MemoryItem]:
    """The only read memory skills use: this user's, this agent's, active memories (newest first)."""
    page = query_page(
        db, table=db.tables.memories, index=BY_STATUS, partition=("pk", partition(user_id, agent_id)),
        limit=limit, cursor=None, newest_first=True, sort_condition="begins_with(#sk2, :prefix)",
        names={"#sk2": "statusKey"}, values={":prefix": f"{MemoryStatus.ACTIVE.value}#"},
    )
    return [memory_from_item(i) for i in page.items]


def list_memories(
    db: Db, user_id: str, agent_id: str, *, status: MemoryStatus, limit: int, cursor: str | None
) -> tuple[list[MemoryItem], str | None]:
    page = query_page(
        db, table=db.tables.memories, index=BY_STATUS, partition=("pk", partition(user_id, agent_id)),
        limit=limit, cursor=cursor, newest_first=True, sort_condition="begins_with(#sk2, :prefix)",
        names={"#sk2": "statusKey"}, values={":prefix": f"{status.value}#"},
    )
    return [memory_from_item(i) for i in page.items], page.next_cursor


def put_memory(db: Db, memory: MemoryItem) -> None:
    db.client.put_item(TableName=db.tables.memories, Item=to_memory_item(memory))


def get_memory(db: Db, user_id: str, agent_id: str, memory_id: str) -> MemoryItem | None:
    response = db.client.get_item(
        TableName=db.tables.memories, Key=key(pk=partition(user_id, agent_id), sk=memory_id), ConsistentRead=True
    )
    item = from_item(response.get("Item"))
    return memory_from_item(item) if item else None


def forget_memory(db: Db, user_id: str, agent_id: str, memory_id: str, now: datetime) -> MemoryItem:
    """Marks the memory forgotten; the key is built from the caller's own user and agent, so another
    owner's memory id simply does not exist here."""
    try:
        after = write(db, Op("memory", {"Update": {
            "TableName": db.tables.memories,
            "Key": key(pk=partition(user_id, agent_id), sk=memory_id),
            "UpdateExpression": "SET #status = :forgotten, #u = :now, #sk2 = :sk2",
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": {"#status": "status", "#u": "updatedAt", "#sk2": "statusKey", "#pk": "pk"},
            "ExpressionAttributeValues": {
                ":forgotten": to_value(MemoryStatus.FORGOTTEN.value), ":now": to_value(to_sort_time(now)),
                ":sk2": to_value(status_key(MemoryStatus.FORGOTTEN, now, memory_id)),
            },
        }}), return_values="ALL_NEW")
    except ConditionFailed as error:
        raise NotFound("memory not found") from error
    return memory_from_item(after or {})


