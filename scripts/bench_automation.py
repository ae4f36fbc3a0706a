"""`make bench` section: the automation burst. N users' default memory jobs all due at the same instant,
drained by 4 concurrent scans against DynamoDB Local. Each user has one agent and an active memory:write
grant; a share of them chatted today (their run calls the offline model and writes memories through the
ToolRunner), the rest did not (their run is recorded `skipped` / no_activity, the common daily case)."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from scripts.bench_common import Report, RequestCounter, SharedDynamo, env_scope
from scripts.bench_scheduler import batch_write

SCANNERS = 4
ACTIVE_SHARE = 0.1


def seed(db: Any, *, users: int, slot: datetime, rng: random.Random, active_share: float = ACTIVE_SHARE,
         shards: int | None = None) -> int:
    from skillcore.automation import store as automation
    from skillcore.automation.models import AutomationConfig, AutomationJob, AutomationStatus
    from skillcore.automation.service import default_job_id
    from skillcore.conversations import agent_store as agents
    from skillcore.conversations import conversation_store as conversations
    from skillcore.conversations import message_store as messages
    from skillcore.conversations.models import (
        Agent,
        AgentCard,
        Conversation,
        ConversationKind,
        Message,
        Origin,
        Role,
    )
    from skillcore.ids import new_id
    from skillcore.policy import grant_store as grants
    from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant
    from skillcore.skills.memory_extraction import DEFAULT_PROMPT, DEFAULT_TITLE, DEFAULT_TOOLS

    created = slot - timedelta(days=2)
    chatted_at = slot - timedelta(hours=3)
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in ("jobs", "agents", "convs", "grants", "msgs")}
    active = 0
    for i in range(users):
        user = f"burst-{i:05d}"
        agent_id, conv_id = new_id(created), new_id(created)
        card = AgentCard(agent_id=agent_id, name="Mika", persona="")
        is_active = rng.random() < active_share
        active += is_active
        rows["agents"].append(agents.to_agent_item(Agent(
            user_id=user, agent_id=agent_id, name="Mika", persona="", default_conversation_id=conv_id,
            last_reply_at=None, created_at=created)))
        rows["convs"].append(conversations.to_conversation_item(Conversation(
            user_id=user, conversation_id=conv_id, kind=ConversationKind.SINGLE, agents=(card,), title="Mika",
            message_count=1 if is_active else 0, last_message_at=chatted_at if is_active else None,
            last_message_preview=None, created_at=created)))
        rows["grants"].append(grants.to_grant_item(PermissionGrant(
            grant_id=new_id(created), user_id=user, skill_id="memory-extraction", skill_version="1.0.0",
            permission_code="memory:write", scope=GrantScope.user(), status=GrantStatus.ACTIVE,
            granted_at=created, updated_at=created)))
        rows["jobs"].append((automation.to_job_item if shards is None else
                             lambda j: automation.to_job_item(j, shards))(AutomationJob(
            job_id=default_job_id(user), user_id=user, title=DEFAULT_TITLE, schedule_type="daily",
            local_time="10:00", weekday=None, timezone="Asia/Shanghai", agent_id=None,
            config=AutomationConfig(prompt=DEFAULT_PROMPT, tools=DEFAULT_TOOLS), status=AutomationStatus.ACTIVE,
            next_run_at=slot, is_default=True, created_at=created, updated_at=created)))
        if is_active:
            rows["msgs"].append(messages.to_message_item(Message(
                message_id=new_id(chatted_at), conversation_id=conv_id, role=Role.USER, agent_id=None,
                text=f"我喜欢爬山{i % 7}", origin=Origin.CHAT, created_at=chatted_at), user))
    tables = db.tables
    for table, key in ((tables.agents, "agents"), (tables.conversations, "convs"), (tables.grants, "grants"),
                       (tables.messages, "msgs"), (tables.automation_jobs, "jobs")):
        batch_write(db.client, table, rows[key])
    return active


def burst(dynamo: SharedDynamo, *, users: int, rng: random.Random) -> dict[str, Any]:
    from skillcore.automation.offline_extraction import plan
    from skillcore.automation.runner import AutomationRunner
    from skillcore.db.dynamo import make_db
    from skillcore.model.offline import OfflineModel
    from skillcore.settings import Settings
    from skillcore.skills.builtin import SKILLS

    env = dynamo.function_env(dynamo.fresh_tables("auto"))
    settings = Settings.from_env(env)
    counter = RequestCounter()
    runners = []
    with env_scope(env):
        seeder = make_db(settings)
        for _ in range(SCANNERS):
            db = make_db(settings)
            counter.attach(db.client)
            runners.append(AutomationRunner(db, SKILLS, OfflineModel(tool_planner=plan), rng=random.Random(rng.random())))
    slot = datetime(2026, 12, 3, 2, 0, tzinfo=UTC)
    seeding = time.perf_counter()
    active = seed(seeder, users=users, slot=slot, rng=rng)
    seeding = time.perf_counter() - seeding
    now = slot + timedelta(seconds=5)
    runs = [0] * SCANNERS
    finished = [0.0] * SCANNERS
    gate = threading.Barrier(SCANNERS + 1)

    def scan(index: int) -> None:
        gate.wait()
        runs[index] = runners[index].scan(now, lambda: 10**9, margin_ms=0)
        finished[index] = time.perf_counter()

    threads = [threading.Thread(target=scan, args=(i,)) for i in range(SCANNERS)]
    for thread in threads:
        thread.start()
    gate.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = max(finished) - began
    statuses: Counter[str] = Counter()
    request: dict[str, Any] = {"TableName": settings.tables.automation_runs, "ProjectionExpression": "#s",
                               "ExpressionAttributeNames": {"#s": "status"}}
    while True:
        page = seeder.client.scan(**request)
        statuses.update(i["status"]["S"] for i in page["Items"])
        if "LastEvaluatedKey" not in page:
            break
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return {"users": users, "active": active, "runs": sum(runs), "elapsed": elapsed, "seeding": seeding,
            "requests": sum(counter.operations.values()), "operations": counter.operations, "statuses": statuses}


def run(report: Report, dynamo: SharedDynamo, *, quick: bool) -> None:
    users = 1_000 if quick else 10_000
    report.heading(f"Automation burst: {users:,} default jobs due at one instant, {SCANNERS} concurrent scans")
    result = burst(dynamo, users=users, rng=random.Random(7))
    rate = result["runs"] / result["elapsed"] if result["elapsed"] else 0.0
    report.line(f"  seeded in {result['seeding']:.1f} s; {result['active']:,} users chatted today "
                f"({ACTIVE_SHARE:.0%}), the rest had no activity")
    report.line(f"  runs recorded      {result['runs']:,} (statuses: {dict(result['statuses'])})")
    report.line(f"  runs/s             {rate:,.0f}")
    report.line(f"  requests per run   {result['requests'] / max(result['runs'], 1):.1f}")
    report.line(f"  last run after     {result['elapsed']:.1f} s")
    top = ", ".join(f"{op} {n / max(result['runs'], 1):.2f}" for op, n in result["operations"].most_common(8))
    report.line(f"  per run by op      {top}")
    once = result["runs"] == users and sum(result["statuses"].values()) == users
    report.line(f"  every job ran once {'yes' if once else 'NO'}")
