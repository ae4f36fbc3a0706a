"""A hosted call asked in a chat and approved (or denied) by API (hosted/chat.py): HostedFunction, after
`POST /rpc/approvals/{id}`, runs the call and posts the agent's message with its result to the conversation.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from skillcore.conversations import agent_store, conversation_store, message_store
from skillcore.conversations.models import Message, Origin, Role, preview
from skillcore.db.dynamo import Db
from skillcore.db.transact import Op, transact
from skillcore.errors import DomainError
from skillcore.hosted import chat_call_store as chat_calls
from skillcore.hosted.chat_replies import denied_text, failed_text, result_card, result_text
from skillcore.ids import new_id
from skillcore.language import Language


def deliver_after_decision(db: Db, hosted_deps: Any, user_id: str, approval_id: str, *, approved: bool,
                           now: datetime) -> Message | None:
    """HostedFunction, after `POST /rpc/approvals/{id}`: when the approval was asked in a chat, runs the call
    (approved) and posts the agent's message with its result, or says it was denied. Returns the message."""
    pending = chat_calls.get(db, user_id, approval_id)
    if pending is None:
        return None
    language = Language(pending.language)
    label = f"{pending.endpoint_name}.{pending.tool_name}"
    card = None
    if not approved:
        text = denied_text(label, language)
    else:
        from skillcore.hosted import calls

        try:
            result = calls.call(hosted_deps, user_id, pending.endpoint_id, tool_name=pending.tool_name,
                                arguments=pending.arguments, client_call_id=pending.client_call_id,
                                approval_id=approval_id, now=now, agent_id=pending.agent_id)
            text = result_text(label, result, language)
            card = result_card(pending.endpoint_id, pending.endpoint_name, pending.tool_name, result)
        except DomainError as error:
            text = failed_text(label, error.code, language)
    at = max(now, pending.asked_at + timedelta(milliseconds=2))  # after the reply that asked
    message = Message(message_id=new_id(at), conversation_id=pending.conversation_id, role=Role.ASSISTANT,
                      agent_id=pending.agent_id, text=text, origin=Origin.CHAT, created_at=at, card=card)
    transact(db, [
        Op("message", message_store.put_message_op(db, message, user_id)),
        Op("conversation", conversation_store.record_visible_messages_op(
            db, user_id, pending.conversation_id, added=1, last_at=at, last_text=preview(text))),
        Op("agent", agent_store.touch_last_reply_op(db, user_id, pending.agent_id, at)),
        Op("chat_call", chat_calls.delete_op(db, user_id, approval_id)),
    ])
    return message
