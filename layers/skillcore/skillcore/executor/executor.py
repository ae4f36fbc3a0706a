"""The unified executor, in the seed's order:

duplicate-message recovery (the chat service, before this runs) -> active workflow -> new workflow ->
tool skill -> prompt skill -> plain reply. The first branch that takes the turn handles it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from msgspec.structs import replace

from skillcore.conversations.models import Role, RunKind, RunOutcome, SessionStatus, WorkflowSession
from skillcore.executor.context import SessionWrite, TurnContext, TurnResult
from skillcore.executor.selection import select_prompts, select_workflow
from skillcore.language import Language, detect
from skillcore.model.port import (
    BlockKind,
    ChatMessage,
    ChatModel,
    ModelError,
    ModelRequest,
    ModelResponse,
    SystemBlock,
    ToolChoice,
    ToolSpec,
)
from skillcore.observability import logger, model_degraded
from skillcore.skills.definitions import WorkflowSkillDefinition, WorkflowTransition
from skillcore.skills.matchers import MatchKind
from skillcore.skills.registries import Skills

CANCEL_COMMANDS = ("/cancel", "取消")

DEGRADED_REPLY = ("Sorry, I can't answer right now. Please try again in a moment.", "抱歉，我现在无法回答，请稍后再试。")


class Branch(Protocol):
    """An optional executor branch (the tool-skill branch plugs in here)."""

    def __call__(
        self, ctx: TurnContext, reply_with: Callable[[TurnContext, Sequence[SystemBlock]], TurnResult]
    ) -> TurnResult | None: ...


class HostedBranch(Protocol):
    """The hosted workflow tools' branch (hosted/chat.py): it asks the model itself, with tools."""

    def __call__(self, ctx: TurnContext, asker: Executor) -> TurnResult | None: ...


class Executor:
    def __init__(
        self,
        skills: Skills,
        model: ChatModel,
        *,
        new_id: Callable[[], str],
        max_tokens: int | None = None,
        tool_branch: Branch | None = None,
        context_blocks: Callable[[TurnContext], tuple[Sequence[SystemBlock], int | None]] | None = None,
        hosted_branch: HostedBranch | None = None,
    ):
        self._skills = skills
        self._model = model
        self._new_id = new_id
        self._max_tokens = max_tokens
        self._tool_branch = tool_branch
        self._context_blocks = context_blocks
        self._hosted_branch = hosted_branch

    def execute(self, ctx: TurnContext) -> TurnResult:
        result = (
            self._active_workflow(ctx)
            or self._new_workflow(ctx)
            or (self._tool_branch(ctx, self.reply_with) if self._tool_branch else None)
            or (self._hosted_branch(ctx, self) if self._hosted_branch else None)
            or self._prompt_skill(ctx)
            or self.reply_with(ctx, ())
        )
        if result.session_write is None and ctx.session is not None and ctx.session.active:
            # The live session's skill was disabled or withdrawn: end it, so that re-enabling the skill
            # later does not resume a stale step.
            ended = replace(ctx.session, status=SessionStatus.CANCELLED, revision=ctx.session.revision + 1,
                            updated_at=ctx.now)
            result = replace(result, session_write=SessionWrite(ended, ctx.session.revision))
        return result

    # -- workflows ---------------------------------------------------------------------------------
    def _active_workflow(self, ctx: TurnContext) -> TurnResult | None:
        session = ctx.session
        if session is None or not session.active:
            return None
        definition = self._skills.workflows.get(session.skill_id, session.skill_version)
        if definition is None or not ctx.enabled(definition.manifest):
            # The skill was disabled (or its version withdrawn) mid-session: the session ends quietly and
            # the turn continues down the chain, since a disabled skill is never triggered.
            return None
        # The session keeps its language; only a message that shows Chinese switches it (goal_setting.py).
        transition = definition.handler.advance(session, ctx.text, chinese=detect(ctx.text) is Language.ZH)
        return self._workflow_result(ctx, definition, transition, session)

    def _new_workflow(self, ctx: TurnContext) -> TurnResult | None:
        picked = select_workflow(self._skills, ctx.text, ctx.conversation.kind, ctx.disabled_skills)
        if picked is not None:
            definition, match = picked
            # Only an explicit command carries an argument (`/goal run a 10k`); a plainly worded request does not.
            argument = match.argument if match.kind is MatchKind.COMMAND else ""
            transition = definition.handler.start(argument, chinese=ctx.language(read_history=False) is Language.ZH)
            return self._workflow_result(ctx, definition, transition, None)
        return None

    def _workflow_result(
        self,
        ctx: TurnContext,
        definition: WorkflowSkillDefinition,
        transition: WorkflowTransition,
        previous: WorkflowSession | None,
    ) -> TurnResult:
        status = (
            SessionStatus.CANCELLED if transition.cancelled
            else SessionStatus.COMPLETED if transition.finished
            else SessionStatus.ACTIVE
        )
        stale = ctx.session if ctx.session is not None and ctx.session.active and previous is None else None
        if previous is None:
            session = WorkflowSession(
                conversation_id=ctx.conversation.conversation_id,
                session_id=self._new_id(),
                skill_id=definition.manifest.skill_id,
                skill_version=definition.manifest.version,
                status=status,
                step=transition.step,
                slots=transition.slots,
                # A live session of an unavailable skill is replaced under its own revision.
                revision=stale.revision + 1 if stale else 1,
                started_at=ctx.now,
                updated_at=ctx.now,
            )
            write = SessionWrite(session, stale.revision if stale else None)
        else:
            session = replace(previous, status=status, step=transition.step, slots=transition.slots,
                              revision=previous.revision + 1, updated_at=ctx.now)
            write = SessionWrite(session, previous.revision)
        return TurnResult(
            reply=transition.reply, kind=RunKind.WORKFLOW, outcome=RunOutcome.SUCCEEDED,
            skill=definition.manifest, session_write=write,
        )

    # -- prompt skills and plain replies -----------------------------------------------------------
    def _prompt_skill(self, ctx: TurnContext) -> TurnResult | None:
        chosen = select_prompts(self._skills, ctx.text, ctx.conversation.kind, ctx.disabled_skills)
        if not chosen:
            return None
        blocks = [SystemBlock(BlockKind.SKILL, d.instruction, source=d.manifest.skill_id) for d in chosen]
        result = self.reply_with(ctx, blocks)
        # The first matching prompt skill names the run; the others still shaped the reply.
        return replace(result, kind=RunKind.PROMPT, skill=chosen[0].manifest)

    def ask_model(self, ctx: TurnContext, blocks: Sequence[SystemBlock], *,
                  tools: Sequence[ToolSpec] = (), tool_choice: ToolChoice | None = None) -> ModelResponse:
        """The model asked as for a reply (persona, context blocks, the prompt skills this text selects, `blocks`),
        with `tools` offered; raises ModelError. The hosted branch's way to the model (hosted/chat.py)."""
        context, _memories = self._context_blocks(ctx) if self._context_blocks else ((), None)
        prompts = [SystemBlock(BlockKind.SKILL, d.instruction, source=d.manifest.skill_id) for d in
                   select_prompts(self._skills, ctx.text, ctx.conversation.kind, ctx.disabled_skills)]
        return self._model.converse(ModelRequest(
            system=(persona_block(ctx), *context, *prompts, *blocks), messages=tuple(self._messages(ctx)),
            tools=tuple(tools), max_tokens=self._max_tokens, tool_choice=tool_choice,
        ))

    def plain_result(self, ctx: TurnContext, text: str) -> TurnResult:
        """A reply the model gave with tools offered and none called: a prompt or plain run, as without tools."""
        chosen = select_prompts(self._skills, ctx.text, ctx.conversation.kind, ctx.disabled_skills)
        _context, memories = self._context_blocks(ctx) if self._context_blocks else ((), None)
        if chosen:
            return TurnResult(reply=text, kind=RunKind.PROMPT, outcome=RunOutcome.SUCCEEDED, skill=chosen[0].manifest,
                              memories_used=memories)
        return TurnResult(reply=text, kind=RunKind.PLAIN, outcome=RunOutcome.SUCCEEDED, memories_used=memories)

    def reply_with(self, ctx: TurnContext, blocks: Sequence[SystemBlock]) -> TurnResult:
        """Asks the model for a reply with the persona, the context blocks and `blocks`; never raises."""
        context, memories = self._context_blocks(ctx) if self._context_blocks else ((), None)
        request = ModelRequest(
            system=(persona_block(ctx), *context, *blocks),
            messages=tuple(self._messages(ctx)),
            max_tokens=self._max_tokens,
        )
        try:
            response = self._model.converse(request)
            text = response.text.strip()
            if not text:
                raise ModelError("empty_reply")
        except ModelError as error:
            logger.warning("model unavailable", extra={"error_code": str(error)})
            model_degraded(str(error))
            text = DEGRADED_REPLY[1 if ctx.language() is Language.ZH else 0]
            return TurnResult(reply=text, kind=RunKind.PLAIN, outcome=RunOutcome.DEGRADED, memories_used=memories)
        return TurnResult(reply=text, kind=RunKind.PLAIN, outcome=RunOutcome.SUCCEEDED, memories_used=memories)

    def _messages(self, ctx: TurnContext) -> list[ChatMessage]:
        history = [
            ChatMessage(role="user" if m.role is Role.USER else "assistant", text=m.text) for m in ctx.history()
        ]
        return [*history, ChatMessage(role="user", text=ctx.text)]


def persona_block(ctx: TurnContext) -> SystemBlock:
    """The agent's identity. Name and persona are the user's words, so they travel as data, not instructions."""
    text = (
        "You are the user's AI companion, named and described below. Be warm, honest and brief. "
        "Never claim to remember something you were not given."
    )
    facts = (f"Name: {ctx.agent.name}",) + ((f"Persona: {ctx.agent.persona}",) if ctx.agent.persona else ())
    return SystemBlock(BlockKind.PERSONA, text, source="agent", facts=facts)
