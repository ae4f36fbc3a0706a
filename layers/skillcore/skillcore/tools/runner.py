"""ToolRunner, in the seed's order:

PolicyGate -> buildInput (done by the caller) -> validate input -> input SHA-256 and idempotency key ->
create the execution record (conditional: one per key) -> run the handler under a real timeout ->
validate the output -> build the system instruction -> audit events (decision and result, separately).

The runner returns the writes that complete the record and the audit events; the chat turn commits them
in its own transaction, together with the messages and the SkillRun, so nothing is half-recorded.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from msgspec import Struct
from pydantic import BaseModel, ValidationError

from skillcore import faults
from skillcore.conversations.models import ExecutionStatus
from skillcore.db.dynamo import Db
from skillcore.db.transact import Op
from skillcore.errors import SandboxFailure
from skillcore.observability import logger, tool_call
from skillcore.outcomes import store as outcome_counters
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.gate import PolicyDecision, PolicyInput, decide, mismatch_metadata
from skillcore.policy.grants import PermissionGrant
from skillcore.policy.scopes import ScopedCall
from skillcore.skills.manifest import SkillManifest
from skillcore.tools import execution_store as tool_executions


class RunnableTool(Protocol):
    @property
    def tool_id(self) -> str: ...
    @property
    def timeout_ms(self) -> int: ...
    @property
    def max_calls_per_turn(self) -> int: ...
    @property
    def input_model(self) -> type[BaseModel]: ...
    @property
    def output_model(self) -> type[BaseModel]: ...
    @property
    def execute(self) -> Callable[[Any, Any], Any]: ...  # (validated input, the skill's ports) -> output


class ToolStatus(StrEnum):
    SUCCEEDED = "succeeded"
    DENIED = "denied"
    FAILED = "failed"


class ToolCallContext(Struct, frozen=True):
    user_id: str
    agent_id: str
    conversation_id: str | None  # None when an agent host calls the tool through the MCP face (no conversation)
    source_message_id: str
    call_index: int = 0
    calls_so_far: int = 0


class ToolOutcome(Struct, frozen=True):
    status: ToolStatus
    decision: PolicyDecision | None
    output: BaseModel | None = None
    error_code: str | None = None
    duration_ms: int = 0
    writes: tuple[Op, ...] = ()
    audit: tuple[AuditEvent, ...] = ()
    idempotency_key: str | None = None


def input_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """What a left-out argument of the tool's input becomes (for a grant's argument constraints)."""
    return {(field.alias or name): field.default for name, field in model.model_fields.items()
            if not field.is_required() and field.default_factory is None}


def input_digest(data: BaseModel) -> str:
    canonical = json.dumps(data.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def idempotency_key(user_id: str, tool_id: str, source_message_id: str, call_index: int = 0) -> str:
    parts = [user_id, tool_id, source_message_id] + ([str(call_index)] if call_index else [])
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    # Threads, not processes: handlers are I/O bound. A timed-out handler's thread finishes in the background;
    # the turn has stopped waiting for it and its result is discarded.
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tool")
    return _pool


TIMEOUTS = frozenset({"timeout", "sandbox_timeout"})


def _outcome(status: ToolStatus, error: str | None) -> str:
    if status is ToolStatus.SUCCEEDED:
        return outcome_counters.SUCCEEDED
    if status is ToolStatus.DENIED:
        return outcome_counters.DENIED
    return outcome_counters.TIMEOUT if error in TIMEOUTS else outcome_counters.FAILED


class ToolRunner:
    def __init__(self, db: Db, *, clock: Callable[[], datetime], new_id: Callable[[], str]):
        self._db = db
        self._clock = clock
        self._new_id = new_id

    def run(
        self,
        tool: RunnableTool,
        manifest: SkillManifest,
        call: ToolCallContext,
        raw_input: dict[str, Any],
        grants: tuple[PermissionGrant, ...],
        ports: Any,  # the tool's skill's ports, bound by the caller to this owner and agent
    ) -> ToolOutcome:
        started = time.perf_counter()
        now = self._clock()
        events: list[AuditEvent] = []

        def audit(action: AuditAction, decision: Decision, *, reason: str | None, scope: Any = None, **meta: Any) -> None:
            events.append(AuditEvent(
                event_id=self._new_id(), user_id=call.user_id, at=now, skill_id=manifest.skill_id,
                skill_version=manifest.version, action=action, decision=decision, scope=scope,
                target_id=call.agent_id, reason=reason,
                metadata=AuditMetadata(tool_id=tool.tool_id, conversation_id=call.conversation_id,
                                       source_message_id=call.source_message_id, **meta),
            ))

        def finish(status: ToolStatus, decision: PolicyDecision | None, *, error: str | None = None,
                   output: BaseModel | None = None, key: str | None = None) -> ToolOutcome:
            duration = int((time.perf_counter() - started) * 1000)
            tool_call(status.value, error or (decision.reason.value if decision else None))
            writes = [Op("audit", audit_store.put_audit_op(self._db, e)) for e in events]
            if manifest.source == "package":
                self._count(manifest, _outcome(status, error), now)
            if key:
                writes.insert(0, tool_executions.finish_execution_op(
                    self._db, key, status=ExecutionStatus(status.value), error_code=error, duration_ms=duration, now=now,
                ))
            return ToolOutcome(status, decision, output, error, duration, tuple(writes), tuple(events), key)

        # 1. PolicyGate, before anything else happens.
        decision = decide(PolicyInput(
            user_id=call.user_id, skill_id=manifest.skill_id, skill_version=manifest.version,
            requirements=manifest.permissions, action="tool.execute", agent_id=call.agent_id,
            target_id=call.agent_id, grants=grants,
            call=ScopedCall(tool=tool.tool_id, arguments=raw_input if isinstance(raw_input, dict) else {},
                            defaults=input_defaults(tool.input_model)),
        ))
        codes = tuple(p.code for p in manifest.permissions)
        if not decision.allowed:
            audit(AuditAction.TOOL_EXECUTE, Decision.DENIED, reason=decision.reason.value, scope=decision.scope,
                  permission_codes=codes, missing_permissions=decision.missing,
                  matched_grant_ids=tuple(g.grant_id for g in decision.matched_grants), **mismatch_metadata(decision))
            return finish(ToolStatus.DENIED, decision)
        audit(AuditAction.TOOL_EXECUTE, Decision.ALLOWED, reason=decision.reason.value, scope=decision.scope,
              permission_codes=codes, matched_grant_ids=tuple(g.grant_id for g in decision.matched_grants))

        # 2. The per-turn call cap.
        if call.calls_so_far >= tool.max_calls_per_turn:
            audit(AuditAction.TOOL_EXECUTE, Decision.FAILED, reason="call_cap_exceeded", error_code="call_cap_exceeded",
                  call_index=call.call_index)
            return finish(ToolStatus.FAILED, decision, error="call_cap_exceeded")

        # 3. Validate the input: invalid input never reaches the handler.
        try:
            parsed = tool.input_model.model_validate(raw_input)
        except ValidationError:
            audit(AuditAction.TOOL_EXECUTE, Decision.FAILED, reason="invalid_input", error_code="invalid_input",
                  call_index=call.call_index)
            return finish(ToolStatus.FAILED, decision, error="invalid_input")

        # 4. Digest and idempotency key; 5. the execution record (one per key).
        digest = input_digest(parsed)
        key = idempotency_key(call.user_id, tool.tool_id, call.source_message_id, call.call_index)
        existing = tool_executions.create_execution(
            self._db, idempotency_key=key, user_id=call.user_id, tool_id=tool.tool_id, skill_id=manifest.skill_id,
            skill_version=manifest.version, source_message_id=call.source_message_id, input_sha256=digest, now=now,
        )
        if existing is not None:
            # The same source message ran this tool before (a retried request). Read-only tools simply run
            # again; write tools make their own effect idempotent from the same key. No second record.
            logger.info("tool execution record exists", extra={"tool_id": tool.tool_id})

        # 6. The handler, under a real timeout.
        error: str | None = None
        output: BaseModel | None = None
        try:
            future = _executor().submit(self._call_handler, tool, parsed, ports)
            raw_output = future.result(timeout=tool.timeout_ms / 1000)
            # 7. Validate the output.
            output = tool.output_model.model_validate(
                raw_output.model_dump() if isinstance(raw_output, BaseModel) else raw_output
            )
        except FutureTimeout:
            error = "timeout"
        except ValidationError:
            error = "invalid_output"
        except SandboxFailure as exc:  # a code tool's limit or trap (skillcore/sandbox/): its own code
            error = exc.code
        except Exception as exc:  # noqa: BLE001 - any handler failure is recorded, never shown or invented around
            error = "transient_error" if isinstance(exc, faults.InjectedTransientError) else "handler_error"
            logger.warning("tool handler failed", extra={"tool_id": tool.tool_id, "error_type": type(exc).__name__})

        meta: dict[str, Any] = {"idempotency_key": key, "input_sha256": digest, "call_index": call.call_index}
        if error:
            audit(AuditAction.TOOL_EXECUTE, Decision.FAILED, reason=error, error_code=error, **meta)
            return finish(ToolStatus.FAILED, decision, error=error, key=key)
        count = getattr(tool, "result_count", lambda _o: None)(output)
        audit(AuditAction.TOOL_EXECUTE, Decision.SUCCEEDED, reason="succeeded", results=count, **meta)
        return finish(ToolStatus.SUCCEEDED, decision, output=output, key=key)

    def _count(self, manifest: SkillManifest, outcome: str, now: datetime) -> None:
        """An installed skill's version: its outcome counted for its canary (skillcore/outcomes/), one UpdateItem
        of its own (not in the turn's transaction: two calls of one turn would update one item twice). The call
        happened whatever the turn's commit does; a count that cannot be written is logged, never the call's
        failure."""
        try:
            outcome_counters.record(self._db, manifest.skill_id, manifest.version, outcome, now)
        except Exception as exc:  # noqa: BLE001 - counting never fails a call
            logger.warning("outcome not counted", extra={"skill_id": manifest.skill_id, "error_type": type(exc).__name__})

    @staticmethod
    def _call_handler(tool: RunnableTool, parsed: BaseModel, ports: Any) -> Any:
        if faults.hit(faults.FaultPoint.TOOL_HANDLER) is faults.FaultKind.TIMEOUT:
            time.sleep(tool.timeout_ms / 1000 + 0.25)
        return tool.execute(parsed, ports)
