"""Automation jobs through the handlers (moto): the default job, the API, and a scan that runs the agent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from skillcore.automation import store as automation_store
from skillcore.clock import to_api_time
from skillcore.db.dynamo import make_db
from skillcore.limits import store as limits_store
from skillcore.settings import Settings
from tests.support import ScanPath, invoke, load_event, load_function


class _Ctx:
    function_name = "scan"
    memory_limit_in_mb = "512"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:scan"
    aws_request_id = "scan-1"

    def get_remaining_time_in_millis(self):
        return 200_000


@pytest.fixture
def fns(aws):
    return load_function("RpcFunction"), load_function("ChatTurnFunction"), ScanPath()


def t(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def scan(fn, at: datetime):
    event = load_event("scan_scheduled.json")
    event["time"] = to_api_time(at)
    return fn.lambda_handler(event, _Ctx())


def jobs(rpc, user="user-alice"):
    _, page = invoke(rpc, load_event("rpc_list_automation_jobs.json", user=user))
    return page["items"]


def grant(rpc, skill, code, user="user-alice"):
    status, _ = invoke(rpc, load_event("rpc_patch_permission.json", user=user, body={
        "skillId": skill, "permissionCode": code, "scope": {"type": "user"}, "granted": True}))
    assert status == 200


def test_first_profile_creates_the_default_job_once(fns):
    rpc, _, _ = fns
    status, _ = invoke(rpc, load_event("rpc_put_me.json", body={"timezone": "Europe/London"}))
    assert status == 200
    invoke(rpc, load_event("rpc_put_me.json", body={"displayName": "again"}))
    (job,) = jobs(rpc)
    assert job["isDefault"] is True and job["title"] == "每日记忆整理" and job["scheduleType"] == "daily"
    assert job["localTime"] == "10:00" and job["timezone"] == "Europe/London" and "agentId" not in job
    assert job["config"]["tools"] == ["memory_write", "memory_forget"] and job["status"] == "active"
    next_run = t(job["nextRunAt"])
    assert next_run > datetime.now(UTC) and next_run.minute == 0 and next_run.hour in (9, 10)


def test_create_patch_pause_delete_and_validation(fns):
    rpc, _, _ = fns
    status, job = invoke(rpc, load_event("rpc_create_automation_job.json"))
    assert status == 201, job
    assert job["weekday"] == 7 and t(job["nextRunAt"]).weekday() == 6 and job["isDefault"] is False
    path = {"JOB_ID": job["jobId"]}
    status, patched = invoke(rpc, load_event("rpc_patch_automation_job.json", path_ids=path, body={"localTime": "07:15"}))
    assert status == 200 and patched["localTime"] == "07:15" and t(patched["nextRunAt"]).strftime("%H:%M") in ("07:15", "06:15")
    status, paused = invoke(rpc, load_event("rpc_patch_automation_job.json", path_ids=path))
    assert paused["status"] == "paused"
    status, got = invoke(rpc, load_event("rpc_get_automation_job.json", path_ids=path))
    assert got == paused
    status, _ = invoke(rpc, load_event("rpc_get_automation_job.json", user="user-bob", path_ids=path))
    assert status == 404
    bad = [
        ({"config": {"prompt": "x", "tools": ["rm_rf"]}}, 422, "unknown_tool"),
        ({"config": {"prompt": "", "tools": []}}, 422, "validation_error"),
        ({"config": {"prompt": "x", "tools": [], "model": "big"}}, 422, "validation_error"),
        ({"timezone": "Mars/Base"}, 422, "invalid_timezone"),
        ({"localTime": "24:00"}, 422, "validation_error"),
        ({"scheduleType": "hourly"}, 422, "validation_error"),
    ]
    base = {"title": "x", "scheduleType": "daily", "localTime": "09:00", "config": {"prompt": "p", "tools": []}}
    for change, status_code, code in bad:
        status, body = invoke(rpc, load_event("rpc_create_automation_job.json", body=base | change))
        assert (status, body["error"]["code"]) == (status_code, code), change
    for change, message in (({"weekday": 3}, "a daily schedule takes no weekday"),
                            ({"scheduleType": "weekly"}, "a weekly schedule needs a weekday (1 = Monday .. 7 = Sunday)")):
        status, body = invoke(rpc, load_event("rpc_create_automation_job.json", body=base | change))
        assert (status, body["error"]["code"]) == (422, "validation_error"), change
        assert body["error"]["details"]["errors"] == [{"path": "weekday", "message": message}]
    status, _ = invoke(rpc, load_event("rpc_delete_automation_job.json", path_ids=path))
    assert status == 204
    status, _ = invoke(rpc, load_event("rpc_get_automation_job.json", path_ids=path))
    assert status == 404


def test_scan_at_the_slot_extracts_memories_and_advances(fns):
    rpc, chat, scan_fn = fns
    invoke(rpc, load_event("rpc_put_me.json", body={"timezone": "Asia/Shanghai"}))
    _, agent = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Mika"}))
    conv = agent["defaultConversationId"]
    for i, text in enumerate(["我喜欢爬山", "今天天气不错", "记住我的生日是五月一日"]):
        status, _ = invoke(chat, load_event("chat_post_message.json", path_ids={"CONVERSATION_ID": conv},
                                             body={"clientMessageId": f"m{i}", "text": text}))
        assert status == 200
    (job,) = jobs(rpc)
    next_slot = t(job["nextRunAt"])
    grant(rpc, "memory-extraction", "memory:write")
    summary = scan(scan_fn, next_slot + timedelta(seconds=30))
    assert summary["automationRuns"] == 1
    (done,) = jobs(rpc)
    assert done["lastRunStatus"] == "succeeded" and t(done["nextRunAt"]) == next_slot + timedelta(days=1)
    assert t(done["lastRunAt"]) == (next_slot + timedelta(seconds=30)).replace(microsecond=0)
    _, memories = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": agent["agentId"]}))
    contents = sorted(m["content"] for m in memories["items"])
    assert contents == ["我喜欢爬山", "我的生日是五月一日"]
    assert all(m["source"] == "automation" for m in memories["items"])
    _, runs = invoke(rpc, load_event("rpc_list_automation_runs.json", path_ids={"JOB_ID": done["jobId"]}))
    assert [r["status"] for r in runs["items"]] == ["succeeded"]
    # The run record keeps its slot delay (slot to end: the scan came 30 s after the slot), internal to the
    # store (the runs view has the contract's fields only).
    assert "slotDelayMs" not in runs["items"][0]
    record = automation_store.get_run(make_db(Settings.from_env()), done["jobId"], next_slot)
    assert record is not None and record.finished_at is not None
    assert 30_000 <= record.slot_delay_ms < 60_000
    assert record.slot_delay_ms == int((record.finished_at - next_slot).total_seconds() * 1000)
    auto_conv = runs["items"][0]["conversationIds"][0]
    # The user sees only the visible output; the admin sees the hidden input too.
    _, visible = invoke(rpc, load_event("rpc_list_messages.json", path_ids={"CONVERSATION_ID": auto_conv}))
    assert [m["role"] for m in visible["items"]] == ["assistant"]
    assert visible["items"][0]["text"] == "记忆整理完成：保存 2 条，忘记 0 条。"
    status, admin = invoke(rpc, load_event("rpc_admin_messages.json", path_ids={"CONVERSATION_ID": auto_conv}, groups="[admin]"))
    assert status == 200
    assert [(m["role"], m["hiddenFromUser"], m["origin"]) for m in admin["items"]] == [
        ("user", True, "automation"), ("assistant", False, "automation")]
    status, _ = invoke(rpc, load_event("rpc_admin_messages.json", path_ids={"CONVERSATION_ID": auto_conv}))
    assert status == 403
    _, convs = invoke(rpc, load_event("rpc_list_conversations.json", query={"kind": "automation"}))
    assert convs["items"][0]["messageCount"] == 1 and convs["items"][0]["automationJobId"] == done["jobId"]
    # The same slot never runs twice, and the next chat's memory-recall finds the memory.
    assert scan(scan_fn, next_slot + timedelta(minutes=1))["automationRuns"] == 0
    grant(rpc, "memory-recall", "memory:read")
    _, reply = invoke(chat, load_event("chat_post_message.json", path_ids={"CONVERSATION_ID": conv},
                                       body={"clientMessageId": "r1", "text": "你还记得我喜欢什么吗"}))
    assert "我喜欢爬山" in reply["reply"]["text"] and reply["run"]["kind"] == "tool"


def test_a_run_that_starts_after_midnight_reads_the_days_of_its_slot(fns):
    """The window is the slot's day and the one before (automation/transcript.py), not the scan's: a slot run
    late, past the user's midnight, still reads yesterday's messages as a run on time would have."""
    rpc, chat, scan_fn = fns
    # A zone where it is now 11:00-22:59, so the next 10:00 slot is tomorrow and today's message is its yesterday.
    hour = datetime.now(UTC).hour
    offset = next(o for o in range(-12, 15) if 11 <= (hour + o) % 24 <= 22)
    timezone = f"Etc/GMT{-offset:+d}" if offset else "Etc/GMT"  # POSIX sign: Etc/GMT-8 is UTC+8
    invoke(rpc, load_event("rpc_put_me.json", body={"timezone": timezone}))
    _, agent = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Mika"}))
    status, _ = invoke(chat, load_event("chat_post_message.json", path_ids={"CONVERSATION_ID": agent["defaultConversationId"]},
                                         body={"clientMessageId": "m1", "text": "我喜欢爬山"}))
    assert status == 200
    (job,) = jobs(rpc)
    slot = t(job["nextRunAt"])
    assert (slot - datetime.now(UTC)) > timedelta(hours=11), (timezone, slot)
    grant(rpc, "memory-extraction", "memory:write")
    # 15 hours late: 01:00 the day after the slot, before the next slot; the message is two local days back
    assert scan(scan_fn, slot + timedelta(hours=15))["automationRuns"] == 1
    (done,) = jobs(rpc)
    assert done["lastRunStatus"] == "succeeded"
    _, memories = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": agent["agentId"]}))
    assert [m["content"] for m in memories["items"]] == ["我喜欢爬山"]


def test_missed_slots_run_once_and_paused_jobs_never(fns):
    rpc, chat, scan_fn = fns
    invoke(rpc, load_event("rpc_put_me.json", body={}))
    (job,) = jobs(rpc)
    slot = t(job["nextRunAt"])
    summary = scan(scan_fn, slot + timedelta(days=5, hours=1))
    assert summary["automationRuns"] == 1
    (after,) = jobs(rpc)
    assert t(after["nextRunAt"]) == slot + timedelta(days=6)
    _, runs = invoke(rpc, load_event("rpc_list_automation_runs.json", path_ids={"JOB_ID": job["jobId"]}))
    assert [r["scheduledSlot"] for r in runs["items"]] == [to_api_time(slot + timedelta(days=5))]
    invoke(rpc, load_event("rpc_patch_automation_job.json", path_ids={"JOB_ID": job["jobId"]}, body={"status": "paused"}))
    assert scan(scan_fn, slot + timedelta(days=30))["automationRuns"] == 0


def test_without_the_grant_the_run_is_skipped_and_audited(fns):
    rpc, chat, scan_fn = fns
    invoke(rpc, load_event("rpc_put_me.json", body={}))
    _, agent = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Mika"}))
    invoke(chat, load_event("chat_post_message.json", path_ids={"CONVERSATION_ID": agent["defaultConversationId"]},
                            body={"clientMessageId": "m0", "text": "我喜欢爬山"}))
    (job,) = jobs(rpc)
    slot = t(job["nextRunAt"])
    assert scan(scan_fn, slot + timedelta(seconds=30))["automationRuns"] == 1
    (skipped,) = jobs(rpc)
    assert skipped["lastRunStatus"] == "skipped" and t(skipped["nextRunAt"]) == slot + timedelta(days=1)
    _, runs = invoke(rpc, load_event("rpc_list_automation_runs.json", path_ids={"JOB_ID": job["jobId"]}))
    assert runs["items"][0]["status"] == "skipped" and runs["items"][0]["errorCode"] == "grant_missing"
    _, audit = invoke(rpc, load_event("rpc_list_audit_events.json"))
    assert (audit["items"][0]["action"], audit["items"][0]["decision"]) == ("automation.execute", "denied")
    _, memories = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": agent["agentId"]}))
    assert memories["items"] == []


def test_over_the_daily_model_budget_the_run_is_skipped_with_the_reason(fns):
    rpc, chat, scan_fn = fns
    invoke(rpc, load_event("rpc_put_me.json", body={"timezone": "Asia/Shanghai"}))
    _, agent = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Mika"}))
    invoke(chat, load_event("chat_post_message.json", path_ids={"CONVERSATION_ID": agent["defaultConversationId"]},
                            body={"clientMessageId": "m0", "text": "我喜欢爬山"}))
    grant(rpc, "memory-extraction", "memory:write")
    (job,) = jobs(rpc)
    slot = t(job["nextRunAt"])
    at = slot + timedelta(seconds=30)
    settings = Settings.from_env()
    limits_store.add(make_db(settings), "user-alice", settings.model_tokens_per_day, at)  # the run's day is spent
    assert scan(scan_fn, at)["automationRuns"] == 1
    (skipped,) = jobs(rpc)
    assert skipped["lastRunStatus"] == "skipped" and t(skipped["nextRunAt"]) == slot + timedelta(days=1)
    _, runs = invoke(rpc, load_event("rpc_list_automation_runs.json", path_ids={"JOB_ID": job["jobId"]}))
    assert runs["items"][0]["status"] == "skipped" and runs["items"][0]["errorCode"] == "budget_exhausted"
    _, audit = invoke(rpc, load_event("rpc_list_audit_events.json"))
    denied = next(e for e in audit["items"] if e["action"] == "automation.execute" and e["decision"] == "denied")
    assert denied["reason"] == "budget_exhausted"
    _, memories = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": agent["agentId"]}))
    assert memories["items"] == []  # the model was never asked


def test_a_tool_outside_the_allowlist_is_refused_and_audited(fns):
    rpc, chat, scan_fn = fns
    invoke(rpc, load_event("rpc_put_me.json", body={}))
    _, agent = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Mika"}))
    invoke(chat, load_event("chat_post_message.json", path_ids={"CONVERSATION_ID": agent["defaultConversationId"]},
                            body={"clientMessageId": "m0", "text": "I like green tea"}))
    grant(rpc, "memory-extraction", "memory:write")
    status, job = invoke(rpc, load_event("rpc_create_automation_job.json", body={
        "title": "t", "scheduleType": "daily", "localTime": "23:50", "timezone": "UTC",
        "config": {"prompt": "Save what I like.", "tools": ["memory_write", "agent-memory.search"]}}))
    assert status == 201
    scan(scan_fn, t(job["nextRunAt"]) + timedelta(seconds=1))
    _, audit = invoke(rpc, load_event("rpc_list_audit_events.json"))
    refused = [e for e in audit["items"] if e["reason"] == "tool_not_allowed"]
    assert refused and refused[0]["metadata"]["tools"] == ["agent-memory.search"]
    _, memories = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": agent["agentId"]}))
    assert [m["content"] for m in memories["items"]] == ["I like green tea"]


def test_forget_reaches_only_this_agents_memory_and_failed_runs_retry_in_the_slot(fns):
    from skillcore.model.port import ModelError

    rpc, chat, scan_fn = fns
    invoke(rpc, load_event("rpc_put_me.json", body={"timezone": "UTC"}))
    _, mika = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Mika"}))
    _, other = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Other"}))
    for agent in (mika, other):
        status, _ = invoke(rpc, load_event("rpc_create_memory.json", path_ids={"AGENT_ID": agent["agentId"]},
                                            body={"title": "coffee", "content": "我喜欢咖啡"}))
        assert status == 201
    invoke(chat, load_event("chat_post_message.json", path_ids={"CONVERSATION_ID": mika["defaultConversationId"]},
                            body={"clientMessageId": "f1", "text": "忘记我喜欢咖啡"}))
    grant(rpc, "memory-extraction", "memory:write")
    (job,) = jobs(rpc)
    slot = t(job["nextRunAt"])

    # The model is down for the first attempt: the run fails, keeps its error, and the slot is retried.
    model = scan_fn.automations._model
    real = model.converse
    calls = {"n": 0}

    def flaky(request):
        calls["n"] += 1
        if calls["n"] == 1:
            raise ModelError("throttled")
        return real(request)

    model.converse = flaky
    scan(scan_fn, slot + timedelta(seconds=10))
    (failed,) = jobs(rpc)
    assert failed["lastRunStatus"] == "failed" and t(failed["nextRunAt"]) == slot + timedelta(minutes=5, seconds=10)
    _, runs = invoke(rpc, load_event("rpc_list_automation_runs.json", path_ids={"JOB_ID": job["jobId"]}))
    assert runs["items"][0] | {"status": "failed", "errorCode": "transient_error", "attempts": 1} == runs["items"][0]
    scan(scan_fn, slot + timedelta(minutes=6))
    (done,) = jobs(rpc)
    assert done["lastRunStatus"] == "succeeded" and t(done["nextRunAt"]) == slot + timedelta(days=1)
    _, runs = invoke(rpc, load_event("rpc_list_automation_runs.json", path_ids={"JOB_ID": job["jobId"]}))
    assert len(runs["items"]) == 1 and runs["items"][0]["status"] == "succeeded" and runs["items"][0]["attempts"] == 2
    _, mine = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": mika["agentId"]}, query={"status": "forgotten"}))
    _, theirs = invoke(rpc, load_event("rpc_list_memories.json", path_ids={"AGENT_ID": other["agentId"]}))
    assert [m["content"] for m in mine["items"]] == ["我喜欢咖啡"]
    assert [m["content"] for m in theirs["items"]] == ["我喜欢咖啡"]  # the other agent's memory is untouched
