"""A skill is one folder of meaning: the shared code (executor, worker, runner, catalog, services, db)
never names a built-in skill id, and the automation registry's rules hold at import time."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillcore.skills.automation import AutomationRegistry, AutomationSkillDefinition, DefaultJob
from skillcore.skills.builtin import SKILLS
from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.memory_extraction import MEMORY_EXTRACTION
from skillcore.skills.memory_tools import MEMORY_FORGET, MEMORY_WRITE
from skillcore.skills.registry import RegistryError

LAYER = Path(__file__).resolve().parents[2] / "layers" / "skillcore" / "skillcore"


def test_no_module_outside_skills_names_a_built_in_skill_id() -> None:
    ids = sorted({m.skill_id for m in SKILLS.manifests()})
    assert len(ids) >= 6
    offenders = []
    for path in sorted(LAYER.rglob("*.py")):
        relative = path.relative_to(LAYER).as_posix()
        if relative.startswith("skills/"):
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"skillcore/{relative} names {skill_id}" for skill_id in ids if skill_id in text]
    assert offenders == []


def _automation(skill_id: str, *, default: DefaultJob | None) -> AutomationSkillDefinition:
    manifest = SkillManifest(skill_id=skill_id, version="1.0.0", kind=SkillKind.AUTOMATION, name=skill_id,
                             description="d", permissions=MEMORY_EXTRACTION.manifest.permissions)
    return AutomationSkillDefinition(manifest=manifest, allowlist=(MEMORY_WRITE, MEMORY_FORGET), default_job=default)


def test_the_job_runner_is_the_skill_that_offers_the_default_job() -> None:
    job = DefaultJob(title="t", prompt="p", tools=("memory_write",), local_time="09:00")
    registry = AutomationRegistry([_automation("a-first", default=None), _automation("b-runner", default=job)])
    assert registry.job_runner().manifest.skill_id == "b-runner"
    assert registry.tool_names() == {"memory_write", "memory_forget"}
    assert SKILLS.automations.job_runner() is MEMORY_EXTRACTION


def test_two_skills_offering_a_default_job_or_a_default_tool_outside_the_allowlist_are_refused() -> None:
    job = DefaultJob(title="t", prompt="p", tools=("memory_write",), local_time="09:00")
    with pytest.raises(RegistryError, match="only one"):
        AutomationRegistry([_automation("first-a", default=job), _automation("second-b", default=job)])
    stray = DefaultJob(title="t", prompt="p", tools=("shell",), local_time="09:00")
    with pytest.raises(RegistryError, match="outside the allowlist"):
        AutomationRegistry([_automation("stray-a", default=stray)])
    with pytest.raises(LookupError):
        AutomationRegistry([_automation("none-a", default=None)]).job_runner()
