"""Background jobs through the handlers (moto): the API, the scan, re-checks, retries, faults, idempotency.

Concurrency is not tested here (moto is not a faithful referee of conditional writes under contention);
the concurrent scans and the chaos test run against DynamoDB Local in tests/stack/.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from skillcore import faults
from skillcore.clock import to_api_time
from tests.support import ScanPath, invoke, load_event, load_function

T0 = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)


@pytest.fixture
def fns(aws, monkeypatch):
    faults.clear()
    rpc, scan = load_function("RpcFunction"), ScanPath()
    yield rpc, scan
    faults.clear()


class Api:
    def __init__(self, rpc, scan, user="user-alice"):
        self.rpc, self.scan_fn, self.user = rpc, scan, user

    def agent(self, name="Mika"):
        status, agent = invoke(self.rpc, load_event("rpc_create_agent.json", user=self.user, body={"name": name}))
        assert status == 201
        return agent

    def grant(self, granted=True, skill="goal-check-in-reminder", code="proactive_message:write"):
        status, body = invoke(self.rpc, load_event("rpc_patch_permission.json", user=self.user, body={
            "skillId": skill, "permissionCode": code, "scope": {"type": "user"}, "granted": granted}))
        assert status == 200, body

    def enable(self, enabled, skill="goal-check-in-reminder"):
        status, _ = invoke(self.rpc, load_event("rpc_patch_skill.json", user=self.user,
                                               path_ids={"goal-setting": skill}, body={"enabled": enabled}))
        assert status == 200

    def create(self, agent_id, run_at, note="每天跑步 30 分钟", **extra):
        body = {"skillId": "goal-check-in-reminder", "agentId": agent_id, "runAt": run_at, "note": note, **extra}
        return invoke(self.rpc, load_event("rpc_create_background_job.json", user=self.user, body=body))

    def jobs(self, status=None):
        query = {"status": status} if status else {}
        _, page = invoke(self.rpc, load_event("rpc_list_background_jobs.json", user=self.user, query=query))
        return page["items"]

    def cancel(self, job_id):
        return invoke(self.rpc, load_event("rpc_cancel_background_job.json", user=self.user, path_ids={"JOB_ID": job_id}))

    def scan(self, at):
        event = load_event("scan_scheduled.json")
        event["time"] = to_api_time(at)
        return self.scan_fn.lambda_handler(event, _Ctx())

    def messages(self, conversation_id):
        _, page = invoke(self.rpc, load_event("rpc_list_messages.json", user=self.user, path_ids={"CONVERSATION_ID": conversation_id}))
        return page["items"]

    def audit(self):
        _, page = invoke(self.rpc, load_event("rpc_list_audit_events.json", user=self.user))
        return page["items"]


class _Ctx:
    function_name = "scan"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:scan"
    aws_request_id = "scan-1"

    def get_remaining_time_in_millis(self):
        return 200_000


def future(minutes=10):
    return to_api_time(datetime.now(UTC) + timedelta(minutes=minutes))


def run_time(job):
    return datetime.fromisoformat(job["nextAttemptAt"].replace("Z", "+00:00"))


@pytest.fixture
def api(fns):
    return Api(*fns)


def test_reminder_arrives_once_and_job_succeeds(api):
    agent = api.agent()
    api.grant()
    status, job = api.create(agent["agentId"], future())
    assert status == 201, job
    assert job["status"] == "scheduled" and job["conversationId"] == agent["defaultConversationId"]
    assert job["attempts"] == 0 and job["maxAttempts"] == 3 and job["note"] == "每天跑步 30 分钟"
    early = api.scan(run_time(job) - timedelta(seconds=1))
    assert early["claimed"] == 0
    summary = api.scan(run_time(job) + timedelta(seconds=1))
    assert summary | {"claimed": 1, "succeeded": 1} == summary
    (done,) = api.jobs()
    assert done["status"] == "succeeded" and done["attempts"] == 1 and done["completedAt"]
    (message,) = api.messages(agent["defaultConversationId"])
    assert message["messageId"] == job["jobId"] and message["origin"] == "background"
    assert message["role"] == "assistant" and message["agentId"] == agent["agentId"]
    assert message["text"] == "我们约定的目标复盘时间到了。\n你当时写下的关注点是：「每天跑步 30 分钟」\n现在进展到哪里了？"
    assert api.scan(run_time(job) + timedelta(minutes=10))["claimed"] == 0
    _, conv = invoke(api.rpc, load_event("rpc_list_conversations.json"))
    assert conv["items"][0]["messageCount"] == 1 and conv["items"][0]["lastMessagePreview"].startswith("我们约定")
    decisions = [(e["action"], e["decision"]) for e in api.audit()]
    assert decisions == [("background.execute", "succeeded"), ("background.execute", "allowed"),
                         ("background.create", "allowed"), ("permission.grant", "succeeded")]


def test_default_prompt_without_note(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future(), note="")
    api.scan(run_time(job) + timedelta(seconds=1))
    (message,) = api.messages(agent["defaultConversationId"])
    assert message["text"].startswith("我们约定的目标复盘时间到了。\n") and "「" not in message["text"]


def test_create_rules(api):
    agent = api.agent()
    status, body = api.create(agent["agentId"], future())
    assert status == 422 and body["error"]["code"] == "permission_required"
    # The refusal names the grant to ask for, in the fields PATCH /rpc/skills/permissions takes.
    assert body["error"]["details"] == {"skillId": "goal-check-in-reminder", "permissionCode": "proactive_message:write",
                                        "missingPermissions": ["proactive_message:write"]}
    api.grant()
    status, body = api.create(agent["agentId"], to_api_time(datetime.now(UTC) + timedelta(seconds=30)))
    assert status == 422 and body["error"]["code"] == "run_at_out_of_range"
    status, body = api.create(agent["agentId"], to_api_time(datetime.now(UTC) + timedelta(days=366)))
    assert status == 422 and body["error"]["code"] == "run_at_out_of_range"
    status, body = api.create(agent["agentId"], "2027-01-01T10:00:00")
    assert status == 422 and body["error"]["code"] == "validation_error"
    status, body = api.create(agent["agentId"], future(), conversationId=agent["defaultConversationId"])
    assert status == 422 and body["error"]["code"] == "validation_error"
    status, body = api.create(agent["agentId"], future(), note="x" * 501)
    assert status == 422
    status, body = api.create("someone-elses", future())
    assert status == 404 and body["error"]["code"] == "agent_not_found"
    api.enable(False)
    status, body = api.create(agent["agentId"], future())
    assert status == 422 and body["error"]["code"] == "skill_disabled"
    denied = [e for e in api.audit() if e["action"] == "background.create"]
    assert [e["reason"] for e in denied] == ["skill_disabled", "run_at_out_of_range", "run_at_out_of_range", "grant_missing"]
    assert api.jobs() == []


def test_cancel_before_run_sends_nothing(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future())
    status, cancelled = api.cancel(job["jobId"])
    assert status == 200 and cancelled["status"] == "cancelled"
    assert api.scan(run_time(job) + timedelta(minutes=1))["claimed"] == 0
    assert api.messages(agent["defaultConversationId"]) == []
    status, body = api.cancel(job["jobId"])
    assert status == 409 and body["error"]["code"] == "job_not_cancellable"
    other = Api(api.rpc, api.scan_fn, user="user-bob")
    status, _ = other.cancel(job["jobId"])
    assert status == 404
    assert api.audit()[0]["action"] == "background.cancel" and api.audit()[0]["decision"] == "cancelled"


def test_finished_job_cannot_be_cancelled(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future())
    api.scan(run_time(job) + timedelta(seconds=1))
    status, body = api.cancel(job["jobId"])
    assert status == 409 and body["error"]["details"]["status"] == "succeeded"


def test_revoked_grant_fails_permanently_without_message(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future())
    api.grant(granted=False)
    summary = api.scan(run_time(job) + timedelta(seconds=1))
    assert summary["failed"] == 1 and summary["retried"] == 0
    (failed,) = api.jobs()
    assert failed["status"] == "failed" and failed["lastErrorCode"] == "grant_missing" and failed["attempts"] == 1
    assert api.messages(agent["defaultConversationId"]) == []
    assert api.audit()[0]["decision"] == "denied" and api.audit()[0]["action"] == "background.execute"


def test_disabled_skill_is_refused_before_execution(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future())
    api.enable(False)
    api.scan(run_time(job) + timedelta(seconds=1))
    (failed,) = api.jobs()
    assert failed["status"] == "failed" and failed["lastErrorCode"] == "skill_disabled"
    assert api.messages(agent["defaultConversationId"]) == []


def test_transient_error_retries_with_backoff_then_succeeds(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future())
    faults.arm("background.before_side_effect", 1, "transient")
    t1 = run_time(job) + timedelta(seconds=1)
    assert api.scan(t1)["retried"] == 1
    (retrying,) = api.jobs()
    assert retrying["status"] == "retrying" and retrying["attempts"] == 1
    assert retrying["lastErrorCode"] == "transient_error"
    assert run_time(retrying) == t1.replace(microsecond=0) + timedelta(minutes=5)
    assert api.scan(t1 + timedelta(minutes=4))["claimed"] == 0
    assert api.scan(t1 + timedelta(minutes=5, seconds=1))["succeeded"] == 1
    (done,) = api.jobs()
    assert done["status"] == "succeeded" and done["attempts"] == 2
    assert len(api.messages(agent["defaultConversationId"])) == 1


def test_three_transient_failures_fail_the_job(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future())
    faults.arm("background.before_side_effect", 3, "transient")
    t = run_time(job) + timedelta(seconds=1)
    for delay in (0, 5, 10):
        t += timedelta(minutes=delay, seconds=1)
        api.scan(t)
    (failed,) = api.jobs()
    assert failed["status"] == "failed" and failed["attempts"] == 3 and failed["lastErrorCode"] == "transient_error"
    assert api.messages(agent["defaultConversationId"]) == []


def test_crash_after_message_is_repaired_without_a_second_message(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future())
    faults.arm("background.after_message", 1, "crash")
    t = run_time(job) + timedelta(seconds=1)
    with pytest.raises(faults.InjectedCrash):
        api.scan(t)
    (running,) = api.jobs()
    assert running["status"] == "running"
    _, conv = invoke(api.rpc, load_event("rpc_list_conversations.json"))
    # The message and its count are written together; the summary (last message) is not yet.
    assert conv["items"][0]["messageCount"] == 1 and conv["items"][0]["lastMessageAt"] is None
    assert api.scan(t + timedelta(minutes=1))["recovered"] == 0  # lease still valid
    recovered = api.scan(t + timedelta(minutes=2, seconds=1))
    assert recovered["recovered"] == 1 and recovered["succeeded"] == 1
    (done,) = api.jobs()
    assert done["status"] == "succeeded" and done["attempts"] == 1
    assert len(api.messages(agent["defaultConversationId"])) == 1
    _, conv = invoke(api.rpc, load_event("rpc_list_conversations.json"))
    assert conv["items"][0]["messageCount"] == 1 and conv["items"][0]["lastMessagePreview"].startswith("我们约定")
    _, agents = invoke(api.rpc, load_event("rpc_list_agents.json"))
    assert agents["items"][0]["lastReplyAt"] == conv["items"][0]["lastMessageAt"]


def test_list_filters_and_orders_newest_first(api):
    agent = api.agent()
    api.grant()
    ids = [api.create(agent["agentId"], future(10 + i))[1]["jobId"] for i in range(3)]
    api.cancel(ids[0])
    assert [j["jobId"] for j in api.jobs()] == ids[::-1]
    assert [j["jobId"] for j in api.jobs("scheduled")] == ids[:0:-1]
    assert [j["jobId"] for j in api.jobs("cancelled")] == ids[:1]


def test_crash_before_the_message_is_retried_after_the_lease(api):
    agent = api.agent()
    api.grant()
    _, job = api.create(agent["agentId"], future())
    faults.arm("background.before_side_effect", 1, "crash")
    t = run_time(job) + timedelta(seconds=1)
    with pytest.raises(faults.InjectedCrash):
        api.scan(t)
    recovered = api.scan(t + timedelta(minutes=2, seconds=1))
    assert recovered["recovered"] == 1 and recovered["retried"] == 1
    (retrying,) = api.jobs()
    assert retrying["status"] == "retrying" and retrying["lastErrorCode"] == "lease_expired"
    api.scan(run_time(retrying) + timedelta(seconds=1))
    (done,) = api.jobs()
    assert done["status"] == "succeeded" and done["attempts"] == 2
    assert len(api.messages(agent["defaultConversationId"])) == 1
