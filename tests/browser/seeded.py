"""A user with something in every section of the page, made through the public API (and the local scan), for the
tests that visit every section with data: one language (tests/browser/test_one_language.py) and accessibility
(tests/browser/test_accessibility.py).

What each section then shows: a capability in the skills catalog's terms (every built-in skill); grants at both
scopes (permissions); a scheduled and a cancelled reminder (reminders); the default job with a skipped run
(`grant_missing`) and a weekly job (automation); a capability whose steps use a built-in skill, and an open draft
(capabilities); a hosted endpoint with its tools and a pending approval (hosted); a memory (memories); a chat with a
grant notice, a recall, a workflow and a reminder's message (agents); runs and audit events of all of them
(activity). The user's texts are Chinese or English, as the test asks: user content is not the page's language.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from skillcore.clock import to_api_time
from tests.hosted_server import HostedServer
from tests.local_stack import StackClient

SECTIONS = ["skills", "permissions", "reminders", "automation", "capabilities", "hosted", "memories", "agents",
            "activity"]

HOSTED_GRANT = {"skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke", "scope": {"type": "user"}}


@dataclass(frozen=True)
class Seeded:
    user: str
    token: str
    agent: dict[str, Any]
    endpoint: dict[str, Any]
    capability: dict[str, Any]


def _api(stack: StackClient, token: str):  # type: ignore[no-untyped-def]
    def call(method: str, path: str, body: Any = None, status: int = 200) -> Any:
        got, payload = stack.call(method, path, body, token=token)
        assert got == status, (method, path, got, payload)
        return payload

    return call


def _scan(stack: StackClient, at: datetime) -> None:
    status, body = stack.call("POST", "/_local/scan", {"time": to_api_time(at)})
    assert status == 200, body


def seed(stack: StackClient, user: str, hosted: HostedServer, *, zh: bool = True) -> Seeded:
    """Everything for `user` (its profile in Asia/Shanghai); the user's own texts in Chinese (`zh`) or English."""
    token = stack.token(user)
    call = _api(stack, token)
    words = _ZH if zh else _EN
    call("PUT", "/rpc/me", {"timezone": "Asia/Shanghai", "displayName": words["name"]})
    agent = call("POST", "/rpc/agents", {"name": "Mika", "persona": words["persona"]}, status=201)
    other = call("POST", "/rpc/agents", {"name": "Nora"}, status=201)
    conversation = agent["defaultConversationId"]

    def say(client_id: str, text: str) -> Any:
        return call("POST", f"/rpc/conversations/{conversation}/messages", {"clientMessageId": client_id, "text": text})

    # A memory, then a recall without the grant (the grant notice), the grants at both scopes, and a recall.
    call("POST", f"/rpc/agents/{agent['agentId']}/memories", {"title": words["memoryTitle"],
                                                              "content": words["memory"]}, status=201)
    say("s1", words["hello"])
    say("s2", words["recall"])
    call("PATCH", "/rpc/skills/permissions", {"skillId": "memory-recall", "permissionCode": "memory:read",
                                              "scope": {"type": "user"}, "granted": True})
    call("PATCH", "/rpc/skills/permissions", {"skillId": "memory-context", "permissionCode": "memory:read",
                                              "scope": {"type": "agent", "agentId": other["agentId"]},
                                              "granted": True})
    say("s3", words["recall"])
    say("s4", "/goal " + words["goal"])
    say("s5", words["deadline"])
    say("s6", words["yes"])

    # Reminders: one scheduled, one delivered by a scan, one cancelled.
    call("PATCH", "/rpc/skills/permissions", {"skillId": "goal-check-in-reminder",
                                              "permissionCode": "proactive_message:write",
                                              "scope": {"type": "user"}, "granted": True})
    now = datetime.now(UTC)
    for minutes, note in ((60 * 24 * 3, words["note"]), (5, words["note"]), (60 * 24 * 5, "")):
        job = call("POST", "/rpc/skills/background-jobs", {"skillId": "goal-check-in-reminder",
                                                           "agentId": agent["agentId"],
                                                           "runAt": to_api_time(now + timedelta(minutes=minutes)),
                                                           "note": note}, status=201)
        if note == "":
            call("POST", f"/rpc/skills/background-jobs/{job['jobId']}/cancel")
    _scan(stack, now + timedelta(minutes=6))

    # Automation: the default job skipped at its slot (no memory:write), and a weekly job of the user's.
    (default,) = [j for j in call("GET", "/rpc/automation-jobs")["items"] if j["isDefault"]]
    _scan(stack, datetime.fromisoformat(default["nextRunAt"].replace("Z", "+00:00")) + timedelta(seconds=1))
    call("POST", "/rpc/automation-jobs", {"title": words["jobTitle"], "scheduleType": "weekly", "localTime": "21:30",
                                          "weekday": 7, "config": {"prompt": words["jobPrompt"],
                                                                   "tools": ["memory_write"]}}, status=201)

    # Capabilities: one whose steps use built-in skills, and an open draft.
    capability = call("POST", "/rpc/user-capabilities", {
        "name": "weekly_review", "displayName": words["capName"], "whenToUse": [words["capWhen"]],
        "workflow": {"objective": words["capObjective"],
                     "steps": [{"kind": "platformCapability", "capabilityId": "memory-recall",
                                "instruction": words["capStep"]},
                               {"kind": "platformCapability", "capabilityId": "daily-plan",
                                "instruction": words["capStep2"]}],
                     "completionCriteria": words["capDone"]},
        "platformCapabilityIds": ["memory-recall", "daily-plan"]}, status=201)
    call("POST", "/rpc/user-capability-drafts", {"description": words["draft"]}, status=201)

    # Hosted: an endpoint with its two tools, a call without approval, and a call waiting for one.
    endpoint = call("POST", "/rpc/hosted-endpoints", {"name": "test_flow", "displayName": words["flow"],
                                                      "url": hosted.url()}, status=201)
    call("PATCH", "/rpc/skills/permissions", {**HOSTED_GRANT, "granted": True})
    call("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}",
         {"expectedVersion": 1, "tools": [{"name": "add", "requiresApproval": False}]})
    call("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/calls",
         {"toolName": "add", "arguments": {"a": 2, "b": 3}, "clientCallId": "seed-add"})
    call("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/calls",
         {"toolName": "echo", "arguments": {"text": words["echo"]}, "clientCallId": "seed-echo"}, status=409)
    return Seeded(user=user, token=token, agent=agent, endpoint=endpoint, capability=capability)


_ZH = {
    "name": "小林", "persona": "一个温和的朋友", "memoryTitle": "爱好", "memory": "我喜欢爬山",
    "hello": "你好，今天有点累", "recall": "你还记得我喜欢什么吗", "goal": "跑一次十公里", "deadline": "这个月底",
    "yes": "是", "note": "跑步", "jobTitle": "周日晚间回顾", "jobPrompt": "回顾本周的对话，记下重要的事。",
    "capName": "周复盘", "capWhen": "每周复盘", "capObjective": "回顾这一周的目标进展", "capStep": "找出上周的目标",
    "capStep2": "列出本周三件重点", "capDone": "列出下周三件事", "draft": "每周日帮我回顾目标并列出下周重点",
    "flow": "测试流程", "echo": "你好",
}
_EN = {
    "name": "Lin", "persona": "a calm friend", "memoryTitle": "hobby", "memory": "I like hiking",
    "hello": "Hello, a bit tired today", "recall": "do you remember what I like", "goal": "run ten kilometres",
    "deadline": "the end of this month", "yes": "yes", "note": "running", "jobTitle": "Sunday evening review",
    "jobPrompt": "Look back at this week's chats and keep what matters.", "capName": "Weekly review",
    "capWhen": "weekly review", "capObjective": "Look back at the week's goals", "capStep": "Find last week's goals",
    "capStep2": "List three priorities for this week", "capDone": "Three things for next week are listed",
    "draft": "Every Sunday help me review my goals and list next week's priorities", "flow": "Test flow",
    "echo": "hello",
}
