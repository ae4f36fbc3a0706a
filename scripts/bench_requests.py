"""Section 2: DynamoDB requests per operation.

The handlers are loaded in-process (tests.support.load_function) against DynamoDB Local, and invoked with
the events of events/*.json (ids substituted). Every call on the handler modules' `db.client` is counted
by botocore's `before-call` event, with its operation name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

from scripts.bench_common import (
    Report,
    RequestCounter,
    SharedDynamo,
    describe_operations,
    env_scope,
    plain_operations,
)

SECTION = "requests"
USER = "bench-alice"
# Targets of an operation's own requests; the per-user limit checks (the Limits table: one rate take on a
# limited route, a reserve and a settle on a model-backed one) are counted and targeted on their own line.
PLAIN_TARGET = 6
RECALL_TARGET = 10
LIMITS = "(Limits)"
LIMIT_CHECKS_TARGET = 3  # a model-backed request: take, reserve, settle
MEMORIES = 20

MEMORY_SEEDS = [
    ("Hobby", "我喜欢爬山，尤其是秋天的香山。"),
    ("Pet", "我养了一只叫豆豆的猫。"),
    ("Sister", "My sister Ana lives in Lisbon and teaches piano."),
    ("Food", "我喜欢吃四川火锅，但是不太能吃辣。"),
    ("Work", "I work as a nurse on night shifts, Tuesday to Friday."),
    ("Book", "Favourite book: The Left Hand of Darkness."),
    ("Running", "每天早上跑步 5 公里，周末去公园跑 10 公里。"),
    ("Coffee", "I like my coffee black, no sugar, and tea in the afternoon."),
    ("Music", "最近在听坂本龙一的钢琴曲。"),
    ("Travel", "Planning a trip to Kyoto in April to see the cherry blossoms."),
    ("Birthday", "生日是十月十二日，喜欢安静地过。"),
    ("Allergy", "Allergic to peanuts; carries an epinephrine pen."),
    ("Language", "正在学西班牙语，每周上两次课。"),
    ("Goal", "Wants to run a half marathon before the end of the year."),
    ("Plant", "阳台上种了番茄和罗勒。"),
    ("Movie", "Likes old Hong Kong movies, 王家卫 especially."),
    ("Sleep", "最近睡得不好，晚上十二点以后才睡。"),
    ("Friend", "Best friend Tom moved to Berlin last year."),
    ("Weekend", "周末喜欢去咖啡馆看书。"),
    ("Game", "Plays chess online in the evenings, rated about 1500."),
]


@dataclass
class Row:
    label: str
    status: int
    ops: list[str]
    target: int | None = None
    note: str = ""


class Driver:
    def __init__(self, counter: RequestCounter, rows: list[Row]):
        self.counter = counter
        self.rows = rows

    def call(
        self, label: str, module: ModuleType, event: dict[str, Any], *, expect: int | tuple[int, ...] = (200, 201),
        target: int | None = None, note: str = "", record: bool = True,
    ) -> tuple[int, Any]:
        from tests.support import FakeContext

        mark = self.counter.mark()
        response = module.lambda_handler(event, FakeContext())
        ops = self.counter.since(mark)
        status = int(response["statusCode"])
        body = json.loads(response["body"]) if response.get("body") else None
        expected = (expect,) if isinstance(expect, int) else expect
        if status not in expected:
            note = (note + "; " if note else "") + f"UNEXPECTED STATUS (wanted {expected}): {json.dumps(body)[:160]}"
        if record:
            self.rows.append(Row(label, status, ops, target, note))
        return status, body


def scenario(drive: Driver, rpc: ModuleType, chat: ModuleType, scan: ModuleType) -> dict[str, Any]:
    """One user's life through the handlers; every recorded call becomes a row of the report."""
    from tests.support import load_event

    def ev(name: str, **kwargs: Any) -> dict[str, Any]:
        return load_event(name, user=kwargs.pop("user", USER), **kwargs)

    def say(label: str, conversation: str, text: str, cid: str, **kwargs: Any) -> dict[str, Any]:
        _, body = drive.call(label, chat, ev("chat_post_message.json", path_ids={"CONVERSATION_ID": conversation},
                                             body={"clientMessageId": cid, "text": text}), **kwargs)
        return body or {}

    facts: dict[str, Any] = {}
    drive.call("GET /rpc/health (no token)", rpc, load_event("rpc_health.json", user=None))
    drive.call("PUT /rpc/me (first)", rpc, ev("rpc_put_me.json"))
    drive.call("PUT /rpc/me (update)", rpc, ev("rpc_put_me.json", body={"timezone": "Europe/Lisbon", "displayName": "Alice"}))
    drive.call("GET /rpc/me", rpc, ev("rpc_get_me.json"))
    _, mika = drive.call("POST /rpc/agents", rpc, ev("rpc_create_agent.json"))
    _, other = drive.call("POST /rpc/agents (second)", rpc, ev("rpc_create_agent.json", body={"name": "Kai", "persona": "Direct."}))
    drive.call("GET /rpc/agents", rpc, ev("rpc_list_agents.json"))
    conv, conv2 = mika["defaultConversationId"], other["defaultConversationId"]

    # Plain turns: a conversation with some history (the model context read has something to read).
    plain = [say(f"chat turn: plain #{i + 1}", conv, f"Hello there, how was your day? ({i + 1})", f"plain-{i}",
                 target=PLAIN_TARGET) for i in range(5)]
    facts["plain_kinds"] = {b.get("run", {}).get("kind") for b in plain}
    say("chat turn: replay of plain #5 (same clientMessageId)", conv, "Hello there, how was your day? (5)", "plain-4")

    # Workflow turns: goal-setting from start to summary.
    steps = [("/goal", "start"), ("Read 12 books", "goal"), ("2027-12-31", "deadline"), ("yes", "confirm -> done")]
    facts["workflow_kinds"] = [
        say(f"chat turn: workflow ({what})", conv2, text, f"wf-{i}").get("run", {}).get("kind")
        for i, (text, what) in enumerate(steps)
    ]

    drive.call("GET /rpc/conversations", rpc, ev("rpc_list_conversations.json"))
    drive.call("GET /rpc/conversations/{id}/messages", rpc, ev("rpc_list_messages.json", path_ids={"CONVERSATION_ID": conv}))
    drive.call("GET /rpc/skills", rpc, ev("rpc_list_skills.json"))
    drive.call("PATCH /rpc/skills/{skillId} (disable)", rpc, ev("rpc_patch_skill.json"))
    drive.call("PATCH /rpc/skills/{skillId} (enable)", rpc, ev("rpc_patch_skill.json", body={"enabled": True}))
    drive.call("GET /rpc/skills/runs", rpc, ev("rpc_list_runs.json"))

    # 20 memories for Mika; the first recall turn comes before any grant (denied).
    memory_ids = []
    for i in range(MEMORIES):
        title, content = MEMORY_SEEDS[i % len(MEMORY_SEEDS)]
        _, memory = drive.call(
            "POST /rpc/agents/{id}/memories", rpc,
            ev("rpc_create_memory.json", path_ids={"AGENT_ID": mika["agentId"]},
               body={"title": title, "content": content, "importance": 1 + i % 5}),
            record=i == 0,
        )
        memory_ids.append(memory["memoryId"])
    drive.call("GET /rpc/agents/{id}/memories", rpc, ev("rpc_list_memories.json", path_ids={"AGENT_ID": mika["agentId"]}))
    denied = say("chat turn: memory-recall, no grant (denied)", conv, "你还记得我喜欢什么吗", "recall-denied")
    facts["denied"] = denied.get("run", {}).get("outcome")

    drive.call("PATCH /rpc/skills/permissions (grant memory-recall)", rpc, ev("rpc_patch_permission.json"))
    drive.call("GET /rpc/skills/permissions", rpc, ev("rpc_list_permissions.json"))
    recall = say(f"chat turn: memory-recall, granted, {MEMORIES} memories (zh)", conv, "你还记得我喜欢什么吗", "recall-1",
                 target=RECALL_TARGET)
    recall_en = say(f"chat turn: memory-recall, granted, {MEMORIES} memories (en)", conv,
                    "Do you remember where my sister lives?", "recall-2", target=RECALL_TARGET)
    facts["recall"] = [(b.get("run", {}).get("outcome"), b.get("run", {}).get("memoriesUsed")) for b in (recall, recall_en)]
    say("chat turn: plain, memory-recall granted", conv, "Good evening!", "plain-after-grant", target=PLAIN_TARGET)

    # memory-context granted too: a plain turn reads the agent's memories (informational).
    drive.call("PATCH /rpc/skills/permissions (grant memory-context)", rpc,
               ev("rpc_patch_permission.json", body={"skillId": "memory-context", "permissionCode": "memory:read",
                                                       "scope": {"type": "user"}, "granted": True}))
    say("chat turn: plain, memory-context granted too", conv, "Good night!", "plain-context")
    say("chat turn: memory-recall, both memory grants", conv, "你还记得我喜欢什么吗？", "recall-3")

    # Background jobs: grant, create, list, cancel.
    drive.call("PATCH /rpc/skills/permissions (grant proactive_message:write)", rpc,
               ev("rpc_patch_permission.json", body={"skillId": "goal-check-in-reminder",
                                                       "permissionCode": "proactive_message:write",
                                                       "scope": {"type": "user"}, "granted": True}), record=False)
    run_at = (datetime.now(UTC) + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    _, job = drive.call("POST /rpc/skills/background-jobs", rpc, ev(
        "rpc_create_background_job.json",
        body={"skillId": "goal-check-in-reminder", "agentId": mika["agentId"], "runAt": run_at, "note": "每天跑步 30 分钟"},
    ))
    drive.call("GET /rpc/skills/background-jobs", rpc, ev("rpc_list_background_jobs.json"))
    drive.call("POST /rpc/skills/background-jobs/{id}/cancel", rpc,
               ev("rpc_cancel_background_job.json", path_ids={"JOB_ID": job["jobId"]}))
    drive.call("GET /rpc/skills/audit-events", rpc, ev("rpc_list_audit_events.json"))

    # The rest of events/: admin views, forgetting, group conversations.
    drive.call("GET /rpc/admin/audit-events", rpc, ev("rpc_admin_audit_events.json", query={"userId": USER}, groups="[admin]"))
    drive.call("GET /rpc/admin/conversations/{id}/messages", rpc,
               ev("rpc_admin_messages.json", path_ids={"CONVERSATION_ID": conv}, groups="[admin]"))
    drive.call("DELETE /rpc/agents/{id}/memories/{memoryId}", rpc,
               ev("rpc_forget_memory.json", path_ids={"AGENT_ID": mika["agentId"], "MEMORY_ID": memory_ids[-1]}))
    _, group = drive.call("POST /rpc/conversations (group)", rpc,
                          ev("rpc_create_group.json", path_ids={"AGENT_ID_1": mika["agentId"], "AGENT_ID_2": other["agentId"]}))
    say("chat turn: plain, group conversation", group["conversationId"], "Hi both!", "group-1")

    # The scheduled scan with nothing due (its fixed cost per invocation).
    scan_event = load_event("scan_scheduled.json")
    scan_event["time"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    mark = drive.counter.mark()
    from tests.support import FakeContext

    summary = scan.lambda_handler(scan_event, FakeContext())
    drive.rows.append(Row("ScanFunction: scheduled scan, nothing due", 200, drive.counter.since(mark),
                          note=f"summary {summary}" if summary.get("claimed") else ""))
    return facts


def limit_checks(row: Row) -> int:
    return sum(1 for op in row.ops if op.endswith(LIMITS))


def limit_check_latency(report: Report, *, quick: bool) -> None:
    """What a limit check costs in time against DynamoDB Local: the rate take (one conditional UpdateItem), and a
    model-backed request's reserve and settle (two more), each timed alone, sequentially, for fresh users."""
    import statistics
    import time as clock
    import uuid

    from skillcore.db.dynamo import make_db
    from skillcore.limits import store
    from skillcore.limits.models import RateClass
    from skillcore.settings import Settings

    db = make_db(Settings.from_env())
    now = datetime.now(UTC)
    n = 50 if quick else 300
    takes: list[float] = []
    budget: list[float] = []
    for i in range(n):
        user = f"bench-limits-{uuid.uuid4().hex[:8]}-{i}"
        started = clock.perf_counter()
        assert store.take(db, user, RateClass.CHAT, 20, now)
        takes.append((clock.perf_counter() - started) * 1000)
        started = clock.perf_counter()
        assert store.reserve(db, user, 512, 200_000, now)
        store.add(db, user, 100 - 512, now)
        budget.append((clock.perf_counter() - started) * 1000)

    def p(values: list[float], q: float) -> float:
        return sorted(values)[min(len(values) - 1, int(q * len(values)))]

    report.line(f"  limit check latency ({n} each, DynamoDB Local): rate take 1 request, p50 {statistics.median(takes):.1f} ms,"
                f" p95 {p(takes, 0.95):.1f} ms; budget reserve + settle 2 requests, p50 {statistics.median(budget):.1f} ms,"
                f" p95 {p(budget, 0.95):.1f} ms")


def run(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    from skillcore import faults
    from tests.support import load_function

    report.heading("2. DynamoDB requests per operation (handlers in-process, events/*.json, DynamoDB Local)")
    env = dynamo.function_env(dynamo.fresh_tables("req"))
    counter = RequestCounter()
    rows: list[Row] = []
    # Hooks on boto3's default session: every client the handlers create at import is counted, not only db.client.
    with env_scope(env), counter.every_new_client():
        faults.clear()
        rpc, chat, scan = (load_function(name) for name in ("RpcFunction", "ChatTurnFunction", "ScanFunction"))
        facts = scenario(Driver(counter, rows), rpc, chat, scan)

    table = []
    for row in rows:
        n = len(row.ops)
        mark = ""
        own = n - limit_checks(row)
        if row.target is not None:
            mark = f"<= {row.target} " + ("ok" if own <= row.target else "MISSED")
        table.append((row.label, row.status, n, mark, describe_operations(row.ops) + (f"  [{row.note}]" if row.note else "")))
    report.table(["operation", "status", "requests", "target", "DynamoDB operations"], table, align="lrrll", wrap=90)
    report.line()
    report.line(f"  plain turn kinds: {sorted(k or '?' for k in facts['plain_kinds'])}; workflow turn kinds:"
                f" {facts['workflow_kinds']}; denied recall outcome: {facts['denied']};"
                f" granted recall (outcome, memoriesUsed): {facts['recall']}")

    scans = [(row.label, describe_operations(row.ops)) for row in rows if "Scan" in plain_operations(row.ops)]
    if scans:
        for label, ops in scans:
            report.line(f"  Scan on a request path: {label}: {ops}")
    else:
        report.line("  Scan operations on any request path: none")
    report.verdict(SECTION, "Scan on request paths", f"{len(scans)} path(s)", "none", not scans)
    unexpected = [row.label for row in rows if "UNEXPECTED" in row.note]
    if unexpected:
        report.line(f"  requests that did not answer as expected (their counts are suspect): {unexpected}")

    def worst(prefix: str) -> Row:
        return max((r for r in rows if r.label.startswith(prefix)), key=lambda r: len(r.ops))

    plain = worst("chat turn: plain #")
    recall = worst("chat turn: memory-recall, granted")
    plain_own, recall_own = len(plain.ops) - limit_checks(plain), len(recall.ops) - limit_checks(recall)
    report.line("  plain chat turn: " + f"{plain_own} requests besides the limit checks (worst of the plain turns; "
                f"target <= {PLAIN_TARGET}): "
                + report.verdict(SECTION, "requests per plain chat turn", str(plain_own), f"<= {PLAIN_TARGET}",
                                 plain_own <= PLAIN_TARGET))
    report.line("  memory-recall turn: " + f"{recall_own} requests besides the limit checks (grant, {MEMORIES} memories; "
                f"target <= {RECALL_TARGET}): "
                + report.verdict(SECTION, "requests per memory-recall turn", str(recall_own), f"<= {RECALL_TARGET}",
                                 recall_own <= RECALL_TARGET))
    checks = max(limit_checks(row) for row in rows)
    mutation = max(limit_checks(row) for row in rows if not row.label.startswith(("chat turn", "GET ")))
    report.line(f"  limit checks: {checks} requests on a model-backed request (rate take, budget reserve, settle), "
                f"{mutation} on any other mutation, 0 on a read; target <= {LIMIT_CHECKS_TARGET}: "
                + report.verdict(SECTION, "limit check requests per request", str(checks), f"<= {LIMIT_CHECKS_TARGET}",
                                 checks <= LIMIT_CHECKS_TARGET))
    with env_scope(env):
        limit_check_latency(report, quick=quick)
    if counter.retries:
        report.line(f"  note: botocore retried {counter.retries} request(s) during this section")

