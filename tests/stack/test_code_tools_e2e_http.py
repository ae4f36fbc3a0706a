"""Code tools end to end over real HTTP on the local stack (docs/code-skills.md "Installed code tools"): the
example package (the AssemblyScript tool's checked-in build, examples/packages/streak-coach/) built and signed with
the publisher's tool, submitted (the release check validates the module and runs the tool's evals), approved (the
module precompiled and stored beside the package), installed, called from a chat turn, listed with its limits and
recent outcomes; a module that passed its evals and turns hostile later ends with its code, audited with codes
only, while another user's call of the clean tool beside it succeeds."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.code_package_support import HOSTILE_EVALS, install, publish
from tests.sandbox_support import wasm

from .conftest import Caller, StackClient

pytestmark = pytest.mark.stack



class User(Caller):
    prefix = "coder"

    def turn(self, conversation: str, text: str) -> dict[str, Any]:
        return self.ok("POST", f"/rpc/conversations/{conversation}/messages",
                       {"clientMessageId": uuid.uuid4().hex, "text": text})

    def audit(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/skills/audit-events?limit=100")["items"]

    def code_tools(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/code-tools")["items"]


def test_a_published_code_tool_is_installed_and_called_from_a_chat_turn(stack: StackClient, tmp_path: Path) -> None:
    skill_id = f"streak-{uuid.uuid4().hex[:8]}"
    release = publish(stack, tmp_path, skill_id)
    assert release["codeTools"] == [{"toolId": "streak-score", "moduleSha256": release["codeTools"][0]["moduleSha256"],
                                     "hostFunctions": [], "precompiled": True, "limits": {
                                         "fuel": 5_000_000, "memoryBytes": 1_048_576, "timeoutMs": 200,
                                         "outputBytes": 256, "hostCalls": 0}}]
    user = User(stack)
    conversation = user.agent()["defaultConversationId"]
    # Not installed: the command is no code tool of this user's, and the turn goes on as a plain one.
    before = user.turn(conversation, '/streak-score {"days": [1, 1]}')
    assert before["run"]["kind"] != "tool"

    install(stack, user, skill_id)
    done = user.turn(conversation, '/streak-score {"days": [1, 1, 0, 1, 1, 1]}')
    assert done["run"]["kind"] == "tool" and done["run"]["skillId"] == skill_id and done["run"]["outcome"] == "succeeded"
    assert '"current":3' in done["reply"]["text"] and '"longest":3' in done["reply"]["text"]
    # The chat function (in this process on the local stack) built the tool from the artifact the service
    # precompiled at publish time: no compile on its first call.
    from skillcore.code_tools import registry

    [loaded] = registry.tools_of_cached(release["releaseId"])
    assert loaded.precompiled_bytes()[:8] == b"SKCWASM1"
    refused = user.turn(conversation, '/streak-score {"days": [7]}')  # outside the input schema
    assert refused["run"]["outcome"] == "failed" and "invalid_input" in refused["reply"]["text"]

    [tool] = user.code_tools()
    assert tool["skillId"] == skill_id and tool["toolId"] == "streak-score" and tool["precompiled"] is True
    assert tool["limits"] == {"fuel": 5_000_000, "memoryBytes": 1_048_576, "timeoutMs": 200, "outputBytes": 256,
                              "hostCalls": 0}
    assert tool["calls"] == 2 and {o["code"]: o["count"] for o in tool["outcomes"]} == {
        "succeeded": 1, "invalid_input": 1}
    assert [o["code"] for o in tool["recent"]] == ["invalid_input", "succeeded"]

    events = [e for e in user.audit() if e["action"] == "tool.execute" and e["skillId"] == skill_id]
    assert [(e["decision"], e["reason"]) for e in events] == [
        ("failed", "invalid_input"), ("allowed", "no_permission_needed"), ("succeeded", "succeeded"),
        ("allowed", "no_permission_needed")]
    text = json.dumps(events)
    assert "days" not in text and "current" not in text  # codes and ids only


def test_a_hostile_module_ends_with_its_code_and_never_touches_another_users_call(
        stack: StackClient, tmp_path: Path) -> None:
    clean, hostile = f"streak-{uuid.uuid4().hex[:8]}", f"trap-{uuid.uuid4().hex[:8]}"
    publish(stack, tmp_path, clean)
    publish(stack, tmp_path, hostile, wasm=wasm("two_faced"), evals=HOSTILE_EVALS)
    mallory, alice = User(stack, "mallory"), User(stack, "alice")
    install(stack, mallory, hostile)
    install(stack, alice, clean)
    m_conv, a_conv = mallory.agent()["defaultConversationId"], alice.agent()["defaultConversationId"]

    def hostile_turns() -> list[dict[str, Any]]:
        return [mallory.turn(m_conv, '/streak-score {"days": [1, 1, 0, 1]}'),  # spins: fuel
                mallory.turn(m_conv, '/streak-score {"days": [' + ", ".join(["1"] * 40) + "]}")]  # traps

    def clean_turns() -> list[dict[str, Any]]:
        return [alice.turn(a_conv, '/streak-score {"days": [1, 0, 1, 1]}') for _ in range(3)]

    with ThreadPoolExecutor(2) as pool:
        bad, good = pool.submit(hostile_turns), pool.submit(clean_turns)
        spun, trapped = bad.result(timeout=60)
        answers = good.result(timeout=60)
    assert spun["run"]["outcome"] == "failed" and "sandbox_fuel_exhausted" in spun["reply"]["text"]
    assert trapped["run"]["outcome"] == "failed" and "sandbox_trap" in trapped["reply"]["text"]
    assert all(a["run"]["outcome"] == "succeeded" and '"current":2' in a["reply"]["text"] for a in answers)
    # a clean call of the hostile tool right after works (a fresh instance each call)
    after = mallory.turn(m_conv, '/streak-score {"days": []}')
    assert after["run"]["outcome"] == "succeeded" and '"days":0' in after["reply"]["text"]

    codes = [(e["decision"], e["metadata"].get("errorCode")) for e in mallory.audit()
             if e["action"] == "tool.execute" and e["decision"] != "allowed"]
    assert codes == [("succeeded", None), ("failed", "sandbox_trap"), ("failed", "sandbox_fuel_exhausted")]
    assert all(e["skillId"] == clean for e in alice.audit() if e["action"] == "tool.execute")
    [listed] = mallory.code_tools()
    assert {o["code"]: o["count"] for o in listed["outcomes"]} == {
        "succeeded": 1, "sandbox_trap": 1, "sandbox_fuel_exhausted": 1}


def test_a_code_tool_reads_the_agents_memories_only_under_its_grant(stack: StackClient, tmp_path: Path) -> None:
    skill_id = f"recall-{uuid.uuid4().hex[:8]}"
    publish(stack, tmp_path, skill_id, wasm=wasm("memory_search"),
            permissions=[{"code": "memory:read", "riskLevel": "L1", "approvalMode": "persistent"}],
            tool_changes={"hostFunctions": ["memory.search"], "limits": {"hostCalls": 3},
                          "outputSchema": {"type": "object", "required": ["memories"]}},
            evals={"cases": [{"id": "empty", "tool": "streak-score", "arguments": {"days": []},
                              "output": {"memories": []}}]})
    user, stranger = User(stack), User(stack)
    install(stack, user, skill_id)
    agent = user.agent()
    user.ok("POST", f"/rpc/agents/{agent['agentId']}/memories",
            {"title": "hobby", "content": "hiking in the hills", "importance": 4}, status=201)
    conversation = agent["defaultConversationId"]

    denied = user.turn(conversation, '/streak-score {"days": []}')
    assert denied["run"]["outcome"] == "denied" and "streak-score" in denied["reply"]["text"]
    user.ok("PATCH", "/rpc/skills/permissions", {"skillId": skill_id, "permissionCode": "memory:read",
                                                 "scope": {"type": "user"}, "granted": True})
    read = user.turn(conversation, '/streak-score {"days": []}')
    assert read["run"]["outcome"] == "succeeded" and "hiking in the hills" in read["reply"]["text"]

    # another user's install and grant reach only their own agent's memories
    install(stack, stranger, skill_id)
    stranger.ok("PATCH", "/rpc/skills/permissions", {"skillId": skill_id, "permissionCode": "memory:read",
                                                     "scope": {"type": "user"}, "granted": True})
    theirs = stranger.turn(stranger.agent()["defaultConversationId"], '/streak-score {"days": []}')
    assert theirs["run"]["outcome"] == "succeeded" and "hiking" not in theirs["reply"]["text"]

    user.ok("PATCH", "/rpc/skills/permissions", {"skillId": skill_id, "permissionCode": "memory:read",
                                                 "scope": {"type": "user"}, "granted": False})
    again = user.turn(conversation, '/streak-score {"days": []}')
    assert again["run"]["outcome"] == "denied" and "hiking" not in again["reply"]["text"]
    decisions = [(e["decision"], e["reason"]) for e in user.audit()
                 if e["action"] == "tool.execute" and e["skillId"] == skill_id]
    assert decisions[0] == ("denied", "grant_missing") and decisions[-1] == ("denied", "grant_missing")
    assert ("succeeded", "succeeded") in decisions
    assert "hiking" not in json.dumps(user.audit())
