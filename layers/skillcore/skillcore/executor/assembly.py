"""Builds the executor with every branch and context skill: the one place that wires them together."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from skillcore.db import memories as memory_store
from skillcore.db.dynamo import Db
from skillcore.executor.context import TurnContext
from skillcore.executor.executor import Executor
from skillcore.ids import new_id
from skillcore.memory.models import MemoryItem
from skillcore.model.port import ChatModel, SystemBlock
from skillcore.policy.gate import PolicyInput, decide
from skillcore.skills.builtin import Skills
from skillcore.skills.memory_context import ContextSkillDefinition
from skillcore.skills.tools import ToolPorts
from skillcore.tools.branch import ToolSkillBranch
from skillcore.tools.runner import ToolRunner

MemoryReader = Callable[[str, str], list[MemoryItem]]


def turn_memory_reader(db: Db) -> MemoryReader:
    """The one read of an agent's active memories, shared by a turn's memory-recall and memory-context:
    one key Query per turn, whichever asks first."""
    cache: dict[tuple[str, str], list[MemoryItem]] = {}

    def read(user_id: str, agent_id: str) -> list[MemoryItem]:
        if (user_id, agent_id) not in cache:
            cache[(user_id, agent_id)] = memory_store.list_active_agent_memories(db, user_id, agent_id)
        return cache[(user_id, agent_id)]

    return read


def read_only_ports(read: MemoryReader) -> Callable[[str, str], ToolPorts]:
    """Ports for chat tool skills: the active memories of exactly this owner's agent, nothing else."""

    def ports(user_id: str, agent_id: str) -> ToolPorts:
        return ToolPorts(list_active_memories=lambda: read(user_id, agent_id))

    return ports


class MemoryContext:
    """memory-context: PolicyGate, then one key Query of the agent's active memories, then the capped block."""

    def __init__(self, definition: ContextSkillDefinition, read: MemoryReader):
        self._definition = definition
        self._read = read

    def __call__(self, ctx: TurnContext) -> tuple[Sequence[SystemBlock], int | None]:
        manifest = self._definition.manifest
        if not ctx.enabled(manifest):
            return (), None
        decision = decide(PolicyInput(
            user_id=ctx.user_id, skill_id=manifest.skill_id, skill_version=manifest.version,
            requirements=manifest.permissions, action="prompt.inject", agent_id=ctx.agent.agent_id,
            target_id=ctx.agent.agent_id, grants=ctx.grants(),
        ))
        if not decision.allowed:
            return (), None  # without the grant nothing is read
        block, count = self._definition.build(self._read(ctx.user_id, ctx.agent.agent_id))
        return ((block,) if block else ()), count


def build_executor(
    skills: Skills, model: ChatModel, db: Db, *, now: datetime, clock: Callable[[], datetime], max_tokens: int | None
) -> Executor:
    def mint() -> str:
        return new_id(now)

    runner = ToolRunner(db, clock=clock, new_id=mint)
    read = turn_memory_reader(db)  # the executor is built per turn, so is this cache
    return Executor(
        skills, model, new_id=mint, max_tokens=max_tokens,
        tool_branch=ToolSkillBranch(skills, runner, read_only_ports(read)),
        context_blocks=MemoryContext(skills.memory_context, read),
    )
