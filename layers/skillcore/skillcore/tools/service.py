"""A tool skill called directly, outside a chat turn: how an agent host uses one through the MCP face.

The same path as the chat turn's tool branch: the skill switch, then PolicyGate and the ToolRunner (input
validation, execution record, timeout, output validation, the decision and result audit events), with the
record's completion and the audit events committed in one transaction. What differs is only the identity of
the call: there is no conversation and no source message, so each call mints its own id, which stands where
a turn's source message id stands (in the idempotency key and the audit): every call runs, as a read-only
tool may.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct
from pydantic import BaseModel

from skillcore.clock import Clock
from skillcore.conversations import agent_store
from skillcore.db.dynamo import Db
from skillcore.db.transact import transact
from skillcore.errors import (
    AgentNotFound,
    Internal,
    PermissionRequired,
    SkillDisabled,
    ValidationFailed,
)
from skillcore.ids import new_id
from skillcore.memory.ports import read_only_ports, turn_memory_reader
from skillcore.policy import audit_store, grant_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.gate import permission_required_details, refusal, scope_candidates
from skillcore.skills.tools import ToolSkillDefinition
from skillcore.tools.runner import ToolCallContext, ToolRunner, ToolStatus


class ToolCallDeps(Struct, frozen=True):
    db: Db
    clock: Clock


class ToolFailed(Internal):
    """The tool ran and failed (timeout, handler error, invalid output): nothing is invented around it. Answered
    as `internal` (500), with the tool's message."""


def call_tool_skill(
    deps: ToolCallDeps, definition: ToolSkillDefinition, user_id: str, *, agent_id: str, raw_input: dict[str, Any]
) -> BaseModel:
    """Runs one tool skill for this owner's agent; returns its validated output or raises the API error."""
    db, now = deps.db, deps.clock()
    manifest = definition.manifest
    if agent_store.get_agent(db, user_id, agent_id) is None:
        raise AgentNotFound()
    disabled, grants = grant_store.read_policy_state(db, user_id, [
        grant_store.grant_key(user_id, manifest.skill_id, p.code, scope)
        for p in manifest.permissions for scope in scope_candidates(agent_id)
    ])
    call_id = new_id(now)
    if manifest.skill_id in disabled:
        audit_store.put_audit(db, AuditEvent(
            event_id=new_id(now), user_id=user_id, at=now, skill_id=manifest.skill_id, skill_version=manifest.version,
            action=AuditAction.TOOL_EXECUTE, decision=Decision.DENIED, target_id=agent_id, reason="skill_disabled",
            metadata=AuditMetadata(tool_id=definition.tool_id, source_message_id=call_id),
        ))
        raise SkillDisabled()

    runner = ToolRunner(db, clock=lambda: now, new_id=lambda: new_id(now))
    ports = read_only_ports(turn_memory_reader(db))(user_id, agent_id)
    outcome = runner.run(
        definition, manifest, ToolCallContext(user_id=user_id, agent_id=agent_id, conversation_id=None,
                                              source_message_id=call_id),
        raw_input, grants, ports,
    )
    transact(db, list(outcome.writes))
    if outcome.status is ToolStatus.DENIED:
        decision = outcome.decision
        missing = decision.missing if decision else ()
        if decision is not None:
            raise refusal(manifest.skill_id, decision, manifest.permissions)
        raise PermissionRequired(None, permission_required_details(manifest.skill_id, missing, manifest.permissions))
    if outcome.status is ToolStatus.FAILED or outcome.output is None:
        if outcome.error_code == "invalid_input":
            raise ValidationFailed("the tool input is not valid")
        raise ToolFailed("the tool failed", details={"reason": outcome.error_code})
    return outcome.output
