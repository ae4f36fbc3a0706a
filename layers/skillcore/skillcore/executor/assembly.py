"""Builds the executor with every branch and context skill: the one place that wires them together."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from skillcore.db.dynamo import Db
from skillcore.executor.context import TurnContext, TurnResult
from skillcore.executor.executor import Branch, Executor, HostedBranch
from skillcore.executor.tool_branch import ToolSkillBranch
from skillcore.ids import new_id
from skillcore.memory.ports import MemoryReader, read_only_ports, turn_memory_reader
from skillcore.model.port import ChatModel, SystemBlock
from skillcore.policy.gate import PolicyInput, decide
from skillcore.skills.definitions import ContextSkillDefinition
from skillcore.skills.registries import Skills
from skillcore.tools.runner import ToolRunner


class ContextBlocks:
    """The context skills of a turn, each in turn: PolicyGate, then the agent's active memories (one key
    Query shared by all of them and the recall tool), then the skill's capped block."""

    def __init__(self, definitions: Sequence[ContextSkillDefinition], read: MemoryReader):
        self._definitions = tuple(definitions)
        self._read = read

    def __call__(self, ctx: TurnContext) -> tuple[Sequence[SystemBlock], int | None]:
        blocks: list[SystemBlock] = []
        used: int | None = None
        for definition in self._definitions:
            manifest = definition.manifest
            if not ctx.enabled(manifest):
                continue
            decision = decide(PolicyInput(
                user_id=ctx.user_id, skill_id=manifest.skill_id, skill_version=manifest.version,
                requirements=manifest.permissions, action="prompt.inject", agent_id=ctx.agent.agent_id,
                target_id=ctx.agent.agent_id, grants=ctx.grants(),
            ))
            if not decision.allowed:
                continue  # without the grant nothing is read
            block, count = definition.build(self._read(ctx.user_id, ctx.agent.agent_id))
            if block:
                blocks.append(block)
            used = count if used is None else used + count
        return tuple(blocks), used


class ToolBranches:
    """The tool-skill branches in turn: the built-in tool skills first, then the user's installed code tools."""

    def __init__(self, *branches: Branch):
        self._branches = branches

    def __call__(self, ctx: TurnContext,
                 reply_with: Callable[[TurnContext, Sequence[SystemBlock]], TurnResult]) -> TurnResult | None:
        for branch in self._branches:
            result = branch(ctx, reply_with)
            if result is not None:
                return result
        return None


def build_executor(
    skills: Skills, model: ChatModel, db: Db, *, now: datetime, clock: Callable[[], datetime], max_tokens: int | None,
    hosted_branch: HostedBranch | None = None, code_branch: Branch | None = None,
) -> Executor:
    """`hosted_branch`: the hosted workflow tools of the chat (hosted/chat.py), where the function can call out;
    `code_branch`: the installed code tools (code_tools/chat.py), after the built-in tool skills."""
    def mint() -> str:
        return new_id(now)

    runner = ToolRunner(db, clock=clock, new_id=mint)
    read = turn_memory_reader(db)  # the executor is built per turn, so is this cache
    return Executor(
        skills, model, new_id=mint, max_tokens=max_tokens,
        tool_branch=ToolBranches(ToolSkillBranch(skills, runner, read_only_ports(read)),
                                 *((code_branch,) if code_branch is not None else ())),
        context_blocks=ContextBlocks(skills.contexts.current(), read), hosted_branch=hosted_branch,
    )
