"""Installs, consent, upgrades and automatic rollback over real HTTP on the local stack (DynamoDB Local).

A package made from a folder with the publisher's tool, signed, submitted, reviewed and published; installed by
another user (its permissions and trust level shown before, nothing granted by the install); served to that
user's agent hosts (the capability listing and its protocol, rendered by the user-capability template); a
compatible upgrade that reaches the canary share first and everyone once promoted; an upgrade that adds a
permission and waits for consent while the installed version keeps serving; a bad version rolled back by the
scan's evaluation; uninstall revoking the skill's grants.

The tool calls of an installed version are counted by the ToolRunner, the path every tool takes: here a tool of
the installed skill's serving version runs in this process through the ToolRunner against the stack's own
DynamoDB Local (code tools, which give packages tools a chat turn calls, run through the same runner).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel

from skillcore.db.dynamo import make_db
from skillcore.packages import installs
from skillcore.packages.upgrades import in_canary
from skillcore.policy import grant_store
from skillcore.settings import Settings
from skillcore.tools.runner import ToolCallContext, ToolRunner

from .conftest import Caller, StackClient
from .test_packages_http import Operator, Publisher, code

MIN_CALLS = 20  # SKILLS_ROLLOUT_MIN_CALLS's default, the stack's


class Empty(BaseModel):
    pass


class Tool:
    """A tool of the installed skill: succeeds or fails as told."""

    tool_id = "package_probe"
    timeout_ms = 2000
    max_calls_per_turn = 1
    input_model = Empty
    output_model = Empty

    def __init__(self, fail: bool) -> None:
        self.fail = fail

    @property
    def execute(self) -> Any:
        def run(_input: Any, _ports: Any) -> Any:
            if self.fail:
                raise RuntimeError("the version is broken")
            return {}
        return run


def run_calls(stack: StackClient, user: str, skill: str, *, fail: bool, calls: int) -> str:
    """`calls` tool calls of the user's serving version of `skill` through the ToolRunner; its version."""
    settings = Settings.from_env(stack.env)
    db = make_db(settings)
    installed = installs.installed_skill(db, user, skill, canary_percent=settings.canary_percent)
    assert installed is not None
    manifest = installs.skill_manifest(installed)
    grants = tuple(g for g in grant_store.all_grants(db, user) if g.skill_id == skill)
    runner = ToolRunner(db, clock=lambda: datetime.now(UTC), new_id=lambda: uuid.uuid4().hex)
    for i in range(calls):
        runner.run(Tool(fail), manifest, ToolCallContext(user_id=user, agent_id="agent-1", conversation_id=None,
                                                        source_message_id=f"m-{uuid.uuid4().hex}", call_index=i),
                   {}, grants, None)
    return installed.version


async def mcp_read(stack: StackClient, user: str, skill: str) -> tuple[Any, Any]:
    http_client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {stack.token(user, kind='host')}"}, timeout=30)
    async with Client(streamable_http_client(f"{stack.url}/mcp", http_client=http_client), mode="legacy") as client:
        listed = await client.call_tool("list_capabilities", {})
        read = await client.call_tool("get_capability_protocol", {"capabilityId": skill})
        return listed, read


def canary_user(stack: StackClient, version: str, inside: bool) -> Caller:
    percent = Settings.from_env(stack.env).canary_percent
    assert 0 < percent < 100 and Settings.from_env(stack.env).rollout_min_calls == MIN_CALLS
    while True:
        caller = Caller(stack, "installer")
        if in_canary(caller.user, version, percent) == inside:
            return caller


def publish(operator: Operator, publisher: Publisher, version: str, permissions: list[dict[str, str]]) -> dict[str, Any]:
    publisher.edit(permissions=permissions)
    status, release = publisher.submit(*publisher.build(version))
    assert status == 201 and release["state"] == "checked", release
    return operator.ok("POST", f"/rpc/admin/releases/{release['releaseId']}/decision",
                       {"decision": "approve", "reason": "reviewed"})


READ = {"code": "memory:read", "riskLevel": "L1", "approvalMode": "persistent"}
WRITE = {"code": "memory:write", "riskLevel": "L2", "approvalMode": "persistent"}


def scan(stack: StackClient, at: datetime | None = None) -> dict[str, Any]:
    status, body = stack.call("POST", "/_local/scan", body={"time": at.isoformat()} if at else {})
    assert status == 200, body
    return body


def test_install_consent_upgrade_and_rollback(stack: StackClient, tmp_path: Path) -> None:
    operator = Operator(stack)
    skill = f"tidy-{uuid.uuid4().hex[:8]}"
    publisher = Publisher(stack, tmp_path, skill)
    operator.ok("POST", "/rpc/admin/publishers", {
        "publisherId": publisher.publisher_id, "displayName": "Acme", "userId": publisher.caller.user,
        "trustLevel": "verified_publisher", "publicKey": publisher.pem}, status=201)
    first = publish(operator, publisher, "1.0.0", [READ])
    assert first["state"] == "published"  # the first version: no canary

    # before installing: the catalog shows the permissions with their risk levels and the trust level
    alice = canary_user(stack, "1.1.0", inside=True)
    detail = alice.ok("GET", f"/rpc/catalog/{skill}")
    assert (detail["skill"]["trustLevel"], detail["skill"]["permissions"]) == ("verified_publisher", [
        {"code": "memory:read", "riskLevel": "L1", "approvalMode": "persistent"}])
    installed = alice.ok("POST", "/rpc/installs", {"skillId": skill}, status=201)
    assert (installed["version"], installed["trustLevel"], installed["pendingVersion"]) == (
        "1.0.0", "verified_publisher", None)
    assert code(alice.call("POST", "/rpc/installs", {"skillId": skill}))[:2] == (409, "already_exists")
    assert code(alice.call("POST", "/rpc/installs", {"skillId": "no-such-skill"}))[:2] == (404, "not_found")
    # installing grants nothing: the skill is in the skills list, its permission not granted
    listed = {s["skillId"]: s for s in alice.ok("GET", "/rpc/skills?limit=100")["items"]}
    assert listed[skill]["trustLevel"] == "verified_publisher"
    assert listed[skill]["permissions"][0]["granted"] is False
    assert not [g for g in alice.ok("GET", "/rpc/skills/permissions")["items"] if g["skillId"] == skill]
    # another user's install is 404
    bob = canary_user(stack, "1.1.0", inside=False)
    assert code(bob.call("GET", f"/rpc/installs/{skill}"))[:2] == (404, "not_found")
    assert code(bob.call("DELETE", f"/rpc/installs/{skill}"))[:2] == (404, "not_found")
    bob.ok("POST", "/rpc/installs", {"skillId": skill}, status=201)

    # served to the user's agent hosts: listed with its trust level, its protocol by the server's template
    entries = {e["capabilityId"]: e for e in alice.ok("GET", "/rpc/capabilities")["items"]}
    assert (entries[skill]["kind"], entries[skill]["trustLevel"], entries[skill]["version"]) == (
        "package", "verified_publisher", "1.0.0")
    assert entries[skill]["userWritten"] == ["displayName", "whenToUse"]
    assert entries["memory-recall"]["trustLevel"] == "builtin"
    protocol = alice.ok("GET", f"/rpc/capabilities/protocol?capabilityId={skill}")
    assert f"# 能力协议：`{skill}`（版本 1.0.0）" in protocol["markdown"]
    assert "技能包" in protocol["markdown"] and "│ Plan the day with the user (fill in)." in protocol["markdown"]
    assert code(Caller(stack).call("GET", f"/rpc/capabilities/protocol?capabilityId={skill}"))[:2] == (404, "not_found")
    # the same on the MCP face (McpFunction, with its own role), as an agent host reads it
    listed, read = anyio.run(mcp_read, stack, alice.user, skill)
    assert listed.is_error is False and read.is_error is False, (listed, read)
    offered = {e["capabilityId"]: e for e in listed.structured_content["items"]}
    assert (offered[skill]["kind"], offered[skill]["trustLevel"]) == ("package", "verified_publisher")
    assert read.structured_content["markdown"] == protocol["markdown"]

    # the person grants afterwards, as for a built-in skill
    alice.ok("PATCH", "/rpc/skills/permissions", {"skillId": skill, "permissionCode": "memory:read",
                                                   "scope": {"type": "user"}, "granted": True})

    # a compatible upgrade: the canary share first (alice in it, bob not) ...
    canary = publish(operator, publisher, "1.1.0", [READ])
    assert canary["state"] == "approved"
    assert alice.ok("GET", f"/rpc/installs/{skill}")["version"] == "1.1.0"
    assert alice.ok("GET", f"/rpc/installs/{skill}")["canary"] is True
    assert bob.ok("GET", f"/rpc/installs/{skill}")["version"] == "1.0.0"
    assert alice.ok("GET", f"/rpc/catalog/{skill}")["skill"]["version"] == "1.0.0"
    assert code(operator.call("POST", f"/rpc/admin/releases/{canary['releaseId']}/decision",
                              {"decision": "approve", "reason": "again"}))[:2] == (409, "release_not_pending")
    # ... good outcomes over the window: promoted, and everyone's install upgrades by itself
    assert run_calls(stack, alice.user, skill, fail=False, calls=MIN_CALLS) == "1.1.0"
    assert scan(stack)["rollouts"]["promoted"] == 0  # the window has not passed
    summary = scan(stack, datetime.now(UTC) + timedelta(minutes=61))
    assert summary["rollouts"]["promoted"] >= 1
    assert bob.ok("GET", f"/rpc/installs/{skill}")["version"] == "1.1.0"
    assert publisher.caller.ok("GET", f"/rpc/releases/{canary['releaseId']}")["state"] == "published"
    assert alice.ok("GET", f"/rpc/catalog/{skill}")["skill"]["version"] == "1.1.0"

    # an upgrade that adds a permission waits for consent; the installed version keeps serving
    carol = canary_user(stack, "1.2.0", inside=True)
    carol.ok("POST", "/rpc/installs", {"skillId": skill}, status=201)
    risky = publish(operator, publisher, "1.2.0", [READ, WRITE])
    assert risky["state"] == "approved"
    waiting = carol.ok("GET", f"/rpc/installs/{skill}")
    assert (waiting["version"], waiting["pendingVersion"]) == ("1.1.0", "1.2.0")
    assert [p["code"] for p in waiting["pendingPermissions"]] == ["memory:read", "memory:write"]
    assert code(carol.call("POST", f"/rpc/installs/{skill}/accept", {"version": "1.3.0"}))[:2] == (
        409, "upgrade_not_pending")
    accepted = carol.ok("POST", f"/rpc/installs/{skill}/accept", {"version": "1.2.0"})
    assert (accepted["version"], accepted["pendingVersion"]) == ("1.2.0", None)
    audit = carol.ok("GET", "/rpc/skills/audit-events?action=package.")["items"]
    assert [(e["action"], e["skillVersion"]) for e in audit] == [
        ("package.upgrade_accept", "1.2.0"), ("package.install", "1.1.0")]

    # the new version fails its tool calls: the scan rolls every install back to the previous version
    assert run_calls(stack, carol.user, skill, fail=True, calls=MIN_CALLS) == "1.2.0"
    assert scan(stack)["rollouts"]["rolledBack"] >= 1
    assert carol.ok("GET", f"/rpc/installs/{skill}")["version"] == "1.1.0"
    assert carol.ok("GET", f"/rpc/installs/{skill}")["pendingVersion"] is None
    notice = publisher.caller.ok("GET", f"/rpc/releases/{risky['releaseId']}")
    assert notice["state"] == "rolled_back"
    assert (notice["rollback"]["reason"], notice["rollback"]["previousVersion"], notice["rollback"]["calls"],
            notice["rollback"]["failures"]) == ("failure_rate", "1.1.0", MIN_CALLS, MIN_CALLS)
    trail = publisher.caller.ok("GET", "/rpc/skills/audit-events?action=package.rollback")["items"]
    assert [(e["targetId"], e["decision"], e["reason"]) for e in trail] == [
        (risky["releaseId"], "failed", "failure_rate")]
    assert [v["version"] for v in alice.ok("GET", f"/rpc/catalog/{skill}")["versions"]] == ["1.0.0", "1.1.0"]

    # uninstall: its grants revoked, audited; the install gone
    alice.ok("DELETE", f"/rpc/installs/{skill}", status=204)
    assert code(alice.call("GET", f"/rpc/installs/{skill}"))[:2] == (404, "not_found")
    grants = [g for g in alice.ok("GET", "/rpc/skills/permissions")["items"] if g["skillId"] == skill]
    assert [g["status"] for g in grants] == ["revoked"]
    actions = [e["action"] for e in alice.ok("GET", f"/rpc/skills/audit-events?skillId={skill}")["items"]]
    assert actions[:2] == ["package.uninstall", "permission.revoke"]
    assert skill not in {s["skillId"] for s in alice.ok("GET", "/rpc/skills?limit=100")["items"]}


def test_a_community_skill_may_not_ask_for_l3(stack: StackClient, tmp_path: Path) -> None:
    operator = Operator(stack)
    publisher = Publisher(stack, tmp_path, f"risky-{uuid.uuid4().hex[:8]}")
    operator.ok("POST", "/rpc/admin/publishers", {
        "publisherId": publisher.publisher_id, "displayName": "Acme", "userId": publisher.caller.user,
        "trustLevel": "community", "publicKey": publisher.pem}, status=201)
    publisher.edit(permissions=[{**READ, "riskLevel": "L3"}])
    status, release = publisher.submit(*publisher.build("1.0.0"))
    assert status == 201 and release["state"] == "rejected", release
    findings = {r["check"]: r["findings"] for r in release["report"]["results"] if not r["passed"]}
    assert findings == {"permissions": [{"path": "skillcore.json#/permissions/0/riskLevel",
                                         "rule": "trust_level_forbidden"}]}
    assert json.dumps(release).count("trust_level_forbidden") == 1
