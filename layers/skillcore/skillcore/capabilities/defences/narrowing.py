"""Defence 4: runtime narrowing. What a capability declares and what a rendered protocol carries are two
sets, and the second is always a subset of the first.

While editing, a capability may declare more platform capabilities and bindings than its steps use (so a
user can add and drop steps freely). A protocol carries only what its steps reference: a declared platform
capability or binding that no step names never reaches an agent, however many were declared. Of the
referenced bindings, those configured for another host profile than the one the host asked for are
`missing`: the renderer writes the stop text in place of their steps, never the binding.

Purely structural (names and sets); no text is read.
"""

from __future__ import annotations

from msgspec import Struct

from skillcore.capabilities.models import LocalToolStep, PlatformStep, ToolBinding, UserCapability


class Narrowed(Struct, frozen=True, kw_only=True):
    """What one protocol of one capability carries, for one host profile."""

    platform_capability_ids: tuple[str, ...]  # referenced by a step, in the order of first reference
    tool_bindings: tuple[ToolBinding, ...]  # referenced and configured for the host asked for
    missing_bindings: tuple[str, ...]  # referenced, but not configured for that host (or not stored at all)

    def available(self, name: str) -> ToolBinding | None:
        return next((b for b in self.tool_bindings if b.name == name), None)


def narrow(capability: UserCapability, host_profile: str | None) -> Narrowed:
    """Only what the steps reference. Without a host profile no binding can be checked against the host,
    so every referenced binding is missing (the protocol then stops before its first local step)."""
    platform: dict[str, None] = {}
    referenced: dict[str, None] = {}
    for step in capability.workflow.steps:
        if isinstance(step, PlatformStep):
            # Defence 2 already refused a step outside the declared ids; a stored one is checked again.
            if step.capability_id in capability.platform_capability_ids:
                platform[step.capability_id] = None
        elif isinstance(step, LocalToolStep):
            referenced[step.tool_name] = None
    available: list[ToolBinding] = []
    missing: list[str] = []
    for name in referenced:
        binding = capability.binding(name)
        if binding is not None and host_profile is not None and binding.host_profile == host_profile:
            available.append(binding)
        else:
            missing.append(name)
    return Narrowed(platform_capability_ids=tuple(platform), tool_bindings=tuple(available),
                    missing_bindings=tuple(missing))
