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


class Message(Frozen, frozen=True, kw_only=True):
    message_id: str
    conversation_id: str
    role: Role
    agent_id: str | None
    text: str
    origin: Origin
    hidden_from_user: bool = False
    created_at: datetime


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
