"""`Skills`: every registry of skills the executor, the catalog and the services consult. The built-in skills
fill one (skills/builtin.py); a module that only names the type imports this one, not every skill's definition.
"""

from __future__ import annotations

from msgspec import Struct

from skillcore.skills.automation import AutomationRegistry
from skillcore.skills.background import BackgroundRegistry
from skillcore.skills.definitions import (
    ContextSkillDefinition,
    PromptSkillDefinition,
    WorkflowSkillDefinition,
)
from skillcore.skills.hosted_workflows import ProxiedToolSkill
from skillcore.skills.manifest import SkillManifest
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
