"""The host-call bridge: the only way out of a code tool, JSON in and JSON out (docs/code-skills.md, "Host
functions").

A module imports a host function as `(import "skillcore" "<name>" (func (param i32 i32) (result i64)))`: it
passes the request as JSON (pointer, length in its memory) and gets the response as JSON, written by the host
into memory the module's own `alloc` gave, packed as `ptr << 32 | len` (0 when nothing could be written).
Every response is a JSON object; a refusal or failure is `{"error": {"code": ..., "reason": ...}}` and never a
host exception, so nothing of the host's state, text or stack reaches the module.

Each call, in order: the invocation's host-call cap (`limits.hostCalls`); the declared permission of the host
function (`manifest.HOST_PERMISSIONS`), which the skill must declare and the person must hold now: PolicyGate
(`policy.gate.decide`) over the grants read at call time, exactly as for a built-in tool, with the agent's scope
before the user's. A call over the cap or without its permission is a **denial**: the module gets its JSON
error, the invocation is stopped (its fuel set to zero) and ends with `host_call_denied`, whatever the module
does next. A malformed request is only an error answer (`invalid_request`).

- `memory.search` {"query": str, "limit": 1-10}: the agent's active memories, ranked as the recall tool ranks
  them (memory/retrieval.py), `{"memories": [{"id", "title", "content", "importance"}]}`;
- `hosted.call` {"endpointId", "tool", "arguments"}: one tool the manifest lists in `hostedTools`, through the
  hosted calls service (its grant, endpoint, drift, schema and approval checks, the egress proxy, its audit),
  `{"isError", "content", "structuredContent"?}`; its refusals come back as their API codes
  (`approval_required`, `endpoint_disabled`, ...);
- `log` {"code": "[a-z][a-z0-9_]{0,39}", "value": int?}: a code (and a number) in the service's log; no text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any, Final

from msgspec import Struct

from skillcore.errors import DomainError, HostCallDenied, SandboxDetails, SandboxFailure
from skillcore.memory.models import MemoryItem
from skillcore.memory.retrieval import most_important, rank
from skillcore.observability import logger
from skillcore.policy.gate import PolicyInput, decide
from skillcore.policy.grants import PermissionGrant
from skillcore.sandbox.manifest import HOST_PERMISSIONS, CodeToolManifest, HostFunction
from skillcore.skills.manifest import SkillManifest

MAX_REQUEST_BYTES: Final = 64 << 10
MAX_RESPONSE_BYTES: Final = 256 << 10
MAX_QUERY_CHARS: Final = 200
MAX_MEMORIES: Final = 10
LOG_CODE: Final = re.compile(r"[a-z][a-z0-9_]{0,39}")
ACTION: Final = "sandbox.host_call"

# (endpoint_id, tool_name, arguments, client_call_id) -> the hosted call's answer body; raises DomainError
HostedCall = Callable[[str, str, dict[str, Any], str], dict[str, Any]]


class HostPorts(Struct, frozen=True, kw_only=True):
    """What host functions may reach, bound by the caller to one owner and one agent."""

    user_id: str
    agent_id: str
    call_id: str  # this invocation's id: the hosted calls' clientCallIds derive from it
    grants: Callable[[], tuple[PermissionGrant, ...]]  # the person's grants, read at host-call time
    memories: Callable[[], list[MemoryItem]] | None = None  # this agent's active memories
    hosted: HostedCall | None = None


def _error(code: str, reason: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code}
    if reason:
        body["reason"] = reason
    return {"error": body}


class HostBridge:
    """One invocation's host calls. `failure` is set by a denial (sticky); `stop` ends the module at once."""

    def __init__(self, tool: CodeToolManifest, skill: SkillManifest, ports: HostPorts) -> None:
        self.tool = tool
        self.skill = skill
        self.ports = ports
        self.calls = 0
        self.failure: SandboxFailure | None = None
        self.stop: Callable[[], None] = lambda: None

    def _deny(self, reason: str, *, limit: int | None = None) -> dict[str, Any]:
        details = SandboxDetails(reason=reason, toolId=self.tool.name)
        if limit is not None:
            details["limit"] = limit
        if self.failure is None:
            self.failure = HostCallDenied(details=details)
        self.stop()
        return _error(HostCallDenied.code, reason)

    def call(self, function: HostFunction, request: bytes) -> bytes:
        """One host call: the response's JSON bytes. Never raises."""
        try:
            answer = self._answer(function, request)
        except Exception as exc:  # noqa: BLE001 - nothing of the host's failure reaches the module but a code
            logger.warning("host call failed", extra={"tool_id": self.tool.name, "host_function": function.value,
                                                      "error_type": type(exc).__name__})
            answer = _error("host_error")
        body = json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode()
        if len(body) > MAX_RESPONSE_BYTES:
            body = json.dumps(_error("response_too_large")).encode()
        return body

    def _answer(self, function: HostFunction, request: bytes) -> dict[str, Any]:
        if self.failure is not None:
            return _error(HostCallDenied.code, "stopped")
        self.calls += 1
        if self.calls > self.tool.limits.host_calls:
            return self._deny("host_call_cap", limit=self.tool.limits.host_calls)
        denied = self._policy(function)
        if denied:
            return self._deny(denied)
        if len(request) > MAX_REQUEST_BYTES:
            return _error("invalid_request", "too_large")
        try:
            body = json.loads(request)
        except (ValueError, UnicodeDecodeError):
            return _error("invalid_request", "not_json")
        if not isinstance(body, dict):
            return _error("invalid_request", "not_an_object")
        if function is HostFunction.MEMORY_SEARCH:
            return self._memory_search(body)
        if function is HostFunction.HOSTED_CALL:
            return self._hosted_call(body)
        return self._log(body)

    def _policy(self, function: HostFunction) -> str | None:
        """None when the call may go on, else the denial's reason (a PolicyGate reason code)."""
        if not self.tool.declares(function):
            return "undeclared_host_function"  # unreachable through the linker; kept as a second wall
        code = HOST_PERMISSIONS[function]
        if code is None:
            return None
        requirement = self.skill.requirement(code)
        if requirement is None:
            return "permission_not_declared"
        decision = decide(PolicyInput(
            user_id=self.ports.user_id, skill_id=self.skill.skill_id, skill_version=self.skill.version,
            requirements=(requirement,), action=ACTION, agent_id=self.ports.agent_id, target_id=self.ports.agent_id,
            grants=self.ports.grants(),
        ))
        return None if decision.allowed else decision.reason.value

    def _memory_search(self, body: dict[str, Any]) -> dict[str, Any]:
        query, limit = body.get("query", ""), body.get("limit", 5)
        if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
            return _error("invalid_request", "query")
        if type(limit) is not int or not 1 <= limit <= MAX_MEMORIES:
            return _error("invalid_request", "limit")
        if self.ports.memories is None:
            return _error("unavailable")
        memories = self.ports.memories()
        found = rank(query, memories, limit) if query.strip() else most_important(memories, limit)
        return {"memories": [{"id": m.memory_id, "title": m.title, "content": m.content, "importance": m.importance}
                             for m in found]}

    def _hosted_call(self, body: dict[str, Any]) -> dict[str, Any]:
        endpoint_id, tool, arguments = body.get("endpointId"), body.get("tool"), body.get("arguments", {})
        if not isinstance(endpoint_id, str) or not isinstance(tool, str) or not isinstance(arguments, dict):
            return _error("invalid_request", "fields")
        if tool not in self.tool.hosted_tools:
            return self._deny("hosted_tool_not_declared")
        if self.ports.hosted is None:
            return _error("unavailable")
        # One clientCallId per host call of this invocation: a retried invocation repeats, never doubles, a call.
        client_call_id = hashlib.sha256(f"{self.ports.call_id}\x1f{self.calls}".encode()).hexdigest()[:26].upper()
        try:
            answer = self.ports.hosted(endpoint_id, tool, arguments, client_call_id)
        except DomainError as exc:
            return _error(exc.answered_as().code)
        return {k: answer[k] for k in ("isError", "content", "structuredContent") if k in answer}

    def _log(self, body: dict[str, Any]) -> dict[str, Any]:
        code, value = body.get("code"), body.get("value")
        if not isinstance(code, str) or not LOG_CODE.fullmatch(code):
            return _error("invalid_request", "code")
        if value is not None and (type(value) is not int or abs(value) > 2**53):
            return _error("invalid_request", "value")
        logger.info("code tool log", extra={"tool_id": self.tool.name, "log_code": code, "log_value": value})
        return {"ok": True}
