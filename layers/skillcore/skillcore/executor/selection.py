"""Deterministic selection, shared by the executor and the evals: which skill wants this turn.

Selection never grants anything; it applies the skill's enable switch, its conversation scope and its
matchers. PolicyGate decides afterwards whether a selected skill may act.
"""

from __future__ import annotations

from typing import Protocol

from skillcore.conversations.models import ConversationKind
from skillcore.skills.definitions import PromptSkillDefinition, WorkflowSkillDefinition
from skillcore.skills.manifest import ConversationScope, SkillManifest
from skillcore.skills.matchers import Match, SkillMatchers
from skillcore.skills.registries import Skills
from skillcore.skills.tools import ToolSkillDefinition


class Selectable(Protocol):
    @property
    def manifest(self) -> SkillManifest: ...

    @property
    def matchers(self) -> SkillMatchers: ...


def applicable(manifest: SkillManifest, kind: ConversationKind, disabled: frozenset[str]) -> bool:
    if manifest.skill_id in disabled:
        return False
    return manifest.scope is ConversationScope.ANY or kind is ConversationKind.SINGLE


def first_match(
    definitions: list, text: str, kind: ConversationKind, disabled: frozenset[str]
) -> tuple[Selectable, Match] | None:
    for definition in definitions:
        if not applicable(definition.manifest, kind, disabled):
            continue
        match = definition.matchers.match(text)
        if match is not None:
            return definition, match
    return None


def select_workflow(skills: Skills, text: str, kind: ConversationKind, disabled: frozenset[str]) -> tuple[WorkflowSkillDefinition, Match] | None:
    return first_match(skills.workflows.current(), text, kind, disabled)  # type: ignore[return-value]


def select_tool(skills: Skills, text: str, kind: ConversationKind, disabled: frozenset[str]) -> tuple[ToolSkillDefinition, Match] | None:
    return first_match(skills.tools.current(), text, kind, disabled)  # type: ignore[return-value]


def select_prompts(skills: Skills, text: str, kind: ConversationKind, disabled: frozenset[str]) -> list[PromptSkillDefinition]:
    return [
        d for d in skills.prompts.current()
        if applicable(d.manifest, kind, disabled) and d.matchers.match(text) is not None
    ]


def selected_skill(skills: Skills, text: str, kind: ConversationKind, disabled: frozenset[str]) -> str | None:
    """The skill that would take a turn with no active workflow, in the executor's order; None = plain."""
    for pick in (select_workflow(skills, text, kind, disabled), select_tool(skills, text, kind, disabled)):
        if pick is not None:
            return pick[0].manifest.skill_id
    prompts = select_prompts(skills, text, kind, disabled)
    return prompts[0].manifest.skill_id if prompts else None
