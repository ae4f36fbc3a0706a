"""Defence 2: reference integrity. A workflow may name only what its capability declares, and a declaration
only what exists:
- every declared platform capability id is a registered built-in skill;
- every `platformCapability` step names one of the declared platform capability ids;
- every `localTool` step names a declared binding, with the same host profile.
Errors: `[{"path", "ref"}]` (JSON Pointers into the capability's body), answered 422 `unknown_reference`.
Purely structural: sets and names, no text is interpreted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from skillcore.capabilities.models import LocalToolStep, PlatformStep, Step, ToolBinding


def check(
    steps: Iterable[Step], platform_capability_ids: Iterable[str], bindings: Iterable[ToolBinding],
    registered: Collection[str],
) -> list[dict[str, str]]:
    declared = list(platform_capability_ids)
    errors = [{"path": f"/platformCapabilityIds/{i}", "ref": capability_id}
              for i, capability_id in enumerate(declared) if capability_id not in registered]
    host_of = {b.name: b.host_profile for b in bindings}
    for i, step in enumerate(steps):
        at = f"/workflow/steps/{i}"
        if isinstance(step, PlatformStep):
            if step.capability_id not in declared:
                errors.append({"path": f"{at}/capabilityId", "ref": step.capability_id})
        elif isinstance(step, LocalToolStep):
            if step.tool_name not in host_of:
                errors.append({"path": f"{at}/toolName", "ref": step.tool_name})
            elif host_of[step.tool_name] != step.host_profile:
                errors.append({"path": f"{at}/hostProfile", "ref": step.host_profile})
    return errors


def steps_using(steps: Iterable[Step], binding_name: str) -> list[int]:
    """The indexes of the steps that use a binding (a binding in use cannot be deleted)."""
    return [i for i, s in enumerate(steps) if isinstance(s, LocalToolStep) and s.tool_name == binding_name]
