"""Agents table.

Key design: pk = userId, sk = agentId. Agents are immutable after creation except `lastReplyAt`.
Access patterns: get one (pk+sk), list a user's agents (Query pk, oldest first), batch-get several
(group conversation creation), bump lastReplyAt (inside the chat turn's transaction).
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from skillcore.clock import parse_time, to_api_time
from skillcore.conversations.models import Agent
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, Page, batch_get, key, query_page
from skillcore.db.errors import ConditionFailed
from skillcore.db.transact import Op, write


def agent_key(user_id: str, agent_id: str) -> dict[str, Any]:
    return key(pk=user_id, sk=agent_id)


def to_agent_item(agent: Agent) -> dict[str, Any]:
    return to_item(
        {
            "pk": agent.user_id,
            "sk": agent.agent_id,
            "name": agent.name,
            "persona": agent.persona,
            "defaultConversationId": agent.default_conversation_id,
            "lastReplyAt": to_api_time(agent.last_reply_at) if agent.last_reply_at else None,
            "createdAt": to_api_time(agent.created_at),
        }
    )


def agent_from_item(item: dict[str, Any]) -> Agent:
    return Agent(
        user_id=item["pk"],
        agent_id=item["sk"],
        name=item["name"],
        persona=item.get("persona", ""),
        default_conversation_id=item["defaultConversationId"],
        last_reply_at=parse_time(item["lastReplyAt"]) if item.get("lastReplyAt") else None,
        created_at=parse_time(item["createdAt"]),
    )


def get_agent(db: Db, user_id: str, agent_id: str) -> Agent | None:
    item = from_item(db.client.get_item(TableName=db.tables.agents, Key=agent_key(user_id, agent_id)).get("Item"))
    return agent_from_item(item) if item else None


def get_agents(db: Db, user_id: str, agent_ids: list[str]) -> dict[str, Agent]:
    """BatchGetItem for up to 100 agents; unprocessed keys are retried."""
    keys = [agent_key(user_id, a) for a in dict.fromkeys(agent_ids)]
    agents = (agent_from_item(item) for item in batch_get(db, {db.tables.agents: keys})[db.tables.agents])
    return {agent.agent_id: agent for agent in agents}


def list_agents(db: Db, user_id: str, *, limit: int, cursor: str | None) -> tuple[list[Agent], str | None]:
    page: Page = query_page(db, table=db.tables.agents, partition=("pk", user_id), limit=limit, cursor=cursor)
    return [agent_from_item(i) for i in page.items], page.next_cursor


def put_agent_op(db: Db, agent: Agent) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": db.tables.agents,
            "Item": to_agent_item(agent),
            "ConditionExpression": "attribute_not_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": "pk"},
        }
    }


def touch_last_reply_op(db: Db, user_id: str, agent_id: str, at: datetime) -> dict[str, Any]:
    return {
        "Update": {
            "TableName": db.tables.agents,
            "Key": agent_key(user_id, agent_id),
            "UpdateExpression": "SET #lr = :at",
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": {"#lr": "lastReplyAt", "#pk": "pk"},
            "ExpressionAttributeValues": {":at": to_value(to_api_time(at))},
        }
    }


def advance_last_reply(db: Db, user_id: str, agent_id: str, at: datetime) -> None:
    """Sets lastReplyAt unless a later reply already did (never backwards)."""
    agent_exists, not_later = "attribute_exists(#pk)", "(attribute_not_exists(#lr) OR #lr <= :at)"
    with contextlib.suppress(ConditionFailed):  # absent, or a later reply got there first
        write(db, Op("agent_last_reply", {"Update": {
            "TableName": db.tables.agents, "Key": agent_key(user_id, agent_id),
            "UpdateExpression": "SET #lr = :at",
            "ConditionExpression": f"{agent_exists} AND {not_later}",
            "ExpressionAttributeNames": {"#lr": "lastReplyAt", "#pk": "pk"},
            "ExpressionAttributeValues": {":at": to_value(to_api_time(at))},
        }}))
