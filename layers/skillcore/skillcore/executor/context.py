"""What the executor knows about a turn, and what it decides."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from itertools import chain

from msgspec import Struct

from skillcore.conversations.models import (
    AgentCard,
    Conversation,
    Message,
    MessageCard,
    Role,
    RunKind,
    RunOutcome,
    WorkflowSession,
)
from skillcore.db.transact import Op
from skillcore.language import Language, choose
from skillcore.policy.grants import PermissionGrant
from skillcore.skills.manifest import SkillManifest


class TurnContext(Struct):
    user_id: str
    conversation: Conversation
    agent: AgentCard
    text: str
    source_message_id: str
    disabled_skills: frozenset[str]
    session: WorkflowSession | None
    now: datetime
    load_history: Callable[[], list[Message]]
    load_grants: Callable[[], list[PermissionGrant]] = list
    # Posted with a person's token (the page's sign-in), not an agent host's: only such a message decides an
    # approval in the chat. Automation turns and anything else that builds a context are not a person.
    from_person: bool = False
    _history: list[Message] | None = None
    _grants: tuple[PermissionGrant, ...] | None = None

    def history(self) -> list[Message]:
        """Earlier visible messages, read only when a branch needs the model (workflows do not)."""
        if self._history is None:
            self._history = self.load_history()
        return self._history

    def language(self, *, read_history: bool = True) -> Language:
        """The user's language for this turn (skillcore/language.py): this text, else their earlier messages
        here (read only when this text shows no language; with read_history=False, as workflows that never
        read history, the conversation's last message preview instead), else the default."""

        def earlier() -> Iterator[str]:
            if not read_history:
                yield self.conversation.last_message_preview or ""
                return
            for message in reversed(self.history()):
                if message.role is Role.USER:
                    yield message.text

        return choose(chain((self.text,), earlier()))

    def grants(self) -> tuple[PermissionGrant, ...]:
        """The user's permission grants, read once and only when a skill needs a permission."""
        if self._grants is None:
            self._grants = tuple(self.load_grants())
        return self._grants

    def enabled(self, manifest: SkillManifest) -> bool:
        return manifest.skill_id not in self.disabled_skills

class SessionWrite(Struct, frozen=True):
    session: WorkflowSession
    previous_revision: int | None  # None: no live session existed

class TurnResult(Struct, frozen=True):
    reply: str
    kind: RunKind
    outcome: RunOutcome
    skill: SkillManifest | None = None
    session_write: SessionWrite | None = None
    memories_used: int | None = None
    writes: tuple[Op, ...] = ()  # extra transaction items (tool record, audit events)
    card: MessageCard | None = None  # structured data beside the reply (an approval asked, a hosted result)
