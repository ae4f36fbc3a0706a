"""Business metrics and log lines of the real handlers (moto): what each event emits, and what never leaks.

Everything the handlers print goes to stdout: the EMF documents (printed by @metrics.log_metrics) and,
with the logger's stream pointed at the captured stdout, every log line. Both are read back line by line.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from skillcore import faults
from skillcore.clock import to_api_time
from skillcore.model.port import ModelError
from skillcore.observability import logger, metrics
from tests.support import ScanPath, invoke, load_event, load_function

CANARY = "CANARY-7f3a9c"  # in every chat message, memory, note and prompt of the canary test


class _Ctx:
    function_name = "scan"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:scan"
    aws_request_id = "scan-1"

    def get_remaining_time_in_millis(self) -> int:
        return 200_000


class Output:
    """What the handlers printed, parsed: EMF documents from stdout, log records from the logger's formatter.

    Every line must be one JSON object. Log lines are taken by a second handler with the Powertools
    handler's own formatter, so they are exactly the lines Lambda would ship.
    """

    def __init__(self, capsys: pytest.CaptureFixture[str], logs: io.StringIO):
        self.slot_delays: list[float] = []
        self._capsys, self._logs = capsys, logs
        self.lines: list[str] = []

    def read(self) -> list[dict[str, Any]]:
        logged = self._logs.getvalue()
        self._logs.seek(0)
        self._logs.truncate()
        fresh = [line for line in (self._capsys.readouterr().out + logged).splitlines() if line.strip()]
        self.lines += fresh
        return [json.loads(line) for line in fresh]

    def events(self) -> list[tuple[str, dict[str, str]]]:
        """(metric, dimensions without service) of each EMF document printed since the last read."""
        found = []
        for doc in self.read():
            if "_aws" not in doc:
                continue
            (directive,) = doc["_aws"]["CloudWatchMetrics"]
            (metric,) = directive["Metrics"]
            full = directive["Dimensions"][0]
            assert full[0] == "service" and doc["service"]
            if metric["Name"] == "AutomationSlotDelay":  # a measurement per run, not an event count
                assert full == ["service"] and metric["Unit"] == "Milliseconds"
                assert all(isinstance(v, float) and v >= 0 for v in doc[metric["Name"]])
                self.slot_delays += doc[metric["Name"]]
                continue
            # Every document with a reason also declares its roll-up without it (what the alarms watch).
            expected = [full] + ([[d for d in full if d != "reason"]] if "reason" in full else [])
            assert directive["Dimensions"] == expected and metric["Unit"] == "Count"
            for _ in range(int(doc[metric["Name"]])):
                found.append((metric["Name"], {d: doc[d] for d in full[1:]}))
        return found

    def logs(self) -> list[dict[str, Any]]:
        return [doc for doc in self.read() if "_aws" not in doc]


def bag(events: list[tuple[str, dict[str, str]]]) -> list[tuple[str, dict[str, str]]]:
    """The events in a fixed order, for comparing what one request emitted regardless of order."""
    return sorted(events, key=repr)


@pytest.fixture
def out(aws, capsys, monkeypatch) -> Iterator[Output]:
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    faults.clear()
    log = logging.getLogger(logger.name)
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logger.registered_formatter)
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.DEBUG)  # the debug lines must be as clean as the rest
    metrics.flush_metrics()  # whatever earlier tests counted outside a handler is not this test's
    capsys.readouterr()
    yield Output(capsys, buffer)
    log.setLevel(level)
    log.removeHandler(handler)
    faults.clear()


@pytest.fixture
def fns(aws):
    return load_function("RpcFunction"), load_function("ChatTurnFunction"), ScanPath()


class World:
    def __init__(self, rpc, chat, scan_fn, user="user-metrics"):
        self.rpc, self.chat, self.scan_fn, self.user = rpc, chat, scan_fn, user

    def call(self, name: str, status: int = 200, **kwargs: Any) -> Any:
        code, body = invoke(self.rpc, load_event(name, user=self.user, **kwargs))
        assert code == status, body
        return body

    def agent(self) -> dict[str, Any]:
        return self.call("rpc_create_agent.json", 201, body={"name": "Mika"})

    def grant(self, skill: str, code: str, granted: bool = True) -> None:
        self.call("rpc_patch_permission.json", body={
            "skillId": skill, "permissionCode": code, "scope": {"type": "user"}, "granted": granted})

    def say(self, agent: dict[str, Any], text: str, cid: str) -> dict[str, Any]:
        code, body = invoke(self.chat, load_event(
            "chat_post_message.json", user=self.user,
            path_ids={"CONVERSATION_ID": agent["defaultConversationId"]}, body={"clientMessageId": cid, "text": text}))
        assert code == 200, body
        return body

    def reminder(self, agent: dict[str, Any], note: str = "run") -> datetime:
        job = self.call("rpc_create_background_job.json", 201, body={
            "skillId": "goal-check-in-reminder", "agentId": agent["agentId"], "note": note,
            "runAt": to_api_time(datetime.now(UTC) + timedelta(minutes=10))})
        return datetime.fromisoformat(job["nextAttemptAt"].replace("Z", "+00:00"))

    def automation_job(self, prompt: str) -> datetime:
        job = self.call("rpc_create_automation_job.json", 201, body={
            "title": "t", "scheduleType": "daily", "localTime": "23:50", "timezone": "UTC",
            "config": {"prompt": prompt, "tools": ["memory_write"]}})
        return datetime.fromisoformat(job["nextRunAt"].replace("Z", "+00:00"))

    def scan(self, at: datetime) -> dict[str, int]:
        event = load_event("scan_scheduled.json")
        event["time"] = to_api_time(at)
        return self.scan_fn.lambda_handler(event, _Ctx())


@pytest.fixture
def world(fns) -> World:
    return World(*fns)


def failing_model(world: World, code: str = "throttled") -> None:
    def converse(request: Any) -> Any:
        raise ModelError(code)

    world.chat.root.chat_model = type("Down", (), {"converse": staticmethod(converse)})()


# ---------------------------------------------------------------------------------------------- canary
def test_no_metric_and_no_log_line_holds_message_memory_note_or_prompt_text(world, out):
    world.call("rpc_put_me.json", body={"timezone": "UTC"})
    agent = world.agent()
    for skill, code in (("memory-recall", "memory:read"), ("memory-extraction", "memory:write"),
                        ("goal-check-in-reminder", "proactive_message:write")):
        world.grant(skill, code)
    world.call("rpc_create_memory.json", 201, path_ids={"AGENT_ID": agent["agentId"]},
               body={"title": f"t {CANARY}", "content": f"my cat is {CANARY}"})
    world.say(agent, f"I like {CANARY} tea", "c1")
    recalled = world.say(agent, f"/memory-recall {CANARY}", "c2")
    world.say(agent, f"记住我喜欢 {CANARY}", "c3")
    model = world.chat.root.chat_model
    failing_model(world)
    degraded = world.say(agent, f"and {CANARY}?", "c4")
    world.chat.root.chat_model = model
    world.say(agent, f"/goal run {CANARY}", "c5")
    at = world.reminder(agent, note=f"note {CANARY}")
    automation_at = world.automation_job(f"Save what I like. {CANARY}")
    world.scan(at + timedelta(seconds=1))
    world.scan(automation_at + timedelta(seconds=1))

    events = out.events()
    names = {name for name, _ in events}
    assert {"ChatTurn", "ToolCall", "BackgroundJob", "AutomationRun", "ModelDegraded"} <= names
    # The canary did travel through the system: into a reply, a delivered note, the agent's messages.
    assert CANARY in recalled["reply"]["text"] and degraded["run"]["outcome"] == "degraded"
    conversation = agent["defaultConversationId"]
    messages = world.call("rpc_list_messages.json", path_ids={"CONVERSATION_ID": conversation})
    assert any(CANARY in m["text"] and m["origin"] == "background" for m in messages["items"])
    assert world.call("rpc_list_automation_jobs.json")["items"][-1]["lastRunStatus"] == "succeeded"
    assert len(out.lines) > len(events)  # log lines were captured too, not only metrics
    leaked = [line for line in out.lines if CANARY.casefold() in line.casefold()]
    assert leaked == []


# ---------------------------------------------------------------------------------------------- chat turns
def test_each_chat_turn_emits_its_kind_and_outcome(world, out):
    agent = world.agent()
    world.say(agent, "hello there", "p1")
    assert out.events() == [("ChatTurn", {"kind": "plain", "outcome": "succeeded"})]
    world.say(agent, "/goal run a 10k", "w1")
    assert out.events() == [("ChatTurn", {"kind": "workflow", "outcome": "succeeded"})]
    world.say(agent, "/cancel", "w2")
    out.events()
    world.say(agent, "/plan", "d1")
    assert out.events() == [("ChatTurn", {"kind": "prompt", "outcome": "succeeded"})]
    world.say(agent, "/memory-recall cats", "r1")  # no memory:read grant yet
    assert bag(out.events()) == bag([("ChatTurn", {"kind": "tool", "outcome": "denied"}),
                                    ("ToolCall", {"outcome": "denied", "reason": "grant_missing"})])
    world.grant("memory-recall", "memory:read")
    world.say(agent, "/memory-recall cats", "r2")
    assert bag(out.events()) == bag([("ChatTurn", {"kind": "tool", "outcome": "succeeded"}),
                                    ("ToolCall", {"outcome": "succeeded", "reason": "allowed"})])
    faults.arm("tool.handler", 1, "timeout")
    world.say(agent, "/memory-recall cats", "r3")
    assert bag(out.events()) == bag([("ChatTurn", {"kind": "tool", "outcome": "failed"}),
                                    ("ToolCall", {"outcome": "timed_out", "reason": "timeout"})])
    # A repeated post is a replay, not a turn: nothing is counted.
    world.say(agent, "hello there", "p1")
    assert out.events() == []


def test_a_degraded_reply_counts_the_model_error(world, out):
    agent = world.agent()
    failing_model(world, "throttled")
    body = world.say(agent, "hello", "d1")
    assert body["run"]["outcome"] == "degraded"
    assert bag(out.events()) == bag([("ChatTurn", {"kind": "plain", "outcome": "degraded"}),
                                    ("ModelDegraded", {"reason": "throttled"})])


# ---------------------------------------------------------------------------------------------- background
def test_background_jobs_retried_failed_succeeded_and_recovered(world, out):
    agent = world.agent()
    world.grant("goal-check-in-reminder", "proactive_message:write")
    at = world.reminder(agent)
    faults.arm("background.before_side_effect", 1, "transient")
    world.scan(at + timedelta(seconds=1))
    assert out.events() == [("BackgroundJob", {"outcome": "retried", "reason": "transient_error"})]
    world.scan(at + timedelta(minutes=6))
    assert out.events() == [("BackgroundJob", {"outcome": "succeeded", "reason": "succeeded"})]

    # A worker that dies before the message: the lease expires, the job is recovered and retried.
    at = world.reminder(agent)
    faults.arm("background.before_side_effect", 1, "crash")
    with pytest.raises(faults.InjectedCrash):
        world.scan(at + timedelta(seconds=1))
    out.events()
    world.scan(at + timedelta(minutes=2, seconds=2))
    assert bag(out.events()) == bag([("BackgroundJob", {"outcome": "recovered", "reason": "lease_expired"}),
                                    ("BackgroundJob", {"outcome": "retried", "reason": "lease_expired"})])
    world.scan(at + timedelta(minutes=20))
    assert out.events() == [("BackgroundJob", {"outcome": "succeeded", "reason": "succeeded"})]

    # The grant revoked before the run: failed for good, with the policy's reason.
    at = world.reminder(agent)
    world.grant("goal-check-in-reminder", "proactive_message:write", granted=False)
    world.scan(at + timedelta(seconds=1))
    assert out.events() == [("BackgroundJob", {"outcome": "failed", "reason": "grant_missing"})]


def test_background_job_failed_after_its_last_attempt(world, out):
    agent = world.agent()
    world.grant("goal-check-in-reminder", "proactive_message:write")
    at = world.reminder(agent)
    faults.arm("background.before_side_effect", 3, "transient")
    for minutes in (0, 6, 20):
        world.scan(at + timedelta(minutes=minutes, seconds=1))
    assert out.events() == [("BackgroundJob", {"outcome": "retried", "reason": "transient_error"})] * 2 + [
        ("BackgroundJob", {"outcome": "failed", "reason": "transient_error"})]


# ---------------------------------------------------------------------------------------------- automation
def test_automation_runs_skipped_failed_and_succeeded(world, out):
    agent = world.agent()
    world.say(agent, "I like green tea", "m1")
    out.events()
    at = world.automation_job("Save what I like.")
    world.scan(at + timedelta(seconds=1))
    assert out.events() == [("AutomationRun", {"outcome": "skipped", "reason": "grant_missing"})]

    world.grant("memory-extraction", "memory:write")
    at = at + timedelta(days=1)
    model = world.scan_fn.automations._model
    real = model.converse
    model.converse = lambda request: (_ for _ in ()).throw(ModelError("timeout"))
    world.scan(at + timedelta(seconds=1))
    assert out.events() == [("AutomationRun", {"outcome": "failed", "reason": "transient_error"})]
    model.converse = real
    world.scan(at + timedelta(minutes=6))
    events = out.events()
    assert ("AutomationRun", {"outcome": "succeeded", "reason": "succeeded"}) in events
    assert ("ToolCall", {"outcome": "succeeded", "reason": "allowed"}) in events


def test_logs_carry_job_and_skill_ids_while_a_job_runs_and_the_scan_correlation_id(world, out):
    agent = world.agent()
    world.grant("goal-check-in-reminder", "proactive_message:write")
    at = world.reminder(agent)
    faults.arm("background.before_side_effect", 1, "transient")
    world.scan(at + timedelta(seconds=1))
    logs = out.logs()
    failed = [doc for doc in logs if doc.get("message") == "background attempt failed"]
    assert failed and failed[0]["skill_id"] == "goal-check-in-reminder" and failed[0]["job_id"]
    # The scan only dispatches now: its last line is the dispatch, carrying the scheduled event's id.
    finished = [doc for doc in logs if doc.get("message") == "scan dispatched"]
    assert finished and "job_id" not in finished[0] and "skill_id" not in finished[0]
    assert finished[0]["correlation_id"] == load_event("scan_scheduled.json")["id"]
