"""Skill definitions per kind: manifest data plus a small, reviewed, in-repo handler."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from msgspec import Struct, field

from skillcore.conversations.models import WorkflowSession
from skillcore.memory.models import MemoryItem
from skillcore.model.port import SystemBlock
from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.matchers import SkillMatchers


class PromptSkillDefinition(Struct, frozen=True):
    """A prompt skill adds a fixed, server-written instruction to the system prompt when it matches."""

    manifest: SkillManifest
    matchers: SkillMatchers
    instruction: str

    kind = SkillKind.PROMPT


class ContextSkillDefinition(Struct, frozen=True):
    """A prompt skill that shapes every model reply with data it reads under its own permission (the
    agent's active memories): `build` returns its block, or None, and how many memories it used."""

    manifest: SkillManifest
    build: Callable[[list[MemoryItem]], tuple[SystemBlock | None, int]]

    kind = SkillKind.PROMPT


class WorkflowTransition(Struct, frozen=True):
    """The outcome of one workflow step: the reply and the session's next state."""

    reply: str
    step: str
    slots: dict[str, str] = field(default_factory=dict)
    finished: bool = False
    cancelled: bool = False


class WorkflowHandler(Protocol):
    def start(self, argument: str, *, chinese: bool) -> WorkflowTransition: ...

    def advance(self, session: WorkflowSession, text: str, *, chinese: bool) -> WorkflowTransition: ...


class WorkflowSkillDefinition(Struct, frozen=True):
    manifest: SkillManifest
    matchers: SkillMatchers
    handler: WorkflowHandler

    kind = SkillKind.WORKFLOW
