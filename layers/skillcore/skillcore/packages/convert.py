"""A user capability as a package, and a package's protocol as a user capability (the export and import routes).

The protocol of a package *is* the user-capability structure (skillcore.json `protocol`), so the conversion
is a copy of structure, never a parse of text: an import creates the capability through the same service as
`POST /rpc/user-capabilities` (its four defences included), as a draft its owner activates.
"""

from __future__ import annotations

import json

from skillcore import VERSION
from skillcore.capabilities.models import LocalToolStep, PlatformStep, ToolBinding, UserCapability, Workflow
from skillcore.packages import archive, semver
from skillcore.packages.skill_md import SkillMd, render
from skillcore.skills.manifest import SkillManifest

EXPORT_VERSION = "1.0.0"
DESCRIPTION_MAX = 1024


def skill_name(capability_name: str) -> str:
    """A capability's name (`[a-z][a-z0-9_]`) as an Agent Skills name (`[a-z0-9-]`)."""
    return "-".join(part for part in capability_name.split("_") if part)


def compatible_range() -> str:
    major = semver.parse(VERSION)[0]
    return f">={VERSION} <{major + 1}.0.0"


def _binding(b: ToolBinding) -> dict[str, object]:
    return {"name": b.name, "hostProfile": b.host_profile, "mcpServerId": b.mcp_server_id,
            "mcpToolName": b.mcp_tool_name, "inputSchema": b.input_schema,
            "requiresUserConfirmation": b.requires_user_confirmation}


def protocol_of(capability: UserCapability) -> dict[str, object]:
    """The capability as the create body (`POST /rpc/user-capabilities`)."""
    workflow: Workflow = capability.workflow
    steps: list[dict[str, str]] = []
    for step in workflow.steps:
        if isinstance(step, PlatformStep):
            steps.append({"kind": "platformCapability", "capabilityId": step.capability_id,
                          "instruction": step.instruction})
        elif isinstance(step, LocalToolStep):
            steps.append({"kind": "localTool", "toolName": step.tool_name, "hostProfile": step.host_profile,
                          "instruction": step.instruction})
    return {"name": capability.name, "displayName": capability.display_name, "whenToUse": list(capability.when_to_use),
            "workflow": {"objective": workflow.objective, "steps": steps,
                         "completionCriteria": workflow.completion_criteria},
            "platformCapabilityIds": list(capability.platform_capability_ids),
            "toolBindings": [_binding(b) for b in capability.tool_bindings]}


def permissions_of(capability: UserCapability, manifests: dict[str, SkillManifest]) -> list[dict[str, str]]:
    """Every permission the platform capabilities its steps use require, as their manifests declare them."""
    found: dict[str, dict[str, str]] = {}
    for step in capability.workflow.steps:
        manifest = manifests.get(step.capability_id) if isinstance(step, PlatformStep) else None
        for p in manifest.permissions if manifest else ():
            found.setdefault(p.code, {"code": p.code, "riskLevel": p.risk_level.value,
                                      "approvalMode": p.approval_mode.value})
    return list(found.values())


def export_files(capability: UserCapability, manifests: dict[str, SkillManifest]) -> tuple[str, dict[str, bytes]]:
    """(folder, files) of the package of a user capability: SKILL.md (its display name as the description: a
    SKILL.md body says only where its protocol lives), skillcore.json (no publisher: the user's own), and one
    eval case (its first trigger, answered with the protocol among the skills)."""
    name = skill_name(capability.name)
    description = capability.display_name[:DESCRIPTION_MAX]
    skill = SkillMd(name=name, description=description, metadata={"skillcore-capability": capability.capability_id},
                    body="\nThe protocol of this skill is skillcore.json's `protocol`, rendered by the server.\n")
    manifest = {
        "schemaVersion": 1, "skillId": name, "version": EXPORT_VERSION,
        "compatibility": {"skillcore": compatible_range()},
        "permissions": permissions_of(capability, manifests), "protocol": protocol_of(capability),
        "remotes": [], "tools": [],
    }
    evals = {"cases": [{"id": "first-trigger", "input": capability.when_to_use[0],
                        "replyContains": [f"[skills: {name}]"]}]}
    files = {
        "SKILL.md": render(skill).encode("utf-8"),
        "skillcore.json": (json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode("utf-8"),
        "evals/basic.json": (json.dumps(evals, ensure_ascii=False, indent=2) + "\n").encode("utf-8"),
    }
    return name, files


def export_zip(capability: UserCapability, manifests: dict[str, SkillManifest]) -> tuple[str, bytes]:
    folder, files = export_files(capability, manifests)
    return folder, archive.write_zip(folder, files)
