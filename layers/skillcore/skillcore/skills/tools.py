"""Tool skills: the seed's ToolSkillDefinition and its registry rules.

A tool skill references a fixed toolId and a reviewed handler; the handler receives only its skill's
ports (e.g. skills/memory_ports.py), capabilities already bound to the run's owner and agent, never a
database client or an HTTP client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from msgspec import Struct
from pydantic import BaseModel

from skillcore.model.port import SystemBlock
from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.matchers import Match, SkillMatchers
from skillcore.skills.registry import Registry, RegistryError

MIN_TIMEOUT_MS = 100
MAX_TIMEOUT_MS = 30_000
MIN_CALLS, MAX_CALLS = 1, 4


class ToolRequest(Struct, frozen=True):
    """What buildInput sees: the user's words and how the selector matched them."""

    text: str
    match: Match


def _no_results(_output: Any) -> int:
    return 0


class ToolSkillDefinition(Struct, frozen=True):
    manifest: SkillManifest
    tool_id: str
    timeout_ms: int
    max_calls_per_turn: int
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    matchers: SkillMatchers
    build_input: Callable[[ToolRequest], dict[str, Any]]
    execute: Callable[[Any, Any], Any]  # (validated input, the skill's ports) -> output
    build_system_instruction: Callable[[Any], SystemBlock]
    description: str = ""
    result_count: Callable[[Any], int] = _no_results

    kind = SkillKind.TOOL


def validate_tool(definition: ToolSkillDefinition) -> None:
    key = definition.manifest.key
    if not MIN_CALLS <= definition.max_calls_per_turn <= MAX_CALLS:
        raise RegistryError(f"{key}: maxCallsPerTurn must be {MIN_CALLS}..{MAX_CALLS}")
    if not MIN_TIMEOUT_MS <= definition.timeout_ms <= MAX_TIMEOUT_MS:
        raise RegistryError(f"{key}: timeoutMs must be {MIN_TIMEOUT_MS}..{MAX_TIMEOUT_MS}")
    if not definition.tool_id:
        raise RegistryError(f"{key}: toolId is required")


class ToolRegistry(Registry[ToolSkillDefinition]):
    def __init__(self, definitions: Iterable[ToolSkillDefinition]):
        definitions = list(definitions)
        super().__init__(SkillKind.TOOL, definitions)
        owners: dict[str, str] = {}
        for definition in definitions:
            validate_tool(definition)
            owner = owners.setdefault(definition.tool_id, definition.manifest.skill_id)
            if owner != definition.manifest.skill_id:
                raise RegistryError(f"toolId {definition.tool_id} belongs to {owner}")
