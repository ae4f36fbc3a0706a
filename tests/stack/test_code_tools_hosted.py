"""A code tool's `hosted.call` through the hosted calls service on DynamoDB Local (sandbox/ports.py
`bind_ports`): the call forwarded to the endpoint (a counting stand-in for tools/call, as in
test_hosted_calls_service.py) under the service's own checks and audit; its refusals (the hosted workflows
grant, an approval, another user's endpoint) reach the module as JSON codes; a tool the manifest does not list is
never called."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from skillcore.hosted import service as hosted
from skillcore.ids import new_id
from skillcore.policy import grant_store
from skillcore.policy.audit_store import list_audit
from skillcore.policy.grants import GrantScope
from skillcore.sandbox import modules, runtime
from skillcore.sandbox.code_tool import CodeTool
from skillcore.sandbox.host import HostBridge
from skillcore.sandbox.ports import bind_ports
from skillcore.tools.runner import ToolCallContext, ToolRunner, ToolStatus
from tests.sandbox_support import SKILL, manifest, wasm

from .test_hosted_calls_service import _grant, _register, world

__all__ = ["world"]  # the fixture, shared with the hosted calls service tests

TOOL = manifest("hosted-relay", host_functions=("hosted.call",), hosted_tools=("publish", "lookup"))


def _grant_tool(deps: hosted.HostedDeps, user: str) -> None:
    grant_store.set_grant(deps.db, user_id=user, skill_id=SKILL.skill_id, skill_version=SKILL.version,
                          code="hosted_workflow:invoke", scope=GrantScope.user(), granted=True,
                          grant_id=uuid.uuid4().hex, now=datetime.now(UTC))


def relay(deps: hosted.HostedDeps, user: str, request: dict[str, Any], *, tool: Any = TOOL) -> dict[str, Any]:
    ports = bind_ports(deps.db, SKILL, user, "agent-1", call_id=new_id(datetime.now(UTC)), now=datetime.now(UTC),
                       hosted=deps)
    return runtime.invoke(modules.load(wasm("hosted_call")), tool, request, HostBridge(tool, SKILL, ports))


def test_a_hosted_call_is_forwarded_through_the_service_and_audited(world) -> None:
    deps, endpoint, _ = world
    user = f"code-{uuid.uuid4().hex[:8]}"
    _grant(deps, user)
    _grant_tool(deps, user)
    endpoint_id = _register(deps, user)
    answer = relay(deps, user, {"endpointId": endpoint_id, "tool": "lookup", "arguments": {"q": "x"}})
    assert answer == {"isError": False, "content": "lookup done", "structuredContent": {"ok": True}}
    assert endpoint.calls["lookup"] == 1
    events = list_audit(deps.db, user, limit=10, cursor=None)[0]
    assert [(e.action.value, e.decision.value) for e in events[:2]] == [
        ("hosted_endpoint.call", "succeeded"), ("hosted_endpoint.call", "allowed")]


def test_the_services_refusals_reach_the_module_as_codes(world) -> None:
    deps, endpoint, _ = world
    user, other = f"code-{uuid.uuid4().hex[:8]}", f"other-{uuid.uuid4().hex[:8]}"
    _grant_tool(deps, user)
    endpoint_id = _register(deps, user, approval=True)
    # The code tool's own grant is there, the hosted workflows skill's is not: the service refuses.
    assert relay(deps, user, {"endpointId": endpoint_id, "tool": "lookup"}) == {
        "error": {"code": "permission_required"}}
    _grant(deps, user)
    assert relay(deps, user, {"endpointId": endpoint_id, "tool": "publish", "arguments": {"title": "t"}}) == {
        "error": {"code": "approval_required"}}
    # Another user's endpoint is a 404 to the module, as to everyone.
    _grant(deps, other)
    _grant_tool(deps, other)
    assert relay(deps, other, {"endpointId": endpoint_id, "tool": "lookup"}) == {"error": {"code": "not_found"}}
    assert endpoint.calls["publish"] == 0 and endpoint.calls["lookup"] == 0


def test_a_tool_outside_the_manifest_or_without_the_tools_grant_is_denied_and_never_called(world) -> None:
    deps, endpoint, _ = world
    user = f"code-{uuid.uuid4().hex[:8]}"
    _grant(deps, user)
    endpoint_id = _register(deps, user)
    runner = ToolRunner(deps.db, clock=lambda: datetime.now(UTC), new_id=lambda: new_id(datetime.now(UTC)))
    only_lookup = manifest("hosted-relay", host_functions=("hosted.call",), hosted_tools=("lookup",))
    _grant_tool(deps, user)
    grant_store.set_grant(deps.db, user_id=user, skill_id=SKILL.skill_id, skill_version=SKILL.version,
                          code="memory:read", scope=GrantScope.user(), granted=True, grant_id=uuid.uuid4().hex,
                          now=datetime.now(UTC))
    code_tool = CodeTool(SKILL, only_lookup, wasm("hosted_call"))
    ports = bind_ports(deps.db, SKILL, user, "agent-1", call_id="C1", now=datetime.now(UTC), hosted=deps)
    grants = ports.grants()
    outcome = runner.run(code_tool, SKILL, ToolCallContext(user_id=user, agent_id="agent-1", conversation_id=None,
                                                           source_message_id="C1"),
                         {"endpointId": endpoint_id, "tool": "publish", "arguments": {"title": "t"}}, grants, ports)
    assert outcome.status is ToolStatus.FAILED and outcome.error_code == "host_call_denied"
    # The code tool's hosted_workflow:invoke revoked between the tool's start and its host call: denied.
    grant_store.set_grant(deps.db, user_id=user, skill_id=SKILL.skill_id, skill_version=SKILL.version,
                          code="hosted_workflow:invoke", scope=GrantScope.user(), granted=False,
                          grant_id=uuid.uuid4().hex, now=datetime.now(UTC))
    outcome = runner.run(code_tool, SKILL, ToolCallContext(user_id=user, agent_id="agent-1", conversation_id=None,
                                                           source_message_id="C2"),
                         {"endpointId": endpoint_id, "tool": "lookup"}, grants, ports)
    assert outcome.status is ToolStatus.FAILED and outcome.error_code == "host_call_denied"
    assert endpoint.calls["publish"] == 0 and endpoint.calls["lookup"] == 0
