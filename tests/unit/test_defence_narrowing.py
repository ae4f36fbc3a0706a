"""Defence 4, runtime narrowing: a protocol carries only the platform capabilities and bindings its steps
reference, however many were declared; referenced bindings of another host profile are missing."""

from __future__ import annotations

from datetime import UTC, datetime

from skillcore.capabilities.defences.narrowing import narrow
from skillcore.capabilities.models import (
    CapabilityStatus,
    LocalToolStep,
    PlatformStep,
    Step,
    ToolBinding,
    UserCapability,
    Workflow,
)
from skillcore.skills.builtin import SKILLS

NOW = datetime(2026, 12, 3, tzinfo=UTC)
REGISTERED = sorted(m.skill_id for m in SKILLS.manifests())


def binding(name: str, host: str = "laptop") -> ToolBinding:
    return ToolBinding(name=name, host_profile=host, mcp_server_id="notes", mcp_tool_name="append",
                       input_schema={"type": "object"}, created_at=NOW, updated_at=NOW)


def capability(steps: list[Step], declared: list[str], bindings: list[ToolBinding]) -> UserCapability:
    return UserCapability(
        user_id="u", user_capability_id="01J", name="daily_notes", display_name="d", when_to_use=("t",),
        status=CapabilityStatus.ACTIVE, version=2,
        workflow=Workflow(objective="o", steps=tuple(steps), completion_criteria="c"),
        platform_capability_ids=tuple(declared), tool_bindings=tuple(bindings), created_at=NOW, updated_at=NOW,
    )


def test_everything_declared_but_one_of_each_is_left_out() -> None:
    assert len(REGISTERED) >= 6
    declared_bindings = [binding(f"tool_{i}") for i in range(20)]
    c = capability([PlatformStep(capability_id=REGISTERED[2], instruction="i"),
                    LocalToolStep(tool_name="tool_7", host_profile="laptop", instruction="i")],
                   REGISTERED, declared_bindings)
    n = narrow(c, "laptop")
    assert n.platform_capability_ids == (REGISTERED[2],)
    assert [b.name for b in n.tool_bindings] == ["tool_7"]
    assert n.tool_bindings[0] is c.binding("tool_7")
    assert n.missing_bindings == ()


def test_each_reference_once_in_the_order_of_first_use() -> None:
    steps: list[Step] = [
        PlatformStep(capability_id=REGISTERED[1], instruction="a"),
        LocalToolStep(tool_name="b", host_profile="laptop", instruction="b"),
        PlatformStep(capability_id=REGISTERED[0], instruction="c"),
        LocalToolStep(tool_name="a", host_profile="laptop", instruction="d"),
        PlatformStep(capability_id=REGISTERED[1], instruction="e"),
        LocalToolStep(tool_name="b", host_profile="laptop", instruction="f"),
    ]
    n = narrow(capability(steps, REGISTERED, [binding("a"), binding("b"), binding("c")]), "laptop")
    assert n.platform_capability_ids == (REGISTERED[1], REGISTERED[0])
    assert [b.name for b in n.tool_bindings] == ["b", "a"]


def test_bindings_of_another_host_profile_are_missing_and_not_carried() -> None:
    steps: list[Step] = [LocalToolStep(tool_name="notes", host_profile="laptop", instruction="i"),
                         LocalToolStep(tool_name="calendar", host_profile="phone", instruction="i")]
    c = capability(steps, [], [binding("notes", "laptop"), binding("calendar", "phone"), binding("unused", "phone")])
    on_phone = narrow(c, "phone")
    assert ([b.name for b in on_phone.tool_bindings], on_phone.missing_bindings) == (["calendar"], ("notes",))
    on_laptop = narrow(c, "laptop")
    assert ([b.name for b in on_laptop.tool_bindings], on_laptop.missing_bindings) == (["notes"], ("calendar",))
    elsewhere = narrow(c, "claude-code")
    assert (elsewhere.tool_bindings, elsewhere.missing_bindings) == ((), ("notes", "calendar"))


def test_without_a_host_profile_every_referenced_binding_is_missing() -> None:
    c = capability([LocalToolStep(tool_name="notes", host_profile="laptop", instruction="i")], [], [binding("notes")])
    n = narrow(c, None)
    assert (n.tool_bindings, n.missing_bindings) == ((), ("notes",))


def test_a_stored_reference_to_nothing_declared_is_never_carried() -> None:
    # Defence 2 refuses these on every write; narrowing still does not trust stored data.
    steps: list[Step] = [PlatformStep(capability_id=REGISTERED[0], instruction="i"),
                         LocalToolStep(tool_name="ghost", host_profile="laptop", instruction="i")]
    n = narrow(capability(steps, [REGISTERED[1]], [binding("real")]), "laptop")
    assert (n.platform_capability_ids, n.tool_bindings, n.missing_bindings) == ((), (), ("ghost",))


def test_a_capability_with_only_platform_steps_carries_no_binding() -> None:
    c = capability([PlatformStep(capability_id=REGISTERED[0], instruction="i")], REGISTERED, [binding("x")])
    n = narrow(c, "laptop")
    assert (n.platform_capability_ids, n.tool_bindings, n.missing_bindings) == ((REGISTERED[0],), (), ())
