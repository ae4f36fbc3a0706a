"""Code tools through the ToolRunner on DynamoDB Local: PolicyGate over the skill's permissions, the execution
record, the sandbox, and the audit of every outcome with its code (never text); the grants a host function needs
read from the table at call time; concurrent users' calls beside hostile ones."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pytest

from skillcore.db.dynamo import Db
from skillcore.db.transact import transact
from skillcore.ids import new_id
from skillcore.memory import store as memory_store
from skillcore.memory.models import MemoryItem, MemorySource, MemoryStatus
from skillcore.policy import audit_store, grant_store
from skillcore.policy.gate import scope_candidates
from skillcore.policy.grants import GrantScope, PermissionGrant
from skillcore.sandbox.code_tool import CodeTool
from skillcore.sandbox.host import HostPorts
from skillcore.settings import Settings
from skillcore.tools.runner import ToolCallContext, ToolRunner, ToolStatus
from skillcore_local.template import ensure_tables
from tests.sandbox_support import SKILL, manifest, wasm

from .conftest import LocalTables

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def db(ddb_local: LocalTables) -> Iterator[Db]:
    names = ensure_tables(ddb_local.client, prefix=f"code{uuid.uuid4().hex[:8]}-")
    settings = Settings.from_env({**ddb_local.env, **names})
    try:
        yield Db(client=ddb_local.client, tables=settings.tables)
    finally:
        for table in names.values():
            ddb_local.client.delete_table(TableName=table)


def grants_now(db: Db, user_id: str, agent_id: str) -> tuple[PermissionGrant, ...]:
    return grant_store.read_policy_state(db, user_id, [
        grant_store.grant_key(user_id, SKILL.skill_id, p.code, scope)
        for p in SKILL.permissions for scope in scope_candidates(agent_id)])[1]


def set_grant(db: Db, user_id: str, code: str, granted: bool) -> None:
    grant_store.set_grant(db, user_id=user_id, skill_id=SKILL.skill_id, skill_version=SKILL.version, code=code,
                          scope=GrantScope.user(), granted=granted, grant_id=new_id(NOW), now=NOW)


def remember(db: Db, user_id: str, agent_id: str, text: str) -> None:
    memory_store.put_memory(db, MemoryItem(
        memory_id=new_id(NOW), user_id=user_id, agent_id=agent_id, title=text[:20], content=text, importance=3,
        status=MemoryStatus.ACTIVE, source=MemorySource.USER, created_at=NOW, updated_at=NOW))


def call(db: Db, tool: CodeTool, user_id: str, agent_id: str, raw_input: dict[str, Any], *,
         grants_at_call: Any = None) -> Any:
    runner = ToolRunner(db, clock=lambda: NOW, new_id=lambda: new_id(NOW))
    ports = HostPorts(user_id=user_id, agent_id=agent_id, call_id=new_id(NOW),
                      grants=grants_at_call or (lambda: grants_now(db, user_id, agent_id)),
                      memories=lambda: memory_store.list_active_agent_memories(db, user_id, agent_id))
    outcome = runner.run(tool, SKILL, ToolCallContext(user_id=user_id, agent_id=agent_id, conversation_id=None,
                                                      source_message_id=new_id(NOW)),
                         raw_input, grants_now(db, user_id, agent_id), ports)
    transact(db, list(outcome.writes))
    return outcome


def audit(db: Db, user_id: str) -> list[tuple[str, str, str | None]]:
    events, _ = audit_store.list_audit(db, user_id, limit=50, cursor=None)
    return [(e.decision.value, e.reason or "", e.metadata.error_code if e.metadata else None) for e in events]


def test_a_code_tool_runs_under_the_skills_grant_and_reads_memories_at_call_time(db: Db) -> None:
    tool = CodeTool(SKILL, manifest("memory-digest", host_functions=("memory.search",)), wasm("memory_search"))
    remember(db, "alice", "a1", "I like hiking on weekends")
    remember(db, "bob", "b1", "bob's hiking secret")
    # No grant: PolicyGate refuses the tool before the module runs (as for a built-in tool).
    denied = call(db, tool, "alice", "a1", {})
    assert denied.status is ToolStatus.DENIED and denied.decision.missing == ("memory:read", "hosted_workflow:invoke")
    set_grant(db, "alice", "memory:read", True)
    set_grant(db, "alice", "hosted_workflow:invoke", True)
    done = call(db, tool, "alice", "a1", {})
    assert done.status is ToolStatus.SUCCEEDED
    assert [m["content"] for m in done.output.root["memories"]] == ["I like hiking on weekends"]
    # Revoked after the tool was allowed and before its host call: the host call reads the table and is denied.
    revoked = call(db, tool, "alice", "a1", {},
                   grants_at_call=lambda: (set_grant(db, "alice", "memory:read", False),
                                           grants_now(db, "alice", "a1"))[1])
    assert revoked.status is ToolStatus.FAILED and revoked.error_code == "host_call_denied"
    events = audit(db, "alice")
    assert events[:2] == [("failed", "host_call_denied", "host_call_denied"), ("allowed", "allowed", None)]
    assert ("succeeded", "succeeded", None) in events and ("denied", "grant_missing", None) in events
    for e in audit_store.list_audit(db, "alice", limit=50, cursor=None)[0]:
        assert "hiking" not in str(e)  # codes and ids only


@pytest.mark.parametrize(("module", "limits", "code"), [
    ("loop", {"fuel": 1_000_000}, "sandbox_fuel_exhausted"),
    ("spin", {"fuel": 1_000_000_000, "timeout_ms": 50}, "sandbox_timeout"),
    ("grow_bomb", {}, "sandbox_memory_exceeded"),
    ("huge_output", {}, "sandbox_output_too_large"),
    ("trap", {}, "sandbox_trap"),
    ("wasi_import", {}, "host_call_denied"),
])
def test_each_limit_is_a_failed_outcome_with_its_code_in_the_audit(db: Db, module: str, limits: dict[str, Any],
                                                                     code: str) -> None:
    set_grant(db, "carol", "memory:read", True)
    set_grant(db, "carol", "hosted_workflow:invoke", True)
    outcome = call(db, CodeTool(SKILL, manifest(**limits), wasm(module)), "carol", "c1", {"x": 1})
    assert outcome.status is ToolStatus.FAILED and outcome.error_code == code
    assert audit(db, "carol")[0] == ("failed", code, code)
    clean = call(db, CodeTool(SKILL, manifest(), wasm("echo")), "carol", "c1", {"x": 1})
    assert clean.status is ToolStatus.SUCCEEDED and clean.output.root == {"x": 1}


def test_input_and_output_are_checked_against_the_manifests_schemas(db: Db) -> None:
    set_grant(db, "dan", "memory:read", True)
    set_grant(db, "dan", "hosted_workflow:invoke", True)
    strict = manifest().__class__(
        name="strict-echo", input_schema={"type": "object", "required": ["days"],
                                          "properties": {"days": {"type": "array", "maxItems": 3}}},
        output_schema={"type": "object", "required": ["score"]})
    tool = CodeTool(SKILL, strict, wasm("echo"))
    assert call(db, tool, "dan", "d1", {"days": [1, 2, 3, 4]}).error_code == "invalid_input"
    assert call(db, tool, "dan", "d1", {"days": [1]}).error_code == "invalid_output"  # echo has no score


def test_users_calls_run_concurrently_beside_hostile_ones(db: Db, ddb_local: LocalTables) -> None:
    for user in ("u1", "u2", "u3", "u4"):
        set_grant(db, user, "memory:read", True)
        set_grant(db, user, "hosted_workflow:invoke", True)
    hostile = CodeTool(SKILL, manifest("spin-tool", fuel=1_000_000_000, timeout_ms=200), wasm("spin"))
    clean = CodeTool(SKILL, manifest(), wasm("echo"))

    def one(i: int) -> tuple[str, str | None]:
        user = f"u{i % 4 + 1}"
        tool = hostile if i % 4 == 0 else clean
        outcome = call(db, tool, user, f"agent-{user}", {"i": i})
        return outcome.status.value, outcome.error_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one, range(16)))
    assert results == [("failed", "sandbox_timeout") if i % 4 == 0 else ("succeeded", None) for i in range(16)]


def test_bound_ports_read_grants_at_each_host_call_and_honour_the_skills_switch(db: Db) -> None:
    from skillcore.conversations.profile_store import set_skill_enabled
    from skillcore.errors import HostCallDenied
    from skillcore.sandbox import modules, runtime
    from skillcore.sandbox.host import HostBridge
    from skillcore.sandbox.ports import bind_ports

    tool = manifest("memory-digest", host_functions=("memory.search",))
    remember(db, "erin", "e1", "I like hiking at dawn")
    remember(db, "erin", "other-agent", "hiking with another agent")

    def search() -> dict[str, Any]:
        ports = bind_ports(db, SKILL, "erin", "e1", call_id=new_id(NOW), now=NOW)
        return runtime.invoke(modules.load(wasm("memory_search")), tool, {}, HostBridge(tool, SKILL, ports))

    with pytest.raises(HostCallDenied):
        search()
    set_grant(db, "erin", "memory:read", True)
    assert [m["content"] for m in search()["memories"]] == ["I like hiking at dawn"]  # this agent's only
    set_skill_enabled(db, "erin", SKILL.skill_id, False, NOW)
    with pytest.raises(HostCallDenied) as caught:
        search()
    assert caught.value.details["reason"] == "grant_missing"
    set_skill_enabled(db, "erin", SKILL.skill_id, True, NOW)
    assert len(search()["memories"]) == 1
