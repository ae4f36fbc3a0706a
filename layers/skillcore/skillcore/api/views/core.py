"""Bodies of the core routes: health, profile, agents, conversations, messages, memories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from skillcore.api.views import Body, Time, maybe_time, time
from skillcore.conversations.models import CardKind, ConversationKind, Origin, Role
from skillcore.memory.models import MemorySource, MemoryStatus

if TYPE_CHECKING:
    from skillcore.conversations import models
    from skillcore.memory.models import MemoryItem


class Health(Body, frozen=True, kw_only=True):
    status: Literal["ok"]
    version: str


class Limits(Body, frozen=True, kw_only=True):
    """The server's limits a client shows or enforces before it sends (lengths in characters, counts in items):
    each is the constant the request models or the domain validate with, so a client never keeps a copy."""

    timezone: int
    agent_name: int
    agent_persona: int
    chat_message: int
    memory_title: int
    memory_content: int
    reminder_note: int
    automation_title: int
    automation_prompt: int
    capabilities: int
    capability_name: int
    capability_display_name: int
    capability_triggers: int
    capability_trigger: int
    capability_text: int
    capability_steps: int
    capability_bindings: int
    draft_description: int
    draft_answer: int
    hosted_endpoints: int
    endpoint_name: int
    endpoint_display_name: int
    endpoint_url: int
    endpoint_token: int


class Usage(Body, frozen=True, kw_only=True):
    """The caller's model tokens of the day (UTC; calls in flight included) against the daily budget
    (`tokensPerDay`, 0: no budget), and when it resets; the rates per minute of each route class (0: none)."""

    day: str
    tokens_used: int
    tokens_per_day: int
    resets_at: Time
    rates_per_minute: dict[str, int]
    max_open_drafts: int


class Profile(Body, frozen=True, kw_only=True):
    user_id: str
    timezone: str
    display_name: str
    created_at: Time
    updated_at: Time
    limits: Limits


class Agent(Body, frozen=True, kw_only=True):
    agent_id: str
    name: str
    persona: str
    default_conversation_id: str
    last_reply_at: Time | None
    created_at: Time


class Conversation(Body, frozen=True, kw_only=True):
    conversation_id: str
    kind: ConversationKind
    agent_ids: list[str]
    title: str
    message_count: int
    last_message_at: Time | None
    last_message_preview: str | None
    automation_job_id: str | UnsetType = UNSET
    created_at: Time


class MessageCard(Body, frozen=True, kw_only=True):
    """Structured data beside an assistant message's text (a client may show it as a card; the text alone stays
    the whole message): the approval it asks for, or a hosted tool's result, which is data from an external
    service and never instructions. Fields absent where they do not apply to the kind."""

    kind: CardKind
    endpoint_id: str
    endpoint_name: str
    tool_name: str
    approval_id: str | UnsetType = UNSET
    code: str | UnsetType = UNSET
    arguments: str | UnsetType = UNSET
    expires_at: Time | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    content: str | UnsetType = UNSET
    replaces_text: Annotated[bool, Meta(description=(
        "The message's text is this card written out as text: a client that shows the card need not show the text "
        "too. False when the text is the agent's own words about it."))]


class Message(Body, frozen=True, kw_only=True):
    message_id: str
    conversation_id: str
    role: Role
    agent_id: str | UnsetType = UNSET
    text: str
    origin: Origin
    created_at: Time
    card: MessageCard | UnsetType = UNSET


class AdminMessage(Message, frozen=True, kw_only=True):
    hidden_from_user: bool


class Memory(Body, frozen=True, kw_only=True):
    memory_id: str
    agent_id: str
    title: str
    content: str
    importance: int
    status: MemoryStatus
    source: MemorySource
    created_at: Time
    updated_at: Time


def profile(p: models.Profile, limits: Limits) -> Profile:
    return Profile(user_id=p.user_id, timezone=p.timezone, display_name=p.display_name,
                   created_at=time(p.created_at), updated_at=time(p.updated_at), limits=limits)


def agent(a: models.Agent) -> Agent:
    return Agent(agent_id=a.agent_id, name=a.name, persona=a.persona, default_conversation_id=a.default_conversation_id,
                 last_reply_at=maybe_time(a.last_reply_at), created_at=time(a.created_at))


def conversation(c: models.Conversation) -> Conversation:
    return Conversation(
        conversation_id=c.conversation_id, kind=c.kind, agent_ids=list(c.agent_ids), title=c.title,
        message_count=c.message_count, last_message_at=maybe_time(c.last_message_at),
        last_message_preview=c.last_message_preview, automation_job_id=c.automation_job_id or UNSET,
        created_at=time(c.created_at),
    )


def message_card(c: models.MessageCard) -> MessageCard:
    return MessageCard(
        kind=c.kind, endpoint_id=c.endpoint_id, endpoint_name=c.endpoint_name, tool_name=c.tool_name,
        approval_id=UNSET if c.approval_id is None else c.approval_id, code=UNSET if c.code is None else c.code,
        arguments=UNSET if c.arguments is None else c.arguments,
        expires_at=UNSET if c.expires_at is None else time(c.expires_at),
        is_error=UNSET if c.is_error is None else c.is_error, content=UNSET if c.content is None else c.content,
        replaces_text=c.replaces_text,
    )


def message(m: models.Message) -> Message:
    return Message(message_id=m.message_id, conversation_id=m.conversation_id, role=m.role, agent_id=m.agent_id or UNSET,
                   text=m.text, origin=m.origin, created_at=time(m.created_at),
                   card=message_card(m.card) if m.card is not None else UNSET)


def admin_message(m: models.Message) -> AdminMessage:
    return AdminMessage(message_id=m.message_id, conversation_id=m.conversation_id, role=m.role,
                        agent_id=m.agent_id or UNSET, text=m.text, origin=m.origin, created_at=time(m.created_at),
                        hidden_from_user=m.hidden_from_user, card=message_card(m.card) if m.card is not None else UNSET)


def memory(m: MemoryItem) -> Memory:
    return Memory(memory_id=m.memory_id, agent_id=m.agent_id, title=m.title, content=m.content, importance=m.importance,
                  status=m.status, source=m.source, created_at=time(m.created_at), updated_at=time(m.updated_at))
