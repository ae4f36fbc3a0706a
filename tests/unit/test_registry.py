"""Registry (kind check, uniqueness, semver ordering), SkillManifest validation and the built-in catalog."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from msgspec.structs import fields, replace

from skillcore.skills.builtin import SKILLS, builtin_skills
from skillcore.skills.definitions import PromptSkillDefinition, WorkflowSkillDefinition
from skillcore.skills.goal_setting import GoalSettingHandler
from skillcore.skills.manifest import (
    ApprovalMode,
    ConversationScope,
    PermissionRequirement,
    RiskLevel,
    SkillKind,
    SkillManifest,
)
from skillcore.skills.matchers import SkillMatchers
from skillcore.skills.registries import Skills
from skillcore.skills.registry import Registry, RegistryError


def manifest(skill_id: str = "demo-skill", version: str = "1.0.0", kind: SkillKind = SkillKind.PROMPT, **extra) -> SkillManifest:
    return SkillManifest(skill_id=skill_id, version=version, kind=kind, name="Demo", description="A demo skill.", **extra)


@dataclass(frozen=True)
class Definition:
    manifest: SkillManifest


def d(skill_id: str = "demo-skill", version: str = "1.0.0", kind: SkillKind = SkillKind.PROMPT) -> Definition:
    return Definition(manifest(skill_id, version, kind))


def versions(registry: Registry) -> list[str]:
    return [definition.manifest.key for definition in registry]


# -- Registry ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("registry_kind", "manifest_kind"), [
    (SkillKind.PROMPT, SkillKind.WORKFLOW),
    (SkillKind.WORKFLOW, SkillKind.PROMPT),
    (SkillKind.TOOL, SkillKind.BACKGROUND),
])
def test_rejects_a_definition_of_another_kind(registry_kind: SkillKind, manifest_kind: SkillKind) -> None:
    with pytest.raises(RegistryError, match=f"demo-skill@1.0.0 is a {manifest_kind} skill, not {registry_kind}"):
        Registry(registry_kind, [d(kind=manifest_kind)])


def test_a_mismatch_anywhere_in_the_list_is_rejected() -> None:
    with pytest.raises(RegistryError):
        Registry(SkillKind.PROMPT, [d("a-skill"), d("b-skill"), d("c-skill", kind=SkillKind.TOOL)])


def test_rejects_the_same_skill_id_and_version_twice() -> None:
    with pytest.raises(RegistryError, match="demo-skill@1.0.0 is registered twice"):
        Registry(SkillKind.PROMPT, [d(), d("other-skill"), d()])


def test_registry_error_is_a_value_error() -> None:
    assert issubclass(RegistryError, ValueError)


def test_same_id_with_other_versions_and_same_version_with_other_ids_are_fine() -> None:
    registry = Registry(SkillKind.PROMPT, [d("a-skill", "1.0.0"), d("a-skill", "1.1.0"), d("b-skill", "1.0.0")])
    assert len(registry) == 3
    assert versions(registry) == ["a-skill@1.0.0", "a-skill@1.1.0", "b-skill@1.0.0"]
    assert registry.kind is SkillKind.PROMPT


def test_get_is_exact() -> None:
    one, two = d("a-skill", "1.0.0"), d("a-skill", "2.0.0")
    registry = Registry(SkillKind.PROMPT, [one, two])
    assert registry.get("a-skill", "1.0.0") is one
    assert registry.get("a-skill", "2.0.0") is two
    assert registry.get("a-skill", "1.0") is None
    assert registry.get("b-skill", "1.0.0") is None


@pytest.mark.parametrize(
    ("registered", "latest"),
    [
        (["1.9.0", "1.10.0"], "1.10.0"),
        (["1.10.0", "1.9.0"], "1.10.0"),
        (["1.2.3", "1.2.10", "1.2.9"], "1.2.10"),
        (["9.0.0", "10.0.0", "2.0.0"], "10.0.0"),
        (["0.9.9", "1.0.0"], "1.0.0"),
        (["1.0.0"], "1.0.0"),
        (["1.0.0-rc.1", "1.0.0"], "1.0.0"),  # a release outranks its pre-release
        (["1.0.0", "1.0.0-rc.1"], "1.0.0"),
        (["1.0.0", "1.1.0-beta"], "1.1.0-beta"),
    ],
    ids=["1.10>1.9", "1.10>1.9-reversed", "patch", "major", "0.x", "single", "release>rc", "release>rc-reversed", "newer-beta"],
)
def test_latest_picks_the_highest_semver(registered: list[str], latest: str) -> None:
    registry = Registry(SkillKind.PROMPT, [d("a-skill", v) for v in registered] + [d("b-skill", "99.0.0")])
    found = registry.latest("a-skill")
    assert found is not None
    assert found.manifest.version == latest


def test_latest_of_an_unknown_skill_is_none() -> None:
    assert Registry(SkillKind.PROMPT, [d("a-skill")]).latest("b-skill") is None
    assert Registry(SkillKind.PROMPT, []).latest("a-skill") is None


def test_current_lists_the_latest_of_each_skill_in_registration_order() -> None:
    registry = Registry(SkillKind.PROMPT, [
        d("b-skill", "1.0.0"), d("a-skill", "1.9.0"), d("b-skill", "0.5.0"), d("a-skill", "1.10.0"), d("c-skill", "2.0.0"),
    ])
    assert [x.manifest.key for x in registry.current()] == ["b-skill@1.0.0", "a-skill@1.10.0", "c-skill@2.0.0"]


def test_an_empty_registry() -> None:
    registry = Registry(SkillKind.TOOL, [])
    assert (len(registry), list(registry), registry.current()) == (0, [], [])


# -- SkillManifest ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0.0", "0.1.0", "10.20.30", "1.0.0-rc.1", "1.0.0-alpha.beta", "1.0.0+build.7", "1.0.0-rc.1+sha.5114f85"])
def test_semver_versions_are_accepted(version: str) -> None:
    assert manifest(version=version).version == version


@pytest.mark.parametrize("version", ["", "1", "1.0", "1.0.0.0", "v1.0.0", "01.0.0", "1.01.0", "1.0.0-", "1.0.0-01", "1.0.0+", " 1.0.0", "1.0.0 "])
def test_bad_versions_are_rejected(version: str) -> None:
    with pytest.raises(ValueError, match="is not semver"):
        manifest(version=version)


@pytest.mark.parametrize("skill_id", ["abc", "goal-setting", "a1-b2", "memory-recall", "a" * 64])
def test_good_skill_ids(skill_id: str) -> None:
    assert manifest(skill_id=skill_id).skill_id == skill_id


@pytest.mark.parametrize("skill_id", ["", "ab", "Goal-setting", "1abc", "-abc", "abc-", "a_b_c", "a b c", "abc/def", "a" * 65, "目标设定"])
def test_bad_skill_ids(skill_id: str) -> None:
    with pytest.raises(ValueError):
        manifest(skill_id=skill_id)


def test_duplicate_permission_codes_are_rejected() -> None:
    read = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT)
    again = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L2, approval_mode=ApprovalMode.PER_OPERATION)
    with pytest.raises(ValueError, match="permission codes must be unique"):
        manifest(permissions=(read, again))


def test_permissions_and_their_lookup() -> None:
    read = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT)
    write = PermissionRequirement(code="proactive_message:write", risk_level="L2", approval_mode="persistent")
    m = manifest(permissions=(read, write))
    assert m.requirement("memory:read") is read
    assert m.requirement("proactive_message:write") == write
    assert m.requirement("memory:write") is None
    assert write.risk_level is RiskLevel.L2


@pytest.mark.parametrize("code", ["memory", "Memory:Read", "memory:read:all", "memory read", ":read", "memory:"])
def test_bad_permission_codes(code: str) -> None:
    with pytest.raises(ValueError):
        PermissionRequirement(code=code, risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT)


@pytest.mark.parametrize("field", [{"risk_level": "L5"}, {"approval_mode": "always"}])
def test_bad_permission_enums(field: dict) -> None:
    values = {"code": "memory:read", "risk_level": "L1", "approval_mode": "persistent", **field}
    with pytest.raises(ValueError):
        PermissionRequirement(**values)


def test_extra_fields_are_rejected() -> None:
    with pytest.raises(TypeError, match="Unexpected keyword argument 'entry_point'"):
        manifest(entry_point="os.system")
    with pytest.raises(TypeError, match="Unexpected keyword argument 'url'"):
        PermissionRequirement(code="memory:read", risk_level="L1", approval_mode="none", url="https://example.com")


@pytest.mark.parametrize(("field", "value"), [("name", ""), ("name", "n" * 61), ("description", ""), ("description", "d" * 301), ("kind", "script"), ("scope", "everywhere")])
def test_other_field_bounds(field: str, value: str) -> None:
    values = {"skill_id": "demo-skill", "version": "1.0.0", "kind": "prompt", "name": "Demo", "description": "A demo.", field: value}
    with pytest.raises(ValueError):
        SkillManifest(**values)


def test_manifest_defaults_key_major_and_immutability() -> None:
    m = manifest(version="12.3.4-rc.1")
    assert (m.key, m.major, m.permissions, m.scope) == ("demo-skill@12.3.4-rc.1", 12, (), ConversationScope.ANY)
    with pytest.raises(AttributeError):
        m.version = "13.0.0"  # type: ignore[misc]


# -- the built-in catalog ----------------------------------------------------------------------------------


def _registries(skills: Skills) -> list[Registry]:
    values = [getattr(skills, f.name) for f in fields(skills)]
    return [value for value in values if isinstance(value, Registry)]


def test_the_catalog_lists_exactly_the_registered_skills() -> None:
    registered = [definition.manifest for registry in _registries(SKILLS) for definition in registry.current()]
    catalog = SKILLS.manifests()
    assert sorted(m.key for m in catalog) == sorted(m.key for m in registered)
    assert all(m in registered for m in catalog)
    ids = [m.skill_id for m in catalog]
    assert len(ids) == len(set(ids))
    assert {"goal-setting", "daily-plan"} <= set(ids)


def test_every_builtin_registry_holds_its_own_kind_and_every_builtin_is_1_0_0() -> None:
    for registry in _registries(SKILLS):
        for definition in registry:
            assert definition.manifest.kind is registry.kind
            assert definition.manifest.version == "1.0.0"
    assert SKILLS.workflows.kind is SkillKind.WORKFLOW
    assert SKILLS.prompts.kind is SkillKind.PROMPT


def test_catalog_lookup_by_id() -> None:
    goal = SKILLS.manifest("goal-setting")
    assert goal is not None
    assert (goal.kind, goal.version, goal.permissions) == (SkillKind.WORKFLOW, "1.0.0", ())
    plan = SKILLS.manifest("daily-plan")
    assert plan is not None and plan.kind is SkillKind.PROMPT
    assert SKILLS.manifest("no-such-skill") is None


def test_builtin_skills_builds_an_equal_catalog_each_time() -> None:
    assert builtin_skills().manifests() == SKILLS.manifests()


def test_the_catalog_shows_only_the_current_version_of_a_skill() -> None:
    def prompt(version: str) -> PromptSkillDefinition:
        return PromptSkillDefinition(manifest(skill_id="tip-skill", version=version), SkillMatchers(), "Be brief.")

    flow = WorkflowSkillDefinition(manifest(skill_id="flow-skill", kind=SkillKind.WORKFLOW), SkillMatchers(), GoalSettingHandler())
    skills = replace(
        SKILLS,
        workflows=Registry(SkillKind.WORKFLOW, [flow]),
        prompts=Registry(SkillKind.PROMPT, [prompt("1.9.0"), prompt("1.10.0")]),
    )
    keys = [m.key for m in skills.manifests()]
    assert "flow-skill@1.0.0" in keys
    assert "tip-skill@1.10.0" in keys
    assert "tip-skill@1.9.0" not in keys
    assert "goal-setting@1.0.0" not in keys and "daily-plan@1.0.0" not in keys
    tip = skills.manifest("tip-skill")
    assert tip is not None and tip.version == "1.10.0"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"skill_id": "Goal"}, "skill_id 'Goal' must be 3-64 of a-z"),
        ({"name": "n" * 61}, "name must be a string of 1 to 60 characters"),
        ({"description": ""}, "description must be a string of 1 to 300 characters"),
        ({"permissions": ({"code": "memory:read", "risk_level": "L1", "approval_mode": "none"},)},
         "permissions must be PermissionRequirement values"),
        ({"kind": "script"}, "'script' is not a valid SkillKind"),
    ],
)
def test_manifest_errors_name_the_field(fields: dict, message: str) -> None:
    values = {"skill_id": "demo-skill", "version": "1.0.0", "kind": "prompt", "name": "Demo", "description": "A demo."}
    with pytest.raises(ValueError, match=message):
        SkillManifest(**values | fields)


def test_a_bad_permission_code_names_the_rule() -> None:
    with pytest.raises(ValueError, match="permission code 'Memory:Read' must be resource:action in lower case"):
        PermissionRequirement(code="Memory:Read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT)
