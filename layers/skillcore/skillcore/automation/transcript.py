"""What a run shows the model of the user's days: the agent's recent visible messages, as data.

"Recent" is the slot's day and the day before, in the job's time zone, and everything after: a run that starts
late (a retry within the slot, a backlog after midnight) reads what a run on time would have read. Only
conversations the agent is in, with visible activity in that window, are read; lines are capped in length and
number, oldest dropped first.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from skillcore.automation.models import AutomationJob
from skillcore.conversations import message_store
from skillcore.conversations.models import Conversation, ConversationKind, Role
from skillcore.db.dynamo import Db
from skillcore.timezones import zone

TRANSCRIPT_LINES = 120
LINE_CHARS = 500


def window_start(job: AutomationJob, slot: datetime) -> datetime:
    """Midnight at the start of the day before the slot's, in the job's zone (the slot's day and the one before
    are the user's "today and yesterday")."""
    tz = zone(job.timezone)
    yesterday = slot.astimezone(tz).date() - timedelta(days=1)
    return datetime(yesterday.year, yesterday.month, yesterday.day, tzinfo=tz).astimezone(slot.tzinfo)


def active_conversations(conversations: list[Conversation], agent_id: str, since: datetime) -> list[Conversation]:
    """The agent's non-automation conversations with a visible message since `since`."""
    return [
        c for c in conversations
        if c.kind is not ConversationKind.AUTOMATION and agent_id in c.agent_ids
        and c.last_message_at is not None and c.last_message_at >= since
    ]


def transcript(db: Db, conversations: list[Conversation], agent_id: str, since: datetime) -> list[str]:
    lines: list[tuple[datetime, str]] = []
    for conversation in conversations:
        for message in message_store.visible_since(db, conversation.conversation_id, since):
            if message.role is Role.USER:
                lines.append((message.created_at, f"user: {message.text[:LINE_CHARS]}"))
            elif message.agent_id == agent_id:
                lines.append((message.created_at, f"assistant: {message.text[:LINE_CHARS]}"))
    lines.sort(key=lambda pair: pair[0])
    return [text for _, text in lines[-TRANSCRIPT_LINES:]]
