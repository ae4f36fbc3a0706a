"""Code tools end to end over real HTTP on the local stack (docs/code-skills.md "Installed code tools"): the
example package (the AssemblyScript tool's checked-in build, examples/packages/streak-coach/) built and signed with
the publisher's tool, submitted (the release check validates the module and runs the tool's evals), approved (the
module precompiled and stored beside the package), installed, called from a chat turn, listed with its limits and
recent outcomes; a module that passed its evals and turns hostile later ends with its code, audited with codes
only, while another user's call of the clean tool beside it succeeds."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from skillcore_local.template import ROOT
from tests import code_package_support as cps
from tests.sandbox_support import wasm

from .conftest import Caller, StackClient

pytestmark = pytest.mark.stack

HOSTILE_EVALS = {"cases": [{"id": "no-days", "tool": "streak-score", "arguments": {"days": []},
                            "output": {"days": 0}}]}


def pack(*args: str | Path) -> str:
    done = subprocess.run([sys.executable, "-m", "skillcore_pack", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


class Operator(Caller):
    prefix = "operator"

    def __init__(self, stack: StackClient) -> None:
        super().__init__(stack)
        self.auth = stack.token(self.user, admin=True)


class User(Caller):
    prefix = "coder"

    def turn(self, conversation: str, text: str) -> dict[str, Any]:
        return self.ok("POST", f"/rpc/conversations/{conversation}/messages",
                       {"clientMessageId": uuid.uuid4().hex, "text": text})

    def audit(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/skills/audit-events?limit=100")["items"]

    def code_tools(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/code-tools")["items"]


def publish(stack: StackClient, tmp: Path, skill_id: str, **folder: Any) -> dict[str, Any]:
    """A publisher registered by an operator; the example folder built, signed and verified with the publisher's
    tool, submitted and approved over HTTP. The published release."""
    operator, account = Operator(stack), Caller(stack, "publisher")
    publisher_id = f"pub-{uuid.uuid4().hex[:10]}"
    keys = tmp / f"keys-{skill_id}"
    pack("keygen", "--out", keys)
    operator.ok("POST", "/rpc/admin/publishers", {
        "publisherId": publisher_id, "displayName": "Streak Lab", "userId": account.user,
        "trustLevel": "community", "publicKey": (keys / "publisher.pub").read_text()}, status=201)
    source = cps.write_folder(tmp / f"src-{skill_id}", skill_id=skill_id, publisher=publisher_id, **folder)
    out = tmp / f"{skill_id}.zip"
    pack("build", source, "--out", out)
    pack("sign", out, "--key", keys / "publisher.key")
    pack("verify", out, "--pub", keys / "publisher.pub")
    submitted = account.ok("POST", "/rpc/releases", {
        "package": base64.b64encode(out.read_bytes()).decode(),
        "signature": out.with_name(out.name + ".sig").read_text()}, status=201)
    assert submitted["state"] == "checked", submitted["report"]
    checks = {r["check"]: r for r in submitted["report"]["results"]}
    assert checks["code_tools"]["passed"] and checks["code_tools"]["cases"] >= 1
    decided = operator.ok("POST", f"/rpc/admin/releases/{submitted['releaseId']}/decision",
                          {"decision": "approve", "reason": "reviewed"})
    assert decided["state"] == "published"
    return decided


def install(stack: StackClient, user: Caller, skill_id: str) -> None:
    from datetime import UTC, datetime

    from skillcore.db.dynamo import make_db
    from skillcore.packages import installs
    from skillcore.settings import Settings

    settings = Settings.from_env(stack.env)
    installs.install(installs.InstallDeps(db=make_db(settings), canary_percent=10,
                                          high_risk_trust_levels=("verified_publisher",)),
                     user.user, skill_id, now=datetime.now(UTC))


def test_a_published_code_tool_is_installed_and_called_from_a_chat_turn(stack: StackClient, tmp_path: Path) -> None:
    skill_id = f"streak-{uuid.uuid4().hex[:8]}"
    publish(stack, tmp_path, skill_id)
    user = User(stack)
    conversation = user.agent()["defaultConversationId"]
    # Not installed: the command is no code tool of this user's, and the turn goes on as a plain one.
    before = user.turn(conversation, '/streak-score {"days": [1, 1]}')
    assert before["run"]["kind"] != "tool"

    install(stack, user, skill_id)
    done = user.turn(conversation, '/streak-score {"days": [1, 1, 0, 1, 1, 1]}')
    assert done["run"]["kind"] == "tool" and done["run"]["skillId"] == skill_id and done["run"]["outcome"] == "succeeded"
    assert '"current":3' in done["reply"]["text"] and '"longest":3' in done["reply"]["text"]
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
