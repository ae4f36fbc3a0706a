"""Automation skills: the definition behind scheduled jobs, its tools and the default job it offers.

An automation skill names the server's allowlist of tools a run may use (a job's `config.tools` is
intersected with it at run time) and, optionally, the default job every new user gets. The runner and
the automation service read both from here; neither names a skill or a tool.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from msgspec import Struct
from pydantic import BaseModel

from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.registry import Registry, RegistryError


class AutomationTool(Struct, frozen=True):
    """A tool an automation run may offer the model. `tool_id` is the name the model calls; `execute`
    receives the skill's own ports, bound by the runner to the run's owner and agent."""

    tool_id: str
    description: str
    timeout_ms: int
    max_calls_per_turn: int
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    execute: Callable[[Any, Any], Any]

    def input_schema(self) -> dict[str, Any]:
        return self.input_model.model_json_schema()


class DefaultJob(Struct, frozen=True):
    """The job a new profile gets (daily at `local_time` in the profile's zone, all agents)."""

    title: str
    prompt: str
    tools: tuple[str, ...]
    local_time: str


class AutomationSkillDefinition(Struct, frozen=True):
    manifest: SkillManifest
    allowlist: tuple[AutomationTool, ...]
    default_job: DefaultJob | None = None

    kind = SkillKind.AUTOMATION

    def allowed(self, names: tuple[str, ...]) -> tuple[tuple[AutomationTool, ...], tuple[str, ...]]:
        """(the tools of `names` this skill allows, the names it refuses)."""
        by_name = {t.tool_id: t for t in self.allowlist}
        return tuple(by_name[n] for n in names if n in by_name), tuple(n for n in names if n not in by_name)


class AutomationRegistry(Registry[AutomationSkillDefinition]):
    """Jobs carry no skill id: one automation skill runs them all, the one that offers the default job."""

    def __init__(self, definitions: Iterable[AutomationSkillDefinition]):
        definitions = list(definitions)
        super().__init__(SkillKind.AUTOMATION, definitions)
        runners = {d.manifest.skill_id for d in definitions if d.default_job is not None}
        if len(runners) > 1:
            raise RegistryError(f"only one automation skill may offer the default job: {sorted(runners)}")
        for definition in definitions:
            job = definition.default_job
            unknown = [] if job is None else [t for t in job.tools if t not in {a.tool_id for a in definition.allowlist}]
            if unknown:
                raise RegistryError(f"{definition.manifest.key}: default job tools outside the allowlist: {unknown}")

    def job_runner(self) -> AutomationSkillDefinition:
        """The automation skill that runs scheduled jobs (its latest version)."""
        for definition in self.current():
            if definition.default_job is not None:
                return definition
        raise LookupError("no automation skill runs scheduled jobs")

    def tool_names(self) -> frozenset[str]:
        return frozenset(t.tool_id for d in self.current() for t in d.allowlist)
