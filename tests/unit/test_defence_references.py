"""Defence 2, reference integrity: steps name only declared platform capabilities and bindings, declared
platform capabilities exist, a local tool step's host profile is its binding's."""

from __future__ import annotations

from datetime import UTC, datetime

from skillcore.capabilities.defences import references
from skillcore.capabilities.models import LocalToolStep, PlatformStep, ToolBinding
from skillcore.skills.builtin import SKILLS

NOW = datetime(2026, 12, 3, tzinfo=UTC)
REGISTERED = {m.skill_id for m in SKILLS.manifests()}


def binding(name: str, host: str = "laptop") -> ToolBinding:
    return ToolBinding(name=name, host_profile=host, mcp_server_id="notes", mcp_tool_name="append",
                       input_schema={"type": "object"}, created_at=NOW, updated_at=NOW)


def platform(capability_id: str) -> PlatformStep:
    return PlatformStep(capability_id=capability_id, instruction="回顾")


def local(name: str, host: str = "laptop") -> LocalToolStep:
    return LocalToolStep(tool_name=name, host_profile=host, instruction="记下来")


def test_the_registry_has_the_skills_the_tests_use() -> None:
    assert {"memory-recall", "goal-setting", "goal-check-in-reminder"} <= REGISTERED


def test_a_consistent_capability_passes() -> None:
    steps = [platform("memory-recall"), local("notes"), platform("goal-setting"), local("calendar", "phone")]
    assert references.check(steps, ["memory-recall", "goal-setting"], [binding("notes"), binding("calendar", "phone")],
                            REGISTERED) == []


def test_declared_ids_that_are_not_registered_skills() -> None:
    errors = references.check([], ["memory-recall", "memory-delete-all", "user:other"], [], REGISTERED)
    assert errors == [{"path": "/platformCapabilityIds/1", "ref": "memory-delete-all"},
                      {"path": "/platformCapabilityIds/2", "ref": "user:other"}]


def test_a_platform_step_outside_the_declared_ids() -> None:
    # memory-recall is registered, but this capability did not declare it
    errors = references.check([platform("goal-setting"), platform("memory-recall")], ["goal-setting"], [], REGISTERED)
    assert errors == [{"path": "/workflow/steps/1/capabilityId", "ref": "memory-recall"}]


def test_a_local_step_without_its_binding() -> None:
    errors = references.check([local("notes"), local("shell")], [], [binding("notes")], REGISTERED)
    assert errors == [{"path": "/workflow/steps/1/toolName", "ref": "shell"}]


def test_a_local_step_on_another_host_profile() -> None:
    errors = references.check([local("notes", "phone")], [], [binding("notes", "laptop")], REGISTERED)
    assert errors == [{"path": "/workflow/steps/0/hostProfile", "ref": "phone"}]


def test_every_error_is_listed_at_once() -> None:
    errors = references.check([platform("x"), local("y")], ["nope"], [], REGISTERED)
    assert [e["path"] for e in errors] == ["/platformCapabilityIds/0", "/workflow/steps/0/capabilityId",
                                           "/workflow/steps/1/toolName"]


def test_steps_using_a_binding() -> None:
    steps = [local("notes"), platform("memory-recall"), local("notes"), local("other")]
    assert references.steps_using(steps, "notes") == [0, 2]
    assert references.steps_using(steps, "unused") == []
