"""The executor's tool-skill branch: select -> PolicyGate and ToolRunner -> reply from the instruction.

Selection is deterministic and only decides whether a tool is wanted (explicit command, semantic
trigger, conversation kind, skill enabled). Whether it may run is the runner's PolicyGate call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from msgspec.structs import replace

from skillcore.conversations.models import RunKind, RunOutcome
from skillcore.executor.context import TurnContext, TurnResult
from skillcore.executor.selection import select_tool
from skillcore.language import Language
from skillcore.model.port import BlockKind, SystemBlock
from skillcore.policy.gate import Reason
from skillcore.skills.registries import Skills
from skillcore.skills.tools import ToolRequest, ToolSkillDefinition
from skillcore.tools.runner import ToolCallContext, ToolRunner, ToolStatus

FAILED_INSTRUCTION = (
    "The lookup you would need failed. Say plainly that you cannot recall it exactly right now. "
    "Do not invent, guess or imply any memory."
)


def denied_notice(definition: ToolSkillDefinition, language: Language = Language.EN, *,
                  outside_scope: bool = False) -> SystemBlock:
    """The grant notice, in the user's language (the offline model says it verbatim, Bedrock is told to).
    `outside_scope`: the grant exists but is narrowed (an agent, an argument's values) and this call is not in it."""
    codes = ", ".join(p.code for p in definition.manifest.permissions)
    name = definition.manifest.display_name(language)
    if outside_scope and language is Language.ZH:
        sentence = f"“{name}”（{codes}）的授权范围不包括这次使用。你可以在 Skills 页面调整授权范围。"
    elif outside_scope:
        sentence = (
            f"Your grant for “{name}” ({codes}) does not cover this use. "
            "You can widen its scope on the Skills page."
        )
    elif language is Language.ZH:
        sentence = f"使用“{name}”（{codes}）之前需要你的授权。你可以在 Skills 页面开启。"
    else:
        sentence = (
            f"I need your permission before I can use “{name}” ({codes}). "
            "You can grant it on the Skills page."
        )
    return SystemBlock(
        BlockKind.NOTICE,
        "The skill the user's message needs is not permitted. Tell the user the sentence below, in their "
        "language, and do not mention or guess any stored information.",
        source=definition.manifest.skill_id,
        facts=(sentence,),
    )


class ToolSkillBranch:
    def __init__(self, skills: Skills, runner: ToolRunner, ports_for: Callable[[str, str], Any]):
        self._skills = skills
        self._runner = runner
        self._ports_for = ports_for

    def __call__(
        self, ctx: TurnContext, reply_with: Callable[[TurnContext, Sequence[SystemBlock]], TurnResult]
    ) -> TurnResult | None:
        selected = select_tool(self._skills, ctx.text, ctx.conversation.kind, ctx.disabled_skills)
        if selected is None:
            return None
        definition, match = selected
        raw_input = definition.build_input(ToolRequest(text=ctx.text, match=match))
        outcome = self._runner.run(
            definition,
            definition.manifest,
            ToolCallContext(
                user_id=ctx.user_id, agent_id=ctx.agent.agent_id, conversation_id=ctx.conversation.conversation_id,
                source_message_id=ctx.source_message_id,
            ),
            raw_input,
            ctx.grants(),
            self._ports_for(ctx.user_id, ctx.agent.agent_id),
        )
        count: int | None = None
        if outcome.status is ToolStatus.DENIED:
            outside = outcome.decision is not None and outcome.decision.reason is Reason.GRANT_SCOPE_MISMATCH
            block = denied_notice(definition, ctx.language(), outside_scope=outside)
            run_outcome = RunOutcome.DENIED
        elif outcome.status is ToolStatus.FAILED:
            block = SystemBlock(BlockKind.RECALL_EMPTY, FAILED_INSTRUCTION, source=definition.manifest.skill_id)
            run_outcome = RunOutcome.DEGRADED if outcome.error_code == "invalid_input" else RunOutcome.FAILED
        else:
            block = definition.build_system_instruction(outcome.output)
            run_outcome = RunOutcome.SUCCEEDED
            count = definition.result_count(outcome.output)
        # A denied or failed tool must not be answered around with other memories: no context skills then.
        result = reply_with(ctx, [block]) if run_outcome is RunOutcome.SUCCEEDED else reply_with(
            _without_context(ctx, self._skills), [block]
        )
        if result.outcome is RunOutcome.DEGRADED and run_outcome is RunOutcome.SUCCEEDED:
            run_outcome = RunOutcome.DEGRADED
        return replace(
            result, kind=RunKind.TOOL, skill=definition.manifest, outcome=run_outcome,
            memories_used=count, writes=outcome.writes,
        )


def _without_context(ctx: TurnContext, skills: Skills) -> TurnContext:
    return replace(ctx, disabled_skills=ctx.disabled_skills | {d.manifest.skill_id for d in skills.contexts.current()})
