"""Code tools in the tests: the modules of tests/wasm/ (WebAssembly text, compiled here), manifests, the skill
that carries them and host ports bound to one owner and agent."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

from skillcore.memory.models import MemoryItem, MemorySource, MemoryStatus
from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant
from skillcore.sandbox.host import HostBridge, HostPorts
from skillcore.sandbox.manifest import CodeToolManifest, decode_manifest
from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel, SkillKind, SkillManifest
from tests.support import ROOT

WAT = ROOT / "tests" / "wasm"
USER, AGENT = "u-code", "a-code"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

SKILL = SkillManifest(
    skill_id="streak-tools", version="1.0.0", kind=SkillKind.TOOL, name="Streak tools",
    description="Code tools of a test package.",
    permissions=(
        PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT),
        PermissionRequirement(code="hosted_workflow:invoke", risk_level=RiskLevel.L1,
                              approval_mode=ApprovalMode.PERSISTENT),
    ),
)


@cache
def wasm(name: str) -> bytes:
    from wasmtime import wat2wasm

    return bytes(wat2wasm((WAT / f"{name}.wat").read_text(encoding="utf-8")))


def manifest(name: str = "test-tool", *, host_functions: tuple[str, ...] = (), hosted_tools: tuple[str, ...] = (),
             **limits: int) -> CodeToolManifest:
    camel = {"memory_bytes": "memoryBytes", "timeout_ms": "timeoutMs", "output_bytes": "outputBytes",
             "host_calls": "hostCalls"}
    return decode_manifest({
        "name": name, "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
        "hostFunctions": list(host_functions), "hostedTools": list(hosted_tools),
        "limits": {camel.get(k, k): v for k, v in limits.items()},
    })


def grant(code: str = "memory:read", *, user_id: str = USER, skill: SkillManifest = SKILL,
          active: bool = True) -> PermissionGrant:
    return PermissionGrant(
        grant_id=f"g-{code}", user_id=user_id, skill_id=skill.skill_id, skill_version=skill.version,
        permission_code=code, scope=GrantScope.user(), granted_at=NOW, updated_at=NOW,
        status=GrantStatus.ACTIVE if active else GrantStatus.REVOKED, revoked_at=None if active else NOW,
    )


def memory(text: str, *, memory_id: str = "m1", importance: int = 3) -> MemoryItem:
    return MemoryItem(memory_id=memory_id, user_id=USER, agent_id=AGENT, title=text[:20], content=text,
                      importance=importance, status=MemoryStatus.ACTIVE, source=MemorySource.USER,
                      created_at=NOW, updated_at=NOW)


def ports(*, grants: tuple[PermissionGrant, ...] = (), memories: list[MemoryItem] | None = None,
          hosted: Any = None, call_id: str = "CALL1") -> HostPorts:
    return HostPorts(user_id=USER, agent_id=AGENT, call_id=call_id, grants=lambda: grants,
                     memories=(lambda: list(memories)) if memories is not None else None, hosted=hosted)


def run(name: str, tool: CodeToolManifest | None = None, arguments: dict[str, Any] | None = None, *,
        host: HostPorts | None = None, skill: SkillManifest = SKILL) -> dict[str, Any]:
    from skillcore.sandbox import modules, runtime

    tool = tool or manifest()
    bridge = HostBridge(tool, skill, host or ports())
    return runtime.invoke(modules.load(wasm(name)), tool, arguments if arguments is not None else {}, bridge)
