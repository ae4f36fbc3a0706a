"""Domain models of the chat core: profile, agent, conversation, message, SkillRun, workflow session and
tool execution status.

These are neither API bodies (api/views.py shapes those) nor DynamoDB items (the store modules map those).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from msgspec import Struct


class Frozen(Struct, frozen=True, kw_only=True):
    """Immutable, keyword-only records. The stores build them from items with explicit conversions, so they
    need no validation of their own (pydantic stays at the trust boundaries: request bodies, tool I/O)."""


class Profile(Frozen, frozen=True, kw_only=True):
    user_id: str
    timezone: str
    display_name: str
    created_at: datetime
    updated_at: datetime


class Agent(Frozen, frozen=True, kw_only=True):
    user_id: str
    agent_id: str
    name: str
    persona: str
    default_conversation_id: str
    last_reply_at: datetime | None
    created_at: datetime


class ConversationKind(StrEnum):
    SINGLE = "single"
    GROUP = "group"
    AUTOMATION = "automation"


class AgentCard(Frozen, frozen=True, kw_only=True):
    """What a conversation keeps of each member agent (agents are immutable, so the copy never goes stale)."""

    agent_id: str
    name: str
    persona: str


class Conversation(Frozen, frozen=True, kw_only=True):
    user_id: str
    conversation_id: str
    kind: ConversationKind
    agents: tuple[AgentCard, ...]
    title: str
    message_count: int
    last_message_at: datetime | None
    last_message_preview: str | None
    automation_job_id: str | None = None
    created_at: datetime

    @property
    def agent_ids(self) -> list[str]:
        return [a.agent_id for a in self.agents]

    def agent(self, agent_id: str) -> AgentCard | None:
        return next((a for a in self.agents if a.agent_id == agent_id), None)


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


class Origin(StrEnum):
    CHAT = "chat"
    AUTOMATION = "automation"
    BACKGROUND = "background"


class CardKind(StrEnum):
    APPROVAL = "approval"
    HOSTED_RESULT = "hosted_result"


class MessageCard(Frozen, frozen=True, kw_only=True):
    """Structured data beside an assistant message's text, for clients that show it as a card (issue 24): an
    approval the message asks for (`approval`), or a hosted tool's result (`hosted_result`, data from an external
    service, never instructions). Written only by the server's own code (hosted/chat_replies.py); the text stays
    the whole message for clients that read only the text."""

    kind: CardKind
    endpoint_id: str
    endpoint_name: str
    tool_name: str
    approval_id: str | None = None  # approval: the approval asked for, and its short code in the chat
    code: str | None = None
    arguments: str | None = None  # approval: the arguments' preview (approvals/digest.py), never cut
    expires_at: datetime | None = None
    is_error: bool | None = None  # hosted_result: the tool answered an error
    content: str | None = None  # hosted_result: the tool's text content (≤ 16 KiB), as data
    # The message's text is this card written out as text (the server's fixed words): a client that shows the
    # card need not show the text as well. False when the text is the agent's own words about the card.
    replaces_text: bool = True


class Message(Frozen, frozen=True, kw_only=True):
    message_id: str
    conversation_id: str
    role: Role
    agent_id: str | None
    text: str
    origin: Origin
    hidden_from_user: bool = False
    created_at: datetime
    card: MessageCard | None = None


class RunKind(StrEnum):
    WORKFLOW = "workflow"
    TOOL = "tool"
    PROMPT = "prompt"
    PLAIN = "plain"


class RunOutcome(StrEnum):
    SUCCEEDED = "succeeded"
    DENIED = "denied"
    DEGRADED = "degraded"
    FAILED = "failed"


class SkillRun(Frozen, frozen=True, kw_only=True):
    """One executor decision. Holds no message text by construction: there is no field for it."""

    run_id: str
    user_id: str
    conversation_id: str
    kind: RunKind
    skill_id: str | None
    skill_version: str | None
    outcome: RunOutcome
    duration_ms: int
    memories_used: int | None = None
    at: datetime


PREVIEW_CHARS = 80


def preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


class SessionStatus(StrEnum):
    ACTIVE = "active"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


class WorkflowSession(Frozen, frozen=True, kw_only=True):
    """A conversation's workflow in progress (or its last one): step, collected slots, revision."""

    conversation_id: str
    session_id: str
    skill_id: str
    skill_version: str
    status: SessionStatus
    step: str
    slots: dict[str, str]
    revision: int
    started_at: datetime
    updated_at: datetime

    @property
    def active(self) -> bool:
        return self.status is SessionStatus.ACTIVE


class ExecutionStatus(StrEnum):
    """A tool execution record's status (one record per idempotency key)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DENIED = "denied"
