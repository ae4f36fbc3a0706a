"""Host functions of code tools (skillcore/sandbox/host.py): JSON in, JSON out; each call checked by PolicyGate
against the skill's declared permissions and the person's grants as they are at call time; a denial stops the
module and ends the call with `host_call_denied`; the per-invocation cap; hosted calls through the hosted calls
service's port, its refusals as JSON codes; log takes codes only."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from skillcore.errors import HostCallDenied, NotFound, SandboxTimeout
from skillcore.hosted.errors import ApprovalRequired
from skillcore.sandbox.host import HostBridge
from skillcore.sandbox.manifest import HostFunction, check_permissions, decode_manifest
from skillcore.skills.manifest import SkillKind, SkillManifest
from tests.sandbox_support import AGENT, SKILL, USER, grant, manifest, memory, ports, run

MEMORIES = [memory("I like hiking in the hills", memory_id="m1", importance=4), memory("cats", memory_id="m2")]
SEARCH = manifest(host_functions=("memory.search",))


def test_a_host_call_without_a_grant_is_denied_and_stops_the_module() -> None:
    # The module calls memory.search three times; the first denial ends it: nothing is read.
    reads: list[int] = []
    host = ports(memories=MEMORIES)
    host = host.__class__(**{**{f: getattr(host, f) for f in host.__struct_fields__},
                             "memories": lambda: reads.append(1) or MEMORIES})
    with pytest.raises(HostCallDenied) as caught:
        run("memory_search", SEARCH, host=host)
    assert caught.value.details == {"reason": "grant_missing", "toolId": "test-tool"}
    assert reads == []
    assert run("echo", arguments={"a": 1}) == {"a": 1}  # the next call is clean


def test_a_revoked_or_another_skills_grant_does_not_count() -> None:
    for grants in [(grant(active=False),), (grant(user_id="someone-else"),),
                   (grant(skill=SkillManifest(skill_id="other-skill", version="1.0.0", kind=SkillKind.TOOL,
                                              name="Other", description="Another skill.")),)]:
        with pytest.raises(HostCallDenied):
            run("memory_search", SEARCH, host=ports(grants=grants, memories=MEMORIES))


def test_grants_are_read_at_each_host_call() -> None:
    # Granted for the first call, revoked before the second: the second is denied.
    answers = iter([(grant(),), ()])
    host = ports(memories=MEMORIES)
    live = host.__class__(user_id=USER, agent_id=AGENT, call_id="C", grants=lambda: next(answers),
                          memories=host.memories)
    with pytest.raises(HostCallDenied) as caught:
        run("memory_search", SEARCH, host=live)
    assert caught.value.details["reason"] == "grant_missing"


def test_a_permission_the_skill_does_not_declare_is_refused_at_load_and_at_call() -> None:
    bare = SkillManifest(skill_id="bare-tools", version="1.0.0", kind=SkillKind.TOOL, name="Bare",
                         description="Declares nothing.")
    with pytest.raises(ValueError, match="memory:read"):
        check_permissions(SEARCH, bare)
    with pytest.raises(HostCallDenied) as caught:
        run("memory_search", SEARCH, host=ports(grants=(grant(skill=bare),), memories=MEMORIES), skill=bare)
    assert caught.value.details["reason"] == "permission_not_declared"


def test_the_host_call_cap_ends_the_call() -> None:
    tool = manifest(host_functions=("log",), host_calls=3)
    assert run("log_loop", tool, {}) == {"ok": True}  # `{}` is 2 bytes: two calls
    with pytest.raises(HostCallDenied) as caught:
        run("log_loop", tool, {"pad": "xxxx"})  # 14 calls asked, the 4th is over the cap
    assert caught.value.details == {"reason": "host_call_cap", "toolId": "test-tool", "limit": 3}


def bridge(*, hosted: Any = None, tools: tuple[str, ...] = ("search_docs",)) -> HostBridge:
    tool = manifest(host_functions=("hosted.call", "log", "memory.search"), hosted_tools=tools)
    return HostBridge(tool, SKILL, ports(grants=(grant(), grant("hosted_workflow:invoke")), memories=MEMORIES,
                                         hosted=hosted))


def answer(b: HostBridge, function: HostFunction, request: Any) -> Any:
    raw = request if isinstance(request, bytes) else json.dumps(request).encode()
    return json.loads(b.call(function, raw))


def test_malformed_requests_are_json_errors_not_denials() -> None:
    b = bridge()
    assert answer(b, HostFunction.LOG, b"\xff") == {"error": {"code": "invalid_request", "reason": "not_json"}}
    assert answer(b, HostFunction.LOG, [1]) == {"error": {"code": "invalid_request", "reason": "not_an_object"}}
    assert answer(b, HostFunction.LOG, {"code": "Free text here"})["error"]["reason"] == "code"
    assert answer(b, HostFunction.LOG, {"code": "ok", "value": "text"})["error"]["reason"] == "value"
    assert answer(b, HostFunction.MEMORY_SEARCH, {"query": "x" * 201})["error"]["reason"] == "query"
    assert answer(b, HostFunction.MEMORY_SEARCH, {"limit": 11})["error"]["reason"] == "limit"
    assert b.failure is None
    assert answer(b, HostFunction.LOG, {"code": "rows_parsed", "value": 3}) == {"ok": True}
    assert answer(b, HostFunction.MEMORY_SEARCH, {"query": "", "limit": 1})["memories"][0]["id"] == "m1"


def test_hosted_call_goes_through_the_port_and_its_refusals_come_back_as_codes() -> None:
    seen: list[tuple[str, str, dict[str, Any], str]] = []

    def hosted(endpoint_id: str, tool: str, arguments: dict[str, Any], client_call_id: str) -> dict[str, Any]:
        seen.append((endpoint_id, tool, arguments, client_call_id))
        if endpoint_id == "missing":
            raise NotFound("no such endpoint")
        if arguments.get("needs") == "approval":
            raise ApprovalRequired({"approvalId": "ap-1"})
        return {"callId": "c1", "isError": False, "content": "found 2", "durationMs": 5, "secret": "not passed"}

    b = bridge(hosted=hosted)
    ok = answer(b, HostFunction.HOSTED_CALL, {"endpointId": "e1", "tool": "search_docs", "arguments": {"q": "x"}})
    assert ok == {"isError": False, "content": "found 2"}
    assert answer(b, HostFunction.HOSTED_CALL, {"endpointId": "missing", "tool": "search_docs"}) == {
        "error": {"code": "not_found"}}
    assert answer(b, HostFunction.HOSTED_CALL, {"endpointId": "e1", "tool": "search_docs",
                                                "arguments": {"needs": "approval"}}) == {
        "error": {"code": "approval_required"}}
    ids = [s[3] for s in seen]
    assert len(set(ids)) == 3 and all(len(i) == 26 for i in ids)
    assert b.failure is None
    # A tool the manifest does not list is a denial, and nothing is called.
    assert answer(b, HostFunction.HOSTED_CALL, {"endpointId": "e1", "tool": "delete_all"}) == {
        "error": {"code": "host_call_denied", "reason": "hosted_tool_not_declared"}}
    assert isinstance(b.failure, HostCallDenied) and len(seen) == 3


def test_a_host_exception_never_reaches_the_module() -> None:
    def broken(*_: Any) -> dict[str, Any]:
        raise RuntimeError("a secret path /etc/x")

    b = bridge(hosted=broken)
    assert answer(b, HostFunction.HOSTED_CALL, {"endpointId": "e1", "tool": "search_docs"}) == {
        "error": {"code": "host_error"}}


def test_the_wall_clock_counts_time_spent_in_host_calls() -> None:
    def slow(*_: Any) -> dict[str, Any]:
        time.sleep(0.3)
        return {"isError": False, "content": "late"}

    tool = manifest(host_functions=("hosted.call",), hosted_tools=("search_docs",), timeout_ms=100)
    host = ports(grants=(grant("hosted_workflow:invoke"),), hosted=slow)
    started = time.perf_counter()
    with pytest.raises(SandboxTimeout):
        run("hosted_call", tool, {"endpointId": "e1", "tool": "search_docs", "arguments": {}}, host=host)
    assert time.perf_counter() - started < 1.0


def test_the_manifest_is_checked_field_by_field() -> None:
    base = {"name": "streak-score", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}
    assert decode_manifest(json.dumps(base).encode()).limits.memory_bytes == 64 << 20
    for wrong, match in [
        ({"name": "X"}, "name"), ({"inputSchema": {"type": "array"}}, "input_schema"),
        ({"hostFunctions": ["env.read"]}, "hostFunctions"), ({"hostFunctions": ["log", "log"]}, "unique"),
        ({"hostedTools": ["t"]}, "hosted.call"), ({"limits": {"fuel": 10**12}}, "fuel"),
        ({"limits": {"memoryBytes": 1 << 30}}, "memory_bytes"), ({"limits": {"timeoutMs": 60000}}, "timeout_ms"),
        ({"module": "../x.wasm"}, "module"), ({"extra": 1}, "extra"),
    ]:
        with pytest.raises(ValueError, match=match):
            decode_manifest({**base, **wrong})


def test_a_failure_inside_the_host_function_itself_ends_only_that_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing may raise through wasmtime-py's host trampoline (its exception slot is process-wide): a failure
    # there stops the module, the call ends with sandbox_trap, and the next call is clean.
    from skillcore.errors import SandboxTrap

    def broken(self: HostBridge, function: HostFunction, request: bytes) -> bytes:
        raise RuntimeError("host bug")

    monkeypatch.setattr(HostBridge, "call", broken)
    with pytest.raises(SandboxTrap) as caught:
        run("log_loop", manifest(host_functions=("log",)), {})
    assert caught.value.details["reason"] == "host_error"
    monkeypatch.undo()
    assert run("log_loop", manifest(host_functions=("log",)), {}) == {"ok": True}
