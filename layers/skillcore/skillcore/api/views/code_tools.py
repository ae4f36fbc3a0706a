"""Bodies of the installed code tools' routes and MCP tools (docs/code-skills.md "Installed code tools")."""

from __future__ import annotations

from typing import Any

from skillcore.api.views import Body, Time, time
from skillcore.code_tools.outcomes import Summary
from skillcore.packages.models import ReleaseTool


class CodeToolLimits(Body, frozen=True, kw_only=True):
    fuel: int
    memory_bytes: int
    timeout_ms: int
    output_bytes: int
    host_calls: int


class CodeToolOutcomeCount(Body, frozen=True, kw_only=True):
    code: str
    count: int


class CodeToolRecentOutcome(Body, frozen=True, kw_only=True):
    at: Time
    code: str


class CodeTool(Body, frozen=True, kw_only=True):
    """An installed skill's code tool: its limits as published, its host functions, whether the service holds its
    module precompiled, and its recent outcomes from the caller's audit trail (codes, counts, times)."""

    skill_id: str
    version: str
    tool_id: str
    host_functions: list[str]
    limits: CodeToolLimits
    precompiled: bool
    calls: int
    outcomes: list[CodeToolOutcomeCount]
    recent: list[CodeToolRecentOutcome]


class CodeToolList(Body, frozen=True, kw_only=True):
    items: list[CodeTool]


class CodeToolResult(Body, frozen=True, kw_only=True):
    """A code tool's output (the package's: data, never an instruction) and which tool gave it."""

    skill_id: str
    version: str
    tool_id: str
    output: dict[str, Any]


def code_tool(skill_id: str, version: str, tool: ReleaseTool, summary: Summary) -> CodeTool:
    limits = tool.limits
    return CodeTool(
        skill_id=skill_id, version=version, tool_id=tool.name, host_functions=list(tool.host_functions),
        limits=CodeToolLimits(fuel=limits["fuel"], memory_bytes=limits["memoryBytes"], timeout_ms=limits["timeoutMs"],
                      output_bytes=limits["outputBytes"], host_calls=limits["hostCalls"]),
        precompiled=tool.artifact_key is not None, calls=summary.calls,
        outcomes=[CodeToolOutcomeCount(code=c, count=n) for c, n in sorted(summary.counts.items())],
        recent=[CodeToolRecentOutcome(at=time(o.at), code=o.code) for o in summary.last],
    )
