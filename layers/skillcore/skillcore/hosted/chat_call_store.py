"""Hosted calls asked for in a chat and waiting for their approval: items in skill_hosted_endpoints, one per
approval, so that the call can run once its owner approves it, in the chat (hosted/chat.py) or by API
(`POST /rpc/approvals/{approvalId}`, HostedFunction), and its result be posted to the conversation it was asked
in.

Why here: the call needs its arguments again (the approval keeps only their digest and a cut preview), and the
item belongs to one of the user's endpoints (same partition `pk = userId` as the endpoints and the call
records, hosted/call_store.py), in a table both functions that call out already use.

Item: sk = `chatcall#<approvalId>`; `conversationId`, `agentId`, `endpointId`, `endpointName`, `toolName`,
`arguments` (JSON text: the user's own input, never audited or logged), `clientCallId`, `askedAt`, `language`, `expiresTtl`
(a day after the ask; the approval itself expires after ten minutes). The item is deleted when its approval is
decided, so those that exist are the pending ones (or expired ones, until the TTL removes them).

Access patterns: put with the turn that asks (`put_op`, in the turn's transaction); get by approval id (the
API decision); Query `begins_with(sk, "chatcall#")` filtered on the conversation (an answer in the chat, only
when the message has the answer's form); delete (`delete_op`) with the message that reports the outcome.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from msgspec import Struct

from skillcore.clock import parse_time, to_sort_time
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, key

CHAT_CALL = "chatcall#"
ITEM_TTL = timedelta(days=1)


class ChatCall(Struct, frozen=True, kw_only=True):
    user_id: str
    approval_id: str
    conversation_id: str
    agent_id: str
    endpoint_id: str
    endpoint_name: str
    tool_name: str
    arguments: dict[str, Any]
    client_call_id: str
    asked_at: datetime
    language: str = "zh"  # of the turn that asked: the follow-up message speaks it too

    @property
    def short_code(self) -> str:
        return short_code(self.approval_id)


def short_code(approval_id: str) -> str:
    """What the user may type to name an approval in the chat: its last six characters."""
    return approval_id[-6:].upper()


def chat_call_key(user_id: str, approval_id: str) -> dict[str, Any]:
    return key(pk=user_id, sk=f"{CHAT_CALL}{approval_id}")


def put_op(db: Db, call: ChatCall) -> dict[str, Any]:
    item = {
        "pk": call.user_id, "sk": f"{CHAT_CALL}{call.approval_id}", "approvalId": call.approval_id,
        "conversationId": call.conversation_id, "agentId": call.agent_id, "endpointId": call.endpoint_id,
        "endpointName": call.endpoint_name, "toolName": call.tool_name,
        "arguments": json.dumps(call.arguments, ensure_ascii=False, sort_keys=True),
        "clientCallId": call.client_call_id, "askedAt": to_sort_time(call.asked_at), "language": call.language,
        "expiresTtl": int((call.asked_at + ITEM_TTL).timestamp()),
    }
    return {"Put": {"TableName": db.tables.hosted_endpoints, "Item": to_item(item)}}


def delete_op(db: Db, user_id: str, approval_id: str) -> dict[str, Any]:
    return {"Delete": {"TableName": db.tables.hosted_endpoints, "Key": chat_call_key(user_id, approval_id)}}


def from_chat_item(item: dict[str, Any]) -> ChatCall:
    data = from_item(item) or {}
    return ChatCall(
        user_id=data["pk"], approval_id=data["approvalId"], conversation_id=data["conversationId"],
        agent_id=data["agentId"], endpoint_id=data["endpointId"], endpoint_name=data["endpointName"],
        tool_name=data["toolName"], arguments=json.loads(data["arguments"]), client_call_id=data["clientCallId"],
        asked_at=parse_time(data["askedAt"]), language=data.get("language", "zh"),
    )


def get(db: Db, user_id: str, approval_id: str) -> ChatCall | None:
    item = db.client.get_item(TableName=db.tables.hosted_endpoints, Key=chat_call_key(user_id, approval_id),
                              ConsistentRead=True).get("Item")
    return from_chat_item(item) if item else None


def pending_in(db: Db, user_id: str, conversation_id: str) -> list[ChatCall]:
    """The calls of this conversation still waiting for a decision, oldest first."""
    found: list[ChatCall] = []
    params: dict[str, Any] = {
        "TableName": db.tables.hosted_endpoints, "ConsistentRead": True,
        "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
        "FilterExpression": "#conv = :conv",
        "ExpressionAttributeNames": {"#pk": "pk", "#sk": "sk", "#conv": "conversationId"},
        "ExpressionAttributeValues": {":pk": to_value(user_id), ":prefix": to_value(CHAT_CALL),
                                      ":conv": to_value(conversation_id)},
    }
    while True:
        page = db.client.query(**params)
        found.extend(from_chat_item(i) for i in page.get("Items", []))
        if not page.get("LastEvaluatedKey"):
            break
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return sorted(found, key=lambda c: c.asked_at)
