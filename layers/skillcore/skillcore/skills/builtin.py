"""The built-in skills, assembled once at import time (and therefore validated at cold start)."""

from __future__ import annotations

from msgspec import Struct

from skillcore.skills import goal_check_in, goal_setting, memory_recall
from skillcore.skills.automation import AutomationRegistry
from skillcore.skills.background import BackgroundRegistry
from skillcore.skills.daily_plan import DAILY_PLAN
from skillcore.skills.definitions import (
    ContextSkillDefinition,
    PromptSkillDefinition,
    WorkflowSkillDefinition,
)
from skillcore.skills.goal_check_in import GOAL_CHECK_IN_REMINDER
from skillcore.skills.goal_setting import GOAL_SETTING
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS_SKILL, ProxiedToolSkill
from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.memory_context import MEMORY_CONTEXT
from skillcore.skills.memory_extraction import MEMORY_EXTRACTION
from skillcore.skills.memory_recall import MEMORY_RECALL
from skillcore.skills.protocols import HostProtocol
from skillcore.skills.registry import Registry
from skillcore.skills.tools import ToolRegistry


class Skills(Struct, frozen=True):
    """Every registry the executor and the catalog consult."""

    workflows: Registry[WorkflowSkillDefinition]
    prompts: Registry[PromptSkillDefinition]
    tools: ToolRegistry
    contexts: Registry[ContextSkillDefinition]
    background: BackgroundRegistry
    automations: AutomationRegistry
    # Tool skills whose tools are the user's hosted endpoints' (hosted/calls.py runs them, not the ToolRunner):
    # in the catalog and grantable, never selected by a chat turn's matchers.
    proxied: Registry[ProxiedToolSkill]
    # What agent hosts may use (skills/protocols.py): at most one per skill.
    host_protocols: tuple[HostProtocol, ...] = ()

    def __post_init__(self) -> None:
        ids = [d.manifest.skill_id for r in self._registries() for d in r.current()]
        duplicates = {i for i in ids if ids.count(i) > 1}
        if duplicates:
            raise ValueError(f"skill ids registered in two registries: {sorted(duplicates)}")
        offered = [p.manifest.skill_id for p in self.host_protocols]
        if len(offered) != len(set(offered)):
            raise ValueError("a skill has two host protocols")

    def _registries(self) -> tuple[Registry, ...]:
        return (self.tools, self.contexts, self.background, self.automations, self.workflows, self.prompts,
                self.proxied)

    def manifests(self) -> list[SkillManifest]:
        """The catalog: the current version of every skill whose runtime exists."""
        return [d.manifest for registry in self._registries() for d in registry.current()]

    def tool_names(self) -> frozenset[str]:
        """Every registered tool name an automation config may mention (allowed or not at run time)."""
        return self.automations.tool_names() | {t.tool_id for t in self.tools}

    def manifest(self, skill_id: str) -> SkillManifest | None:
        return next((m for m in self.manifests() if m.skill_id == skill_id), None)

    def protocols(self) -> list[HostProtocol]:
        """The host protocols of the skills registered here, each for the skill's current version: a protocol
        written for another version, or for a skill not registered, is not offered."""
        current = {m.key for m in self.manifests()}
        return [p for p in self.host_protocols if p.manifest.key in current]

    def protocol(self, skill_id: str) -> HostProtocol | None:
        return next((p for p in self.protocols() if p.manifest.skill_id == skill_id), None)


def builtin_skills() -> Skills:
    return Skills(
        workflows=Registry(SkillKind.WORKFLOW, [GOAL_SETTING]),
        prompts=Registry(SkillKind.PROMPT, [DAILY_PLAN]),
        tools=ToolRegistry([MEMORY_RECALL]),
        contexts=Registry(SkillKind.PROMPT, [MEMORY_CONTEXT]),
        background=BackgroundRegistry([GOAL_CHECK_IN_REMINDER]),
        automations=AutomationRegistry([MEMORY_EXTRACTION]),
        proxied=Registry(SkillKind.TOOL, [HOSTED_WORKFLOWS_SKILL]),
        host_protocols=(memory_recall.HOST_PROTOCOL, goal_check_in.HOST_PROTOCOL, goal_setting.HOST_PROTOCOL),
    )


SKILLS = builtin_skills()
