"""Skill definitions per kind: manifest data plus a small, reviewed, in-repo handler."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from skillcore.db.sessions import WorkflowSession
from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.matchers import SkillMatchers


@dataclass(frozen=True)
class PromptSkillDefinition:
    """A prompt skill adds a fixed, server-written instruction to the system prompt when it matches."""

    manifest: SkillManifest
    matchers: SkillMatchers
    instruction: str

    kind = SkillKind.PROMPT


@dataclass(frozen=True)
class WorkflowTransition:
    """The outcome of one workflow step: the reply and the session's next state."""

    reply: str
    step: str
    slots: dict[str, str] = field(default_factory=dict)
    finished: bool = False
    cancelled: bool = False


class WorkflowHandler(Protocol):
    def start(self, argument: str, *, chinese: bool) -> WorkflowTransition: ...

    def advance(self, session: WorkflowSession, text: str, *, chinese: bool) -> WorkflowTransition: ...


@dataclass(frozen=True)
class WorkflowSkillDefinition:
    manifest: SkillManifest
    matchers: SkillMatchers
    handler: WorkflowHandler

    kind = SkillKind.WORKFLOW
