"""memory-recall over real HTTP: the stage-4 seed's manual checks 2-7 ("手工验证"), and data minimisation
(no message, memory or note text in audit events, tool executions, runs or logs)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from skillcore import faults
from skillcore.clock import to_api_time
from skillcore_local.ddb_local import client as ddb_client

from .conftest import Caller as BaseCaller
from .conftest import StackClient

pytestmark = pytest.mark.stack

RECALL_QUESTION = "你还记得我喜欢什么吗"


class Caller(BaseCaller):
    prefix = "recall"

    def remember(self, agent: dict[str, Any], content: str, importance: int = 3, title: str = "note") -> dict[str, Any]:
        return self.ok(
            "POST", f"/rpc/agents/{agent['agentId']}/memories",
            {"title": title, "content": content, "importance": importance}, status=201,
        )

    def grant(self, skill: str = "memory-recall", code: str = "memory:read", granted: bool = True,
              scope: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.ok("PATCH", "/rpc/skills/permissions", {
            "skillId": skill, "permissionCode": code, "scope": scope or {"type": "user"}, "granted": granted,
        })

    def say(self, agent: dict[str, Any], text: str, cid: str) -> dict[str, Any]:
        return self.ok(
            "POST", f"/rpc/conversations/{agent['defaultConversationId']}/messages",
            {"clientMessageId": cid, "text": text},
        )

    def audit(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/skills/audit-events?limit=100")["items"]

    def runs(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/skills/runs?limit=100")["items"]

    def catalog(self) -> dict[str, dict[str, Any]]:
        return {i["skillId"]: i for i in self.ok("GET", "/rpc/skills")["items"]}


@pytest.fixture
def alice(stack: StackClient) -> Caller:
    return Caller(stack, "alice")


@pytest.fixture
def no_faults() -> Iterator[None]:
    faults.clear()
    yield
    faults.clear()


def _scan_table(stack: StackClient, env_name: str) -> list[dict[str, Any]]:
    ddb = ddb_client(stack.local.ddb_endpoint)
    items: list[dict[str, Any]] = []
    request: dict[str, Any] = {"TableName": stack.env[env_name]}
    while True:
        page = ddb.scan(**request)
        items += page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _tool_executions_of(stack: StackClient, user: str) -> list[dict[str, Any]]:
    return [i for i in _scan_table(stack, "SKILLS_TABLE_TOOL_EXECUTIONS") if user in repr(i)]


# ---------------------------------------------------------------------------------------------- check 2


def test_catalog_shows_memory_recall_and_the_reminder(alice: Caller) -> None:
    catalog = alice.catalog()
    recall = catalog["memory-recall"]
    assert recall["kind"] == "tool" and recall["version"] == "1.0.0" and recall["enabled"] is True
    assert recall["permissions"] == [
        {"code": "memory:read", "riskLevel": "L1", "approvalMode": "persistent", "granted": False}
    ]
    reminder = catalog["goal-check-in-reminder"]
    assert reminder["kind"] == "background" and reminder["enabled"] is True
    assert reminder["permissions"] == [
        {"code": "proactive_message:write", "riskLevel": "L2", "approvalMode": "persistent", "granted": False}
    ]
    alice.grant()
    assert alice.catalog()["memory-recall"]["permissions"][0]["granted"] is True
    assert alice.catalog()["memory-context"]["permissions"][0]["granted"] is False


# ---------------------------------------------------------------------------------------------- check 3


def test_recall_without_grant_reads_nothing_and_hints_at_the_grant(stack: StackClient, alice: Caller) -> None:
    mika = alice.agent("Mika")
    alice.remember(mika, "我喜欢爬山", importance=5)
    body = alice.say(mika, RECALL_QUESTION, "r1")

    assert body["run"]["kind"] == "tool" and body["run"]["outcome"] == "denied"
    assert body["run"]["skillId"] == "memory-recall"
    assert "爬山" not in body["reply"]["text"]
    # The notice is in the conversation's language (a Chinese question here) and names the permission.
    assert "Skills 页面" in body["reply"]["text"] and "memory:read" in body["reply"]["text"]
    assert body["run"].get("memoriesUsed") in (None, 0)

    events = alice.audit()
    assert [(e["action"], e["decision"]) for e in events] == [("tool.execute", "denied")]
    assert events[0]["reason"] == "grant_missing"
    assert events[0]["metadata"]["missingPermissions"] == ["memory:read"]
    assert _tool_executions_of(stack, alice.user) == []  # denied before any execution record
    (run,) = alice.runs()
    assert run["kind"] == "tool" and run["outcome"] == "denied"
    english = alice.say(mika, "do you remember what I like?", "r1-en")
    assert "Skills page" in english["reply"]["text"] and "爬山" not in english["reply"]["text"]


# ---------------------------------------------------------------------------------------------- check 4


def test_recall_after_grant_uses_only_the_current_agents_memories(alice: Caller) -> None:
    mika, other = alice.agent("Mika"), alice.agent("Other")
    alice.remember(mika, "我喜欢爬山", importance=4)
    alice.remember(mika, "我养了一只猫")
    forgotten = alice.remember(mika, "我喜欢潜水", importance=5)
    alice.ok("DELETE", f"/rpc/agents/{mika['agentId']}/memories/{forgotten['memoryId']}")
    alice.remember(other, "我喜欢游泳", importance=5)
    alice.remember(other, "我喜欢滑雪", importance=5)

    grant = alice.grant()
    assert grant["status"] == "active" and grant["skillId"] == "memory-recall"
    assert grant["permissionCode"] == "memory:read" and grant["scope"] == {"type": "user"}

    body = alice.say(mika, RECALL_QUESTION, "r2")
    assert body["run"]["kind"] == "tool" and body["run"]["outcome"] == "succeeded"
    assert body["run"]["memoriesUsed"] == 1
    assert body["reply"]["text"] == "我记得这些：\n我喜欢爬山"
    for foreign in ("游泳", "滑雪", "潜水"):
        assert foreign not in body["reply"]["text"]

    body = alice.say(other, RECALL_QUESTION, "r3")
    assert body["run"]["outcome"] == "succeeded" and body["run"]["memoriesUsed"] == 2
    assert "游泳" in body["reply"]["text"] and "滑雪" in body["reply"]["text"]
    assert "爬山" not in body["reply"]["text"] and "猫" not in body["reply"]["text"]

    executed = [e for e in alice.audit() if e["action"] == "tool.execute"]
    assert [(e["decision"]) for e in executed] == ["succeeded", "allowed", "succeeded", "allowed"]
    assert executed[0]["metadata"]["results"] == 2 and executed[2]["metadata"]["results"] == 1


def test_agent_scoped_grant_covers_only_that_agent(alice: Caller) -> None:
    mika, other = alice.agent("Mika"), alice.agent("Other")
    alice.remember(mika, "I like tea")
    alice.remember(other, "I like coffee")
    alice.grant(scope={"type": "agent", "agentId": mika["agentId"]})
    mine = alice.say(mika, "do you remember what I like?", "a1")
    assert mine["run"]["outcome"] == "succeeded" and "tea" in mine["reply"]["text"]
    theirs = alice.say(other, "do you remember what I like?", "a2")
    assert theirs["run"]["outcome"] == "denied" and "coffee" not in theirs["reply"]["text"]

    revoked = alice.grant(granted=False, scope={"type": "agent", "agentId": mika["agentId"]})
    assert revoked["status"] == "revoked" and revoked["revokedAt"]
    again = alice.say(mika, "do you remember what I like?", "a3")
    assert again["run"]["outcome"] == "denied" and "tea" not in again["reply"]["text"]

    stranger = Caller(alice.stack, "mallory")
    theirs_agent = stranger.agent("M")
    status, payload = alice.call("PATCH", "/rpc/skills/permissions", {
        "skillId": "memory-recall", "permissionCode": "memory:read",
        "scope": {"type": "agent", "agentId": theirs_agent["agentId"]}, "granted": True,
    })
    assert status == 404 and payload["error"]["code"] == "agent_not_found"
    status, payload = alice.call("PATCH", "/rpc/skills/permissions", {
        "skillId": "memory-recall", "permissionCode": "proactive_message:write", "scope": {"type": "user"},
        "granted": True,
    })
    assert status == 422 and payload["error"]["code"] == "permission_not_declared"


# ---------------------------------------------------------------------------------------------- check 5


def test_explicit_command_shows_a_tool_run(alice: Caller) -> None:
    mika = alice.agent("Mika")
    alice.remember(mika, "My sister is called Ana")
    alice.grant()
    body = alice.say(mika, "/memory-recall sister", "c1")
    assert body["run"]["kind"] == "tool" and body["run"]["outcome"] == "succeeded"
    assert body["reply"]["text"].endswith("My sister is called Ana")

    runs = alice.runs()
    assert runs[0]["runId"] == body["run"]["runId"]
    assert runs[0]["kind"] == "tool" and runs[0]["skillId"] == "memory-recall"
    assert runs[0]["skillVersion"] == "1.0.0" and runs[0]["memoriesUsed"] == 1
    assert runs[0]["conversationId"] == mika["defaultConversationId"]

    nothing = alice.say(mika, "/memory-recall favourite colour", "c2")
    assert nothing["run"]["outcome"] == "succeeded" and nothing["run"]["memoriesUsed"] == 0
    assert nothing["reply"]["text"] == "I can't recall that exactly."


def test_recall_in_a_group_chat_never_runs_the_tool(alice: Caller) -> None:
    a, b = alice.agent("A"), alice.agent("B")
    alice.remember(a, "我喜欢爬山")
    alice.grant()
    group = alice.ok("POST", "/rpc/conversations", {"kind": "group", "agentIds": [a["agentId"], b["agentId"]]}, status=201)
    body = alice.ok("POST", f"/rpc/conversations/{group['conversationId']}/messages",
                    {"clientMessageId": "g1", "text": RECALL_QUESTION})
    assert body["run"]["kind"] != "tool" and "爬山" not in body["reply"]["text"]
    assert all(e["action"] != "tool.execute" for e in alice.audit())


# ---------------------------------------------------------------------------------------------- check 6


def test_disabled_memory_recall_never_calls_the_tool(stack: StackClient, alice: Caller) -> None:
    mika = alice.agent("Mika")
    alice.remember(mika, "我喜欢爬山")
    alice.grant()
    before = alice.say(mika, RECALL_QUESTION, "d0")
    assert before["run"]["kind"] == "tool"
    executions_before = len(_tool_executions_of(stack, alice.user))
    tool_events_before = [e for e in alice.audit() if e["action"] == "tool.execute"]
    assert executions_before == 1 and len(tool_events_before) == 2

    item = alice.ok("PATCH", "/rpc/skills/memory-recall", {"enabled": False})
    assert item["skillId"] == "memory-recall" and item["enabled"] is False
    assert alice.catalog()["memory-recall"]["enabled"] is False

    for i, text in enumerate([RECALL_QUESTION, "/memory-recall 爬山", "do you remember my hobby?"]):
        body = alice.say(mika, text, f"d{i + 1}")
        assert body["run"]["kind"] != "tool", text
        assert body["run"].get("skillId") != "memory-recall"
        assert "爬山" not in body["reply"]["text"] or text.startswith("/memory-recall")

    assert [e for e in alice.audit() if e["action"] == "tool.execute"] == tool_events_before
    assert len(_tool_executions_of(stack, alice.user)) == executions_before
    assert sum(1 for r in alice.runs() if r["kind"] == "tool") == 1


# ---------------------------------------------------------------------------------------------- check 7: data minimisation


class _Records(logging.Handler):
    """Every log record, formatted as the service prints it, plus its raw attributes."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        formatter = next(
            (h.formatter for h in logging.getLogger("skillcore").handlers if h.formatter is not None), None
        )
        try:
            text = formatter.format(record) if formatter is not None else self.format(record)
        except Exception:  # noqa: BLE001 - a record this formatter cannot render is still kept, raw
            text = record.getMessage()
        self.lines.append(text + "\n" + repr(record.__dict__))


@pytest.fixture
def log_records() -> Iterator[_Records]:
    handler = _Records()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


def test_no_text_reaches_audit_tool_executions_runs_or_logs(
    stack: StackClient, alice: Caller, no_faults: None, log_records: _Records,
    capfd: pytest.CaptureFixture[str],
) -> None:
    tag = uuid.uuid4().hex[:8].upper()
    canary_message = f"CANARYMSG{tag}"
    canary_memory = f"CANARYMEM{tag}"
    canary_note = f"CANARYNOTE{tag}"
    canaries = (canary_message, canary_memory, canary_note)

    mika = alice.agent("Mika")
    alice.remember(mika, f"{canary_memory} likes tea", title=f"{canary_memory} title", importance=5)
    run_at = to_api_time(datetime.now(UTC) + timedelta(minutes=5))
    job_body = {"skillId": "goal-check-in-reminder", "agentId": mika["agentId"], "runAt": run_at,
                "note": f"{canary_note} run daily"}
    status, refused = alice.call("POST", "/rpc/skills/background-jobs", job_body)  # denied: no grant yet
    assert status == 422 and refused["error"]["code"] == "permission_required"

    # Denied, granted, explicit, plain, prompt-injected, and failed turns, each carrying the message canary.
    alice.say(mika, f"do you remember tea {canary_message}?", "k0")
    alice.grant()
    alice.grant(skill="memory-context")
    alice.say(mika, f"do you remember tea {canary_message}?", "k1")
    alice.say(mika, f"/memory-recall {canary_message} tea", "k2")
    alice.say(mika, f"hello {canary_message}", "k3")
    stack.call("POST", "/_local/faults", body={"point": "tool.handler", "times": 1, "kind": "transient"})
    failed = alice.say(mika, f"do you remember tea {canary_message} again?", "k4")
    assert failed["run"]["kind"] == "tool" and failed["run"]["outcome"] == "failed"
    alice.say(mika, f"帮我定个目标 {canary_message}", "k5")
    alice.say(mika, f"{canary_message} 每天读书", "k6")
    alice.say(mika, "/cancel", "k7")

    # Background jobs with the note canary: one delivered after a transient failure, one cancelled.
    alice.grant(skill="goal-check-in-reminder", code="proactive_message:write")
    job = alice.ok("POST", "/rpc/skills/background-jobs", job_body, status=201)
    cancelled = alice.ok("POST", "/rpc/skills/background-jobs", job_body, status=201)
    alice.ok("POST", f"/rpc/skills/background-jobs/{cancelled['jobId']}/cancel")
    due = datetime.fromisoformat(job["nextAttemptAt"].replace("Z", "+00:00")) + timedelta(seconds=1)
    # Whatever else is due by then runs first, so the fault below meets this job.
    assert stack.call("POST", "/_local/scan", body={"time": to_api_time(due - timedelta(seconds=2))})[0] == 200
    stack.call("POST", "/_local/faults", body={"point": "background.before_side_effect", "times": 1, "kind": "transient"})
    assert stack.call("POST", "/_local/scan", body={"time": to_api_time(due)})[0] == 200
    assert stack.call("POST", "/_local/scan", body={"time": to_api_time(due + timedelta(minutes=6))})[0] == 200
    jobs = {j["jobId"]: j for j in alice.ok("GET", "/rpc/skills/background-jobs")["items"]}
    assert jobs[job["jobId"]]["status"] == "succeeded" and jobs[job["jobId"]]["attempts"] == 2
    assert jobs[cancelled["jobId"]]["status"] == "cancelled"
    delivered = alice.ok("GET", f"/rpc/conversations/{mika['defaultConversationId']}/messages?limit=100")["items"]
    assert any(canary_note in m["text"] for m in delivered if m["messageId"] == job["jobId"])
    assert any(canary_memory in m["text"] for m in delivered)  # the recall did answer with the memory

    # The records hold none of it, and they do exist for this user (the check is not vacuous).
    for env_name in ("SKILLS_TABLE_AUDIT", "SKILLS_TABLE_TOOL_EXECUTIONS", "SKILLS_TABLE_RUNS"):
        dump = repr(_scan_table(stack, env_name))
        assert alice.user in dump or mika["agentId"] in dump or job["jobId"] in dump, env_name
        for canary in canaries:
            assert canary not in dump, (env_name, canary)
    api_dump = repr(alice.audit()) + repr(alice.runs())
    assert job["jobId"] in api_dump
    for canary in canaries:
        assert canary not in api_dump, canary

    # The logs: every record the service wrote, and the process's stdout/stderr.
    captured = capfd.readouterr()
    logged = "\n".join(log_records.lines)
    assert '"chat turn"' in logged or "chat turn" in logged
    assert "scan dispatched" in logged and "shard work finished" in logged
    assert "background attempt failed" in logged and "tool handler failed" in logged
    assert "POST /rpc/conversations/" in captured.err  # the gateway's access log reached the capture
    for canary in canaries:
        assert canary not in logged, canary
        assert canary not in captured.out, canary
        assert canary not in captured.err, canary
