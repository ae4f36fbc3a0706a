"""The automation story over real HTTP on the local stack (DynamoDB Local): chat, the 10:00 scan, the
memory, the next chat's recall; and the once-only guarantees under real concurrency."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta


def user_id() -> str:
    return f"auto-{uuid.uuid4().hex[:12]}"


def t(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def scan_at(stack, at: datetime) -> dict:
    status, summary = stack.call("POST", "/_local/scan", {"time": at.strftime("%Y-%m-%dT%H:%M:%SZ")})
    assert status == 200, summary
    return summary


def grant(stack, token, skill, code):
    status, body = stack.call("PATCH", "/rpc/skills/permissions", {
        "skillId": skill, "permissionCode": code, "scope": {"type": "user"}, "granted": True}, token=token)
    assert status == 200, body


def test_the_whole_story(stack):
    token = stack.token(user_id())
    admin = stack.token("operator", admin=True)
    assert stack.call("PUT", "/rpc/me", {"timezone": "Asia/Shanghai"}, token=token)[0] == 200
    _, agent = stack.call("POST", "/rpc/agents", {"name": "Mika"}, token=token)
    conv = agent["defaultConversationId"]
    status, turn = stack.call("POST", f"/rpc/conversations/{conv}/messages",
                              {"clientMessageId": "c1", "text": "我喜欢爬山"}, token=token)
    assert status == 200 and turn["run"]["kind"] == "plain"
    grant(stack, token, "memory-extraction", "memory:write")
    grant(stack, token, "memory-recall", "memory:read")

    _, jobs = stack.call("GET", "/rpc/automation-jobs", token=token)
    (job,) = jobs["items"]
    slot = t(job["nextRunAt"])
    assert job["isDefault"] and (slot.hour, slot.minute) == (2, 0)  # 10:00 in Asia/Shanghai
    summary = scan_at(stack, slot)
    assert summary["automationRuns"] >= 1

    _, memories = stack.call("GET", f"/rpc/agents/{agent['agentId']}/memories", token=token)
    assert [(m["content"], m["source"]) for m in memories["items"]] == [("我喜欢爬山", "automation")]
    _, after = stack.call("GET", f"/rpc/automation-jobs/{job['jobId']}", token=token)
    assert t(after["nextRunAt"]) == slot + timedelta(days=1) and after["lastRunStatus"] == "succeeded"
    _, runs = stack.call("GET", f"/rpc/automation-jobs/{job['jobId']}/runs", token=token)
    (run,) = runs["items"]
    (auto_conv,) = run["conversationIds"]
    _, visible = stack.call("GET", f"/rpc/conversations/{auto_conv}/messages", token=token)
    assert [m["role"] for m in visible["items"]] == ["assistant"]
    _, everything = stack.call("GET", f"/rpc/admin/conversations/{auto_conv}/messages", token=admin)
    assert [(m["role"], m["hiddenFromUser"], m["origin"]) for m in everything["items"]] == [
        ("user", True, "automation"), ("assistant", False, "automation")]
    assert stack.call("GET", f"/rpc/admin/conversations/{auto_conv}/messages", token=token)[0] == 403

    status, recall = stack.call("POST", f"/rpc/conversations/{conv}/messages",
                                {"clientMessageId": "c2", "text": "你还记得我喜欢什么吗"}, token=token)
    assert status == 200 and recall["run"]["kind"] == "tool" and recall["run"]["outcome"] == "succeeded"
    assert "我喜欢爬山" in recall["reply"]["text"]


def test_concurrent_first_profile_calls_create_one_default_job(stack):
    token = stack.token(user_id())
    barrier = threading.Barrier(8)

    def first_call(_: int) -> int:
        barrier.wait()
        return stack.call("PUT", "/rpc/me", {"timezone": "Europe/London"}, token=token)[0]

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(first_call, range(8)))
    assert statuses == [200] * 8
    _, jobs = stack.call("GET", "/rpc/automation-jobs", token=token)
    assert len(jobs["items"]) == 1 and jobs["items"][0]["isDefault"] is True


def test_overlapping_scans_run_a_slot_once(stack):
    token = stack.token(user_id())
    stack.call("PUT", "/rpc/me", {"timezone": "UTC"}, token=token)
    _, agent = stack.call("POST", "/rpc/agents", {"name": "Mika"}, token=token)
    stack.call("POST", f"/rpc/conversations/{agent['defaultConversationId']}/messages",
               {"clientMessageId": "c1", "text": "I like chess"}, token=token)
    grant(stack, token, "memory-extraction", "memory:write")
    _, jobs = stack.call("GET", "/rpc/automation-jobs", token=token)
    (job,) = jobs["items"]
    slot = t(job["nextRunAt"])
    barrier = threading.Barrier(4)

    def scan(_: int) -> dict:
        barrier.wait()
        return scan_at(stack, slot + timedelta(seconds=5))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(scan, range(4)))
    _, runs = stack.call("GET", f"/rpc/automation-jobs/{job['jobId']}/runs", token=token)
    assert [r["status"] for r in runs["items"]] == ["succeeded"]
    (auto_conv,) = runs["items"][0]["conversationIds"]
    _, visible = stack.call("GET", f"/rpc/conversations/{auto_conv}/messages", token=token)
    assert len(visible["items"]) == 1
    _, memories = stack.call("GET", f"/rpc/agents/{agent['agentId']}/memories", token=token)
    assert [m["content"] for m in memories["items"]] == ["I like chess"]
