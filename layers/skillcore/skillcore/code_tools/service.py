"""A user's installed code tools, found and run: the chat turn's branch (code_tools/chat.py), the MCP face
(api/tools_code.py) and the Skills page's view (api/routes_code_tools.py) go through here.

A run is a tool call like a built-in one: the skill's switch, PolicyGate over the package's declared permissions
(the person's grants, agent scope before user scope), the call cap, the input schema, the execution record, the
sandbox with the tool's limits, the output schema, and the `tool.execute` audit with codes only
(tools/runner.py). The host functions' ports are bound to this owner and agent (sandbox/ports.py), so a module can
reach nothing of another user's, and each call has its own instance: a hostile module's call ends with its code
and leaves every other call as it was.

DynamoDB requests: finding a user's tools is the installs' listing (one Query) plus, once per release and process,
its GetItem; a run adds one BatchGetItem (the switch and the grants), the execution record's Put, and the writes
the caller commits (the record's completion and the audit events).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from skillcore.code_tools import registry
from skillcore.code_tools.installed import Installed, InstalledSkill
from skillcore.code_tools.registry import LoadedTool
from skillcore.db.dynamo import Db
from skillcore.ids import new_id
from skillcore.packages.models import Release
from skillcore.policy import grant_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.gate import scope_candidates

if TYPE_CHECKING:
    from skillcore.hosted.service import HostedDeps
    from skillcore.packages.service import PackageDeps
    from skillcore.tools.runner import ToolCallContext, ToolOutcome


class CodeToolDeps(Struct, frozen=True):
    db: Db
    packages: Callable[[], PackageDeps]
    installed: Installed
    hosted: Callable[[], HostedDeps] | None = None


def user_tools(deps: CodeToolDeps, user_id: str) -> list[LoadedTool]:
    """The code tools of the user's installed skills, in skill id order then the package's order; of two tools of
    one name, the first (in that order) is the one a command or the MCP face reaches."""
    found: dict[str, LoadedTool] = {}
    for skill in sorted(deps.installed(user_id), key=lambda s: s.skill_id):
        for tool in _tools_of(deps, skill):
            found.setdefault(tool.name, tool)
    return list(found.values())


def _tools_of(deps: CodeToolDeps, skill: InstalledSkill) -> tuple[LoadedTool, ...]:
    """A release's tools; one whose stored package or artifact no longer matches its checksum (or whose module
    this engine refuses) offers none, logged with its ids and code, and is tried again on the next call: one
    broken release never fails another tool's call or a plain turn."""
    from skillcore.errors import PackageInvalid, SandboxFailure
    from skillcore.observability import logger

    try:
        return registry.tools_of(deps.packages(), skill.release_id)
    except (PackageInvalid, SandboxFailure, ValueError) as error:
        logger.warning("code tools unavailable", extra={"skill_id": skill.skill_id, "release_id": skill.release_id,
                                                        "error_code": getattr(error, "code", type(error).__name__)})
        return ()


def find(deps: CodeToolDeps, user_id: str, name: str) -> LoadedTool | None:
    return next((t for t in user_tools(deps, user_id) if t.name == name), None)


def run(deps: CodeToolDeps, loaded: LoadedTool, call: ToolCallContext, raw_input: Any, *,
        now: datetime) -> ToolOutcome:
    """Runs one installed code tool for this owner's agent. Its writes (the record's completion, the audit) are
    the caller's to commit: a chat turn commits them with the turn, the MCP face at once."""
    from skillcore.db.transact import Op
    from skillcore.policy import audit_store
    from skillcore.sandbox.ports import bind_ports

    # The tool runner (and its thread pool) loads with the first run: the page's listing (RpcFunction) runs none.
    from skillcore.tools.runner import ToolOutcome, ToolRunner, ToolStatus

    db, skill = deps.db, loaded.skill
    keys = [grant_store.grant_key(call.user_id, skill.skill_id, p.code, scope)
            for p in skill.permissions for scope in scope_candidates(call.agent_id)]
    disabled, grants = grant_store.read_policy_state(db, call.user_id, keys)
    if skill.skill_id in disabled:
        event = AuditEvent(
            event_id=new_id(now), user_id=call.user_id, at=now, skill_id=skill.skill_id, skill_version=skill.version,
            action=AuditAction.TOOL_EXECUTE, decision=Decision.DENIED, target_id=call.agent_id,
            reason="skill_disabled",
            metadata=AuditMetadata(tool_id=loaded.name, conversation_id=call.conversation_id,
                                   source_message_id=call.source_message_id))
        return ToolOutcome(ToolStatus.DENIED, None, error_code="skill_disabled", audit=(event,),
                           writes=(Op("audit", audit_store.put_audit_op(db, event)),))
    runner = ToolRunner(db, clock=lambda: now, new_id=lambda: new_id(now))
    hosted = deps.hosted() if deps.hosted is not None and any(
        p.code == "hosted_workflow:invoke" for p in skill.permissions) else None
    ports = bind_ports(db, skill, call.user_id, call.agent_id, call_id=call.source_message_id, now=now, hosted=hosted)
    return runner.run(loaded.tool, skill, call, raw_input, grants, ports)


def user_releases(deps: CodeToolDeps, user_id: str) -> list[tuple[InstalledSkill, Release]]:
    """The serving releases of the user's installed skills that have code tools (what the page lists: the
    releases' records only, no package is opened)."""
    found = []
    for skill in sorted(deps.installed(user_id), key=lambda s: s.skill_id):
        release = registry.serving_release(deps.packages(), skill.release_id)
        if release is not None and release.tools:
            found.append((skill, release))
    return found


def call_now(deps: CodeToolDeps, loaded: LoadedTool, user_id: str, agent_id: str, raw_input: Any) -> dict[str, Any]:
    """One call outside a chat turn (the MCP face): its own call id where a turn's message id stands, its writes
    committed at once; the output, or the API error of its outcome (a sandbox code is its own error class)."""
    from skillcore.conversations import agent_store
    from skillcore.db.transact import transact
    from skillcore.errors import AgentNotFound, SkillDisabled, ValidationFailed
    from skillcore.policy.gate import permission_required_details, refusal
    from skillcore.tools.runner import ToolCallContext, ToolStatus
    from skillcore.tools.service import ToolFailed

    if agent_store.get_agent(deps.db, user_id, agent_id) is None:
        raise AgentNotFound()
    now = clock_now()
    outcome = run(deps, loaded, ToolCallContext(user_id=user_id, agent_id=agent_id, conversation_id=None,
                                                source_message_id=new_id(now)), raw_input, now=now)
    transact(deps.db, list(outcome.writes))
    skill = loaded.skill
    if outcome.status is ToolStatus.DENIED:
        if outcome.error_code == "skill_disabled":
            raise SkillDisabled()
        if outcome.decision is not None:
            raise refusal(skill.skill_id, outcome.decision, skill.permissions)
        from skillcore.errors import PermissionRequired

        raise PermissionRequired(None, permission_required_details(skill.skill_id, (), skill.permissions))
    if outcome.status is ToolStatus.FAILED or outcome.output is None:
        code = outcome.error_code or "handler_error"
        sandbox = SANDBOX_ERRORS().get(code)
        if sandbox is not None:
            from skillcore.errors import SandboxDetails

            raise sandbox(None, SandboxDetails(toolId=loaded.name))
        if code == "invalid_input":
            raise ValidationFailed("the tool input is not valid")
        raise ToolFailed("the tool failed", details={"reason": code})
    output: dict[str, Any] = outcome.output.model_dump()
    return output


def clock_now() -> datetime:
    from skillcore.clock import system_clock

    return system_clock()


def SANDBOX_ERRORS() -> dict[str, type[Any]]:  # noqa: N802 - a table, built on first use
    from skillcore.errors import (
        HostCallDenied,
        SandboxFuelExhausted,
        SandboxMemoryExceeded,
        SandboxOutputTooLarge,
        SandboxTimeout,
        SandboxTrap,
    )

    return {c.code: c for c in (SandboxFuelExhausted, SandboxMemoryExceeded, SandboxTimeout, SandboxOutputTooLarge,
                                SandboxTrap, HostCallDenied)}
