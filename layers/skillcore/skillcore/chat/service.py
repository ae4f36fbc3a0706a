"""The chat turn: POST /rpc/conversations/{conversationId}/messages.

DynamoDB requests of a plain turn: 1 BatchGetItem (conversation, skill switches, turn record, workflow
session), 1 Query of the user's grants and, with memory:read granted, 1 Query of the agent's active
memories (a context skill), 1 Query (recent visible messages, only when the model is asked), 1
TransactWriteItems (both messages, conversation summary, agent lastReplyAt, turn record, SkillRun,
session, tool record and audit events). A memory recall turn (a tool skill) adds the execution record's Put and the
recall's Query. Workflow turns read neither grants, memories nor history. With `hosted_workflow:invoke`
granted, a single-chat turn adds 1 Query of the user's hosted endpoints (skillcore/hosted/chat.py); a hosted
call adds hosted/calls.py's own requests (3 for a forwarded call), an answer to a pending approval 1 Query of
the conversation's pending calls and the approval's decision (1 GetItem, 1 TransactWriteItems).

Duplicate recovery: the turn record (conversationId + clientMessageId) is written in the same
transaction under attribute_not_exists. A repeated post finds it in the first read and returns the stored
response without executing anything; a concurrent twin that loses the transaction gets the winner's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

import msgspec
from msgspec import Struct

from skillcore.chat.errors import ClientMessageConflict
from skillcore.clock import Clock
from skillcore.conversations import agent_store as agents
from skillcore.conversations import conversation_store as conversations
from skillcore.conversations import message_store as messages
from skillcore.conversations import run_store as runs
from skillcore.conversations import session_store as sessions
from skillcore.conversations import turn_store as turns
from skillcore.conversations.models import Message, Origin, Role, SkillRun, preview
from skillcore.conversations.turn_state import read_turn_state
from skillcore.db.dynamo import Db
from skillcore.db.errors import TransactionFailed
from skillcore.db.idempotency import Record, lost_claim
from skillcore.db.transact import Op, transact
from skillcore.errors import AgentNotFound, NotFound, VersionConflict
from skillcore.executor.context import TurnContext, TurnResult
from skillcore.executor.executor import Executor
from skillcore.ids import new_id, stable_id
from skillcore.observability import chat_turn, logger
from skillcore.policy import grant_store as grants


class TurnResponse(Struct, frozen=True, kw_only=True):
    """What a turn answers; stored whole (as JSON-ready builtins) so a duplicate gets the same body."""

    user_message: Message
    reply: Message
    run: SkillRun


class ChatDeps(Struct, frozen=True):
    db: Db
    executor_for: Callable[[datetime], Executor]
    clock: Clock
    history_messages: int = 20


def post_message(
    deps: ChatDeps, *, user_id: str, conversation_id: str, client_message_id: str, text: str, agent_id: str | None,
    from_person: bool,
) -> TurnResponse:
    """One chat turn. `from_person`: the message was posted with a person's token (not an agent host's); only
    then can it decide a pending approval (`批准` / `approve`)."""
    started = time.perf_counter()
    now = deps.clock()
    state = read_turn_state(deps.db, user_id, conversation_id, client_message_id)
    conversation = state.conversation
    if conversation is None:
        raise NotFound("conversation not found")
    if state.recorded is not None:
        return _replay(state.recorded, text)

    agent = conversation.agent(agent_id) if agent_id else (conversation.agents[0] if conversation.agents else None)
    if agent is None:
        raise AgentNotFound("agent not found in this conversation")

    # The user message id is derived from the client's message identity, so a retried request that died
    # before committing reuses it, and with it the tool idempotency key userId + toolId + sourceMessageId.
    user_message = Message(
        message_id=stable_id(conversation_id, client_message_id), conversation_id=conversation_id, role=Role.USER, agent_id=None,
        text=text, origin=Origin.CHAT, created_at=now,
    )
    ctx = TurnContext(
        user_id=user_id, conversation=conversation, agent=agent, text=text,
        source_message_id=user_message.message_id, disabled_skills=state.disabled_skills,
        session=state.session, now=now, from_person=from_person,
        load_history=lambda: messages.recent_visible(deps.db, conversation_id, limit=deps.history_messages),
        load_grants=lambda: grants.all_grants(deps.db, user_id),
    )
    result = deps.executor_for(now).execute(ctx)

    # The reply is never older than the question, even when the clock has not moved.
    replied_at = max(deps.clock(), now + timedelta(milliseconds=1))
    reply = Message(
        message_id=new_id(replied_at), conversation_id=conversation_id, role=Role.ASSISTANT, agent_id=agent.agent_id,
        text=result.reply, origin=Origin.CHAT, created_at=replied_at, card=result.card,
    )
    run = _run(user_id, conversation_id, result, now, started)
    response = TurnResponse(user_message=user_message, reply=reply, run=run)
    committed = _commit(deps.db, user_id, conversation_id, client_message_id, text, response, result, now)
    if committed is not response:
        return committed
    logger.info(
        "chat turn", extra={"run_kind": run.kind.value, "skill_id": run.skill_id, "outcome": run.outcome.value,
                            "duration_ms": run.duration_ms},
    )
    chat_turn(run.kind.value, run.outcome.value)
    return response


def _run(user_id: str, conversation_id: str, result: TurnResult, now: datetime, started: float) -> SkillRun:
    return SkillRun(
        run_id=new_id(now), user_id=user_id, conversation_id=conversation_id, kind=result.kind,
        skill_id=result.skill.skill_id if result.skill else None,
        skill_version=result.skill.version if result.skill else None,
        outcome=result.outcome, duration_ms=int((time.perf_counter() - started) * 1000),
        memories_used=result.memories_used, at=now,
    )


def _replay(recorded: Record, text: str) -> TurnResponse:
    if not recorded.same_payload(turns.payload(text)):
        raise ClientMessageConflict()
    return msgspec.convert(recorded.response, TurnResponse)


def _commit(
    db: Db, user_id: str, conversation_id: str, client_message_id: str, text: str,
    response: TurnResponse, result: TurnResult, now: datetime,
) -> TurnResponse:
    """Writes the turn atomically; returns `response`, or the stored one of a twin that committed first."""
    reply = response.reply
    ops: list[Op] = [
        turns.put_turn_op(db, conversation_id, client_message_id, text=text, response=msgspec.to_builtins(response),
                          now=now),
        Op("user_message", messages.put_message_op(db, response.user_message, user_id)),
        Op("reply", messages.put_message_op(db, reply, user_id)),
        Op("conversation", conversations.record_visible_messages_op(
            db, user_id, conversation_id, added=2, last_at=reply.created_at, last_text=preview(reply.text)
        )),
        Op("agent", agents.touch_last_reply_op(db, user_id, reply.agent_id or "", reply.created_at)),
        Op("run", runs.put_run_op(db, response.run)),
        *result.writes,
    ]
    if result.session_write:
        write = result.session_write
        ops.append(Op("session", sessions.put_session_op(db, write.session, previous_revision=write.previous_revision)))
    try:
        transact(db, ops)
        return response
    except TransactionFailed as failed:
        turn = lost_claim(failed, turns.turn_slot(db, conversation_id, client_message_id))
        if turn is not None:
            # A concurrent post with the same clientMessageId committed first: answer with its response.
            winner = turn if turn.response is not None else turns.get_turn(db, conversation_id, client_message_id)
            if winner is None:
                raise
            return _replay(winner, text)
        if failed.failed("session") is not None:
            raise VersionConflict("the workflow moved on in another turn; send the message again") from failed
        raise
