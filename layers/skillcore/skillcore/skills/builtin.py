"""The built-in skills, assembled once at import time (and therefore validated at cold start)."""

from __future__ import annotations

from dataclasses import dataclass

from skillcore.skills.daily_plan import DAILY_PLAN
from skillcore.skills.definitions import PromptSkillDefinition, WorkflowSkillDefinition
from skillcore.skills.goal_setting import GOAL_SETTING
from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.registry import Registry


@dataclass(frozen=True)
class Skills:
    """Every registry the executor and the catalog consult."""

    workflows: Registry[WorkflowSkillDefinition]
    prompts: Registry[PromptSkillDefinition]

    def manifests(self) -> list[SkillManifest]:
        """The catalog: the current version of every skill whose runtime exists."""
        return [d.manifest for registry in (self.workflows, self.prompts) for d in registry.current()]

    def manifest(self, skill_id: str) -> SkillManifest | None:
        return next((m for m in self.manifests() if m.skill_id == skill_id), None)


def builtin_skills() -> Skills:
    return Skills(
        workflows=Registry(SkillKind.WORKFLOW, [GOAL_SETTING]),
        prompts=Registry(SkillKind.PROMPT, [DAILY_PLAN]),
    )


SKILLS = builtin_skills()
