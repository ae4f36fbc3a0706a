"""Hosted workflow tools in a single chat (issue 12 point 6): the executor's branch that offers them, makes a call
and its approval in the conversation, and answers with the result.

One job per module:
- hosted/chat_tools.py: what the model is offered (the tools within the caps, their wire names, the schemas it
  sees, built from an allow-list, and the remote texts as quoted data) and the way back to remote names;
- hosted/chat_words.py: what the owner types (the `/hosted` command, the answer to an approval);
- hosted/chat_replies.py: what the server says (the result, quoted as data; the approval prompt; refusals);
- hosted/chat_delivery.py: an approval given by API, followed up by HostedFunction (`deliver_after_decision`);
- here: the branch, which takes a turn that answers a pending approval, names a hosted tool, or in which the
  model calls an offered one. Every call goes through hosted/calls.py.

Approval in the chat: a call that needs one gets a reply asking for it (chat_replies.ask_text); the pending call
is kept (hosted/chat_call_store.py) until the owner answers in the conversation (chat_words.parse_answer) or by API
(chat_delivery).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from skillcore.approvals.errors import ApprovalNotPending
from skillcore.conversations.models import ConversationKind, MessageCard, Role, RunKind, RunOutcome
from skillcore.db.dynamo import Db
from skillcore.db.transact import Op
from skillcore.errors import DomainError, UnknownTool
from skillcore.executor.context import TurnContext, TurnResult
from skillcore.hosted import chat_call_store as chat_calls
from skillcore.hosted import endpoint_store
from skillcore.hosted.chat_replies import (
    ask_card,
    ask_text,
    denied_text,
    failed_text,
    not_available_text,
    not_pending_text,
    result_block,
    result_card,
    result_text,
)
from skillcore.hosted.chat_tools import OfferedTool, ToolMap, offered_tools, wire_name
from skillcore.hosted.chat_words import Answer, Command, parse_answer, parse_command
from skillcore.hosted.errors import ApprovalRequired
from skillcore.hosted.models import MAX_ENDPOINTS_PER_USER
from skillcore.language import Language, choose
from skillcore.model.port import ModelError, ModelResponse, SystemBlock, ToolChoice, ToolSpec
from skillcore.policy.gate import OperationApproval, PolicyInput, decide
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS

MAX_CALLS_PER_TURN = 1


class Asker(Protocol):
    """What the branch needs of the executor: the model asked with the turn's persona and context."""

    def ask_model(self, ctx: TurnContext, blocks: Sequence[SystemBlock], *,
                  tools: Sequence[ToolSpec] = (), tool_choice: ToolChoice | None = None) -> ModelResponse: ...

    def plain_result(self, ctx: TurnContext, text: str) -> TurnResult: ...


def client_call_id(source_message_id: str, index: int) -> str:
    return f"chat-{source_message_id}-{index}"


def reply_language(ctx: TurnContext, command: Command | None) -> Language:
    """The language of the branch's replies: the turn's (skillcore/language.py), except for a `/hosted` command,
    whose tool name and JSON arguments are no one's language (`{"a": 2}` is not English): then the conversation's,
    from the user's earlier messages that are not commands themselves, else the default."""
    if command is None:
        return ctx.language()

    def earlier() -> Iterator[str]:
        for message in reversed(ctx.history()):
            if message.role is Role.USER and parse_command(message.text) is None:
                yield message.text

    return choose(earlier())


class HostedChatBranch:
    """Takes a turn that answers a pending approval, names a hosted tool (`/hosted`), or in which the model
    calls an offered hosted tool. Otherwise it answers with the model's text, asked with the tools offered."""

    def __init__(self, db: Db, hosted_deps: Callable[[], Any]):
        self._db = db
        self._hosted_deps = hosted_deps  # built on the first call: the egress settings and the key

    def __call__(self, ctx: TurnContext, asker: Asker) -> TurnResult | None:
        if ctx.conversation.kind is not ConversationKind.SINGLE:
            return None
        command = parse_command(ctx.text)
        language = reply_language(ctx, command)
        # `批准` / `approve` decides only in a person's own message; from an agent host's token it is an
        # ordinary message and the approval stays pending.
        answer = parse_answer(ctx.text) if ctx.from_person else None
        if answer is not None:
            answered = self._answer(ctx, answer, language)
            if answered is not None:
                return answered
        label = f"{command.endpoint_name}.{command.tool_name}" if command else ""
        if not ctx.enabled(HOSTED_WORKFLOWS):
            return self._fixed(ctx, asker, not_available_text(label, "disabled", language), RunOutcome.DENIED) \
                if command else None
        granted = decide(PolicyInput(
            user_id=ctx.user_id, skill_id=HOSTED_WORKFLOWS.skill_id, skill_version=HOSTED_WORKFLOWS.version,
            requirements=HOSTED_WORKFLOWS.permissions, action="hosted_endpoint.offer", agent_id=ctx.agent.agent_id,
            grants=ctx.grants(), operation=OperationApproval(requires_approval=False, approved=False),
        ))
        if not granted.allowed:
            return self._fixed(ctx, asker, not_available_text(label, "grant", language), RunOutcome.DENIED) \
                if command else None
        # One page holds them all: a user has at most MAX_ENDPOINTS_PER_USER endpoints.
        endpoints, _ = endpoint_store.list_endpoints(self._db, ctx.user_id, limit=MAX_ENDPOINTS_PER_USER, cursor=None)
        # A grant narrowed to some endpoints or tools (policy/scopes.py) offers only those; its argument
        # constraints are checked per call (hosted/calls.py).
        reachable = [o for o in offered_tools(endpoints)
                   if all(g.narrowing is None or g.narrowing.covers_tool(o.endpoint.endpoint_id, o.tool.name)
                          for g in granted.matched_grants)]
        tools = ToolMap(reachable, first=(command.endpoint_name, command.tool_name) if command else None)
        if command is not None:
            if tools.find(command.endpoint_name, command.tool_name) is None:
                return self._fixed(ctx, asker, not_available_text(label, "tool", language), RunOutcome.DENIED)
            if command.arguments is None:
                return self._fixed(ctx, asker, not_available_text(label, "arguments", language), RunOutcome.FAILED)
        if not tools:
            return None
        # A message that names the tool (`/hosted`) forces that tool: its input is the model's only answer.
        forced = ToolChoice.tool(wire_name(command.endpoint_name, command.tool_name)) if command else None
        described = tools.data_block()  # what the servers say about their tools: quoted data, never instructions
        try:
            response = asker.ask_model(ctx, (described,) if described else (), tools=tools.specs(),
                                       tool_choice=forced)
        except ModelError:
            return None  # the plain branch degrades and says so
        for call in response.tool_calls[:MAX_CALLS_PER_TURN]:
            offered = tools.resolve(call.name)
            if offered is not None:  # a name not offered is never called
                return self._call(ctx, asker, offered, tools.arguments(call.name, call.input), language,
                                  client_call_id(ctx.source_message_id, 0), approval_id=None)
        if not response.text.strip():
            return None
        return asker.plain_result(ctx, response.text.strip())

    # -- one call, and what the turn says about it
    def _call(self, ctx: TurnContext, asker: Asker, offered: OfferedTool, arguments: dict[str, Any],
              language: Language, call_id: str, *, approval_id: str | None, writes: tuple[Op, ...] = ()) -> TurnResult:
        from skillcore.hosted import calls  # the MCP client comes with it, only when a call is made

        label = offered.label
        try:
            result = calls.call(self._hosted_deps(), ctx.user_id, offered.endpoint.endpoint_id,
                                tool_name=offered.tool.name, arguments=arguments, client_call_id=call_id,
                                approval_id=approval_id, now=ctx.now, agent_id=ctx.agent.agent_id)
        except ApprovalRequired as required:
            if approval_id is not None:  # asked again for a call its approval was given for: it failed
                return self._fixed(ctx, asker, failed_text(label, required.code, language), RunOutcome.FAILED,
                                   writes=writes)
            asked = required.details["approvalId"]
            from skillcore.approvals.digest import arguments_preview

            pending = chat_calls.ChatCall(
                user_id=ctx.user_id, approval_id=asked, conversation_id=ctx.conversation.conversation_id,
                agent_id=ctx.agent.agent_id, endpoint_id=offered.endpoint.endpoint_id,
                endpoint_name=offered.endpoint.name, tool_name=offered.tool.name, arguments=arguments,
                client_call_id=call_id, asked_at=ctx.now, language=language.value)
            preview = arguments_preview(arguments)
            text = ask_text(label, asked, preview, language)
            card = ask_card(offered.endpoint.endpoint_id, offered.endpoint.name, offered.tool.name, asked, preview,
                            ctx.now)
            return self._fixed(ctx, asker, text, RunOutcome.SUCCEEDED, card=card,
                               writes=(*writes, Op("chat_call", chat_calls.put_op(self._db, pending))))
        except DomainError as error:
            return self._fixed(ctx, asker, failed_text(label, error.code, language), RunOutcome.FAILED, writes=writes)
        text = result_text(label, result, language)
        try:
            reply = asker.ask_model(ctx, (result_block(text),)).text.strip() or text
        except ModelError:
            reply = text  # the result is still the user's: shown as rendered here
        card = result_card(offered.endpoint.endpoint_id, offered.endpoint.name, offered.tool.name, result,
                           replaces_text=reply == text)
        return TurnResult(reply=reply, kind=RunKind.TOOL, outcome=RunOutcome.SUCCEEDED, skill=HOSTED_WORKFLOWS,
                          writes=writes, card=card)

    def _fixed(self, ctx: TurnContext, asker: Asker, text: str, outcome: RunOutcome,
               writes: tuple[Op, ...] = (), card: MessageCard | None = None) -> TurnResult:
        """A reply whose words are the server's (a request for approval, a refusal): no model is asked."""
        return TurnResult(reply=text, kind=RunKind.TOOL, outcome=outcome, skill=HOSTED_WORKFLOWS, writes=writes,
                          card=card)

    # -- an answer to a pending approval
    def _answer(self, ctx: TurnContext, answer: Answer, language: Language) -> TurnResult | None:
        pending = chat_calls.pending_in(self._db, ctx.user_id, ctx.conversation.conversation_id)
        if answer.code is not None:
            pending = [p for p in pending if p.short_code == answer.code]
        if not pending:
            return None
        chosen = pending[-1]
        from skillcore.approvals import service as approvals
        from skillcore.approvals.models import ApprovalDecision

        label = f"{chosen.endpoint_name}.{chosen.tool_name}"
        done = (Op("chat_call", chat_calls.delete_op(self._db, ctx.user_id, chosen.approval_id)),)
        try:
            approvals.decide(self._db, ctx.user_id, chosen.approval_id,
                             ApprovalDecision.APPROVE if answer.approve else ApprovalDecision.DENY,
                             skill_id=HOSTED_WORKFLOWS.skill_id, skill_version=HOSTED_WORKFLOWS.version, now=ctx.now,
                             caller_kind="person")  # only a person's message gets here (__call__)
        except DomainError as error:
            status = error.details["status"] if isinstance(error, ApprovalNotPending) else error.code
            # Approved already (by API meanwhile, or by this very answer in a turn that died before it committed):
            # the call below is idempotent by its clientCallId, so it answers the one result and never calls twice.
            if not (answer.approve and status in ("approved", "used")):
                return self._fixed(ctx, _NO_MODEL, not_pending_text(label, status, language), RunOutcome.DENIED,
                                   writes=done)
        if not answer.approve:
            return self._fixed(ctx, _NO_MODEL, denied_text(label, language), RunOutcome.DENIED, writes=done)
        endpoint = endpoint_store.get_endpoint(self._db, ctx.user_id, chosen.endpoint_id)
        tool = endpoint.snapshot.tool(chosen.tool_name) if endpoint else None
        if endpoint is None or tool is None:
            return self._fixed(ctx, _NO_MODEL, failed_text(label, UnknownTool.code, language), RunOutcome.FAILED,
                               writes=done)
        return self._call(ctx, _NO_MODEL, OfferedTool(endpoint=endpoint, tool=tool), chosen.arguments, language,
                          chosen.client_call_id, approval_id=chosen.approval_id, writes=done)


class _NoModel:
    """An approved call's result is posted as rendered: the approval answer is the user's last word."""

    def ask_model(self, ctx: TurnContext, blocks: Sequence[SystemBlock], *,
                  tools: Sequence[ToolSpec] = (), tool_choice: ToolChoice | None = None) -> ModelResponse:
        raise ModelError("not_asked")

    def plain_result(self, ctx: TurnContext, text: str) -> TurnResult:
        raise AssertionError("no plain result after an approval")


_NO_MODEL = _NoModel()
