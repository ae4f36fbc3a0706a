"""A canary driven end to end over real HTTP on the local stack (DynamoDB Local), as issue 25 point 7 has it
(docs/packages.md "Canary and automatic rollback"): a publisher's code package v1.0.0 (the example streak tool)
is published and installed by three users; v1.1.0 of the same skill is submitted, checked, approved and becomes the
skill's canary. The canary's share is the code's own draw (`in_canary`: SHA-256 of `<userId>\\n<version>` modulo
100 under SKILLS_CANARY_PERCENT, the stack's default 10), so the users are chosen inside or outside it and the test
is deterministic under the stack's settings (SKILLS_ROLLOUT_MIN_CALLS 20, SKILLS_ROLLBACK_THRESHOLD_PERCENT 20,
SKILLS_ROLLOUT_WINDOW_MINUTES 60). Every tool call is a chat turn (`/streak-score {json}`), counted by the
ToolRunner per serving version; the scan (`POST /_local/scan`) judges the canary.

- A bad v1.1.0 (tests/wasm/two_faced.wat: passes the release check's evals, runs out of fuel or traps on the
  inputs used) fails the canary users' turns with their sandbox codes and is rolled back by the scan: the release
  `rolled_back` with its rollback block for the publisher, every install on v1.0.0 again, the next turn answered
  by v1, `package.rollback` audited with codes and ids only; the user outside the canary never saw it.
- A good v1.1.0 passes: not promoted before its window, promoted by a scan given a time past the window (the
  local scan's `time`), then served to every install.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from skillcore.packages.upgrades import in_canary
from skillcore.settings import Settings
from tests.code_package_support import HOSTILE_EVALS, Operator, install, pack, write_folder
from tests.sandbox_support import wasm

from .conftest import Caller, StackClient

pytestmark = pytest.mark.stack

SHORT = '/streak-score {"days": [1, 1, 0, 1, 1, 1]}'  # 22 bytes of arguments: v1 answers, two_faced spins
LONG = '/streak-score {"days": [' + ", ".join(["1"] * 40) + "]}"  # over 64 bytes: two_faced traps
V1_SHORT = ('"current":3', '"longest":3')
V1_LONG = ('"current":40', '"longest":40')


class User(Caller):
    prefix = "roller"

    def __init__(self, stack: StackClient, prefix: str | None = None) -> None:
        super().__init__(stack, prefix)
        self._conversation: str | None = None

    def turn(self, text: str) -> dict[str, Any]:
        if self._conversation is None:
            self._conversation = self.agent()["defaultConversationId"]
        return self.ok("POST", f"/rpc/conversations/{self._conversation}/messages",
                       {"clientMessageId": uuid.uuid4().hex, "text": text})

    def serving(self, skill: str) -> tuple[str, bool]:
        install = self.ok("GET", f"/rpc/installs/{skill}")
        return install["version"], install["canary"]

    def audit(self, query: str = "") -> list[dict[str, Any]]:
        return self.ok("GET", f"/rpc/skills/audit-events?limit=100{query}")["items"]


class Publisher:
    """A registered publisher (its key pair made by the publisher's tool) that builds, signs and submits versions
    of one skill over HTTP."""

    def __init__(self, stack: StackClient, tmp: Path, skill: str) -> None:
        self.stack, self.tmp, self.skill = stack, tmp, skill
        self.operator, self.account = Operator(stack), Caller(stack, "publisher")
        self.publisher_id = f"pub-{uuid.uuid4().hex[:10]}"
        self.keys = tmp / "keys"
        pack("keygen", "--out", self.keys)
        self.operator.ok("POST", "/rpc/admin/publishers", {
            "publisherId": self.publisher_id, "displayName": "Streak Lab", "userId": self.account.user,
            "trustLevel": "community", "publicKey": (self.keys / "publisher.pub").read_text()}, status=201)

    def release(self, version: str, **folder: Any) -> dict[str, Any]:
        """Built, signed, verified, submitted (the release check passes, code tools included) and approved."""
        source = write_folder(self.tmp / f"src-{version}", skill_id=self.skill, publisher=self.publisher_id,
                              version=version, **folder)
        out = self.tmp / f"{self.skill}-{version}.zip"
        pack("build", source, "--out", out)
        pack("sign", out, "--key", self.keys / "publisher.key")
        pack("verify", out, "--pub", self.keys / "publisher.pub")
        submitted = self.account.ok("POST", "/rpc/releases", {
            "package": base64.b64encode(out.read_bytes()).decode(),
            "signature": out.with_name(out.name + ".sig").read_text()}, status=201)
        assert submitted["state"] == "checked", submitted["report"]
        checks = {r["check"]: r for r in submitted["report"]["results"]}
        assert checks["code_tools"]["passed"] and checks["code_tools"]["cases"] >= 1
        return dict(self.operator.ok("POST", f"/rpc/admin/releases/{submitted['releaseId']}/decision",
                                     {"decision": "approve", "reason": "reviewed"}))

    def read(self, release_id: str) -> dict[str, Any]:
        return dict(self.account.ok("GET", f"/rpc/releases/{release_id}"))


def settings(stack: StackClient) -> Settings:
    found = Settings.from_env(stack.env)
    assert 0 < found.canary_percent < 100  # a share with users on both sides of it
    return found


def user(stack: StackClient, version: str, *, inside: bool) -> User:
    """A fresh user the code's own draw puts inside (or outside) the canary of `version`."""
    percent = settings(stack).canary_percent
    while True:
        found = User(stack)
        if in_canary(found.user, version, percent) == inside:
            return found


def scan(stack: StackClient, at: datetime | None = None) -> dict[str, Any]:
    status, body = stack.call("POST", "/_local/scan", body={"time": at.isoformat()} if at else {})
    assert status == 200, body
    return dict(body["rollouts"])


def answered_by_v1(turn: dict[str, Any], skill: str, expected: tuple[str, ...] = V1_SHORT) -> bool:
    run, text = turn["run"], turn["reply"]["text"]
    return (run["kind"], run["skillId"], run["outcome"]) == ("tool", skill, "succeeded") and all(
        e in text for e in expected)


def test_a_bad_version_is_rolled_back_by_the_scan(stack: StackClient, tmp_path: Path) -> None:
    found = settings(stack)
    min_calls, skill = found.rollout_min_calls, f"roll-{uuid.uuid4().hex[:8]}"
    publisher = Publisher(stack, tmp_path, skill)
    v1 = publisher.release("1.0.0")
    assert v1["state"] == "published"
    alice, carol = user(stack, "1.1.0", inside=True), user(stack, "1.1.0", inside=True)
    bob = user(stack, "1.1.0", inside=False)
    for person in (alice, carol, bob):
        assert install(stack, person, skill)["version"] == "1.0.0"
    assert answered_by_v1(alice.turn(SHORT), skill)  # v1 works for the canary users before the canary

    bad = publisher.release("1.1.0", wasm=wasm("two_faced"), evals=HOSTILE_EVALS)
    assert bad["state"] == "approved"  # the canary, not published
    assert publisher.read(bad["releaseId"])["state"] == "approved"
    assert alice.serving(skill) == carol.serving(skill) == ("1.1.0", True)
    assert bob.serving(skill) == ("1.0.0", False)
    assert bob.ok("GET", f"/rpc/catalog/{skill}")["skill"]["version"] == "1.0.0"

    # the canary users' turns fail with their sandbox codes; bob's, at the same time, are answered by v1
    outcomes: list[str] = []
    calls = min_calls
    for i in range(calls):
        person = alice if i % 2 == 0 else carol
        failed = person.turn(SHORT if i % 4 < 2 else LONG)
        assert (failed["run"]["kind"], failed["run"]["skillId"], failed["run"]["outcome"]) == (
            "tool", skill, "failed"), failed["run"]
        outcomes.append("sandbox_fuel_exhausted" if "sandbox_fuel_exhausted" in failed["reply"]["text"]
                        else "sandbox_trap" if "sandbox_trap" in failed["reply"]["text"] else "other")
        if i % 5 == 0:
            assert answered_by_v1(bob.turn(LONG if i % 2 else SHORT), skill, V1_LONG if i % 2 else V1_SHORT)
    assert outcomes == ["sandbox_fuel_exhausted" if i % 4 < 2 else "sandbox_trap" for i in range(calls)]
    codes = {e["metadata"].get("errorCode") for e in alice.audit(f"&skillId={skill}")
             if e["action"] == "tool.execute" and e["decision"] == "failed"}
    assert codes == {"sandbox_fuel_exhausted", "sandbox_trap"}

    # the scan judges the canary: worse than the stable version beyond the threshold, rolled back
    assert scan(stack)["rolledBack"] >= 1
    notice = publisher.read(bad["releaseId"])
    assert notice["state"] == "rolled_back"
    rollback = notice["rollback"]
    assert (rollback["reason"], rollback["previousVersion"], rollback["calls"], rollback["failures"]) == (
        "failure_rate", "1.0.0", min_calls, min_calls), rollback
    # the stable version's counts over the same 5-minute buckets: bob's 4 turns (and alice's first one when it
    # fell in the canary's first bucket), none failed
    assert rollback["previousCalls"] in (4, 5) and rollback["previousFailures"] == 0, rollback
    queue = publisher.operator.ok("GET", f"/rpc/admin/releases/{bad['releaseId']}")
    assert queue["state"] == "rolled_back" and queue["rollback"] == rollback
    # a second scan finds nothing left to judge for this skill: the release stays rolled back
    scan(stack)
    assert publisher.read(bad["releaseId"])["state"] == "rolled_back"

    # every install serves v1.0.0 again, and the next turn is answered by v1
    for person in (alice, carol, bob):
        assert person.serving(skill) == ("1.0.0", False)
        assert person.ok("GET", f"/rpc/installs/{skill}")["pendingVersion"] is None
    assert answered_by_v1(alice.turn(SHORT), skill)
    assert answered_by_v1(carol.turn(LONG), skill, V1_LONG)
    detail = bob.ok("GET", f"/rpc/catalog/{skill}")
    assert detail["skill"]["version"] == "1.0.0" and [v["version"] for v in detail["versions"]] == ["1.0.0"]

    # audited in the publisher account's trail: codes and ids only
    [event] = publisher.account.ok("GET", "/rpc/skills/audit-events?action=package.rollback")["items"]
    assert (event["targetId"], event["skillId"], event["skillVersion"], event["decision"], event["reason"]) == (
        bad["releaseId"], skill, "1.1.0", "failed", "failure_rate")
    assert (event["metadata"]["status"], event["metadata"]["publisherId"]) == ("rolled_back", publisher.publisher_id)
    text = json.dumps(event)
    for leaked in ("Streak Lab", "days", "streak-score", "reviewed", alice.user, carol.user, bob.user):
        assert leaked not in text, leaked
    # nobody else's trail holds it
    assert not [e for e in alice.audit("&action=package.rollback")]

    # bob, outside the canary, never ran v1.1.0: every call of his succeeded
    bobs = [e for e in bob.audit(f"&skillId={skill}") if e["action"] == "tool.execute" and e["decision"] != "allowed"]
    assert bobs and {(e["decision"], e["reason"]) for e in bobs} == {("succeeded", "succeeded")}
    assert len(bobs) == 4 and {e["skillVersion"] for e in bobs} == {"1.0.0"}


def test_a_good_version_passes_its_window_and_is_promoted(stack: StackClient, tmp_path: Path) -> None:
    found = settings(stack)
    skill = f"grow-{uuid.uuid4().hex[:8]}"
    publisher = Publisher(stack, tmp_path, skill)
    assert publisher.release("1.0.0")["state"] == "published"
    alice, bob = user(stack, "1.1.0", inside=True), user(stack, "1.1.0", inside=False)
    for person in (alice, bob):
        install(stack, person, skill)
    started = datetime.now(UTC)
    good = publisher.release("1.1.0")
    assert good["state"] == "approved"
    assert (alice.serving(skill), bob.serving(skill)) == (("1.1.0", True), ("1.0.0", False))

    for i in range(found.rollout_min_calls):
        assert answered_by_v1(alice.turn(SHORT if i % 2 else LONG), skill, V1_SHORT if i % 2 else V1_LONG)
    assert answered_by_v1(bob.turn(SHORT), skill)

    # enough calls and not worse, but the window has not passed: still the canary
    scan(stack)
    assert publisher.read(good["releaseId"])["state"] == "approved"
    assert bob.serving(skill) == ("1.0.0", False)
    # the local scan takes the time it runs at: one past the window promotes it
    promoted = scan(stack, started + timedelta(minutes=found.rollout_window_minutes + 1))
    assert promoted["promoted"] >= 1
    release = publisher.read(good["releaseId"])
    assert release["state"] == "published" and release.get("rollback") is None
    detail = bob.ok("GET", f"/rpc/catalog/{skill}")
    assert detail["skill"]["version"] == "1.1.0"
    assert [v["version"] for v in detail["versions"]] == ["1.0.0", "1.1.0"]
    for person in (alice, bob):
        assert person.serving(skill) == ("1.1.0", False)
    assert answered_by_v1(bob.turn(LONG), skill, V1_LONG)
    [event] = publisher.account.ok("GET", "/rpc/skills/audit-events?action=package.promote")["items"]
    assert (event["targetId"], event["skillId"]) == (good["releaseId"], skill)
    assert "Streak Lab" not in json.dumps(event)
