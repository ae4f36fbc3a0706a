"""Section 5: the background scheduler draining due jobs with 1, 4 and 8 concurrent scanners.

Every run gets fresh tables, users with an agent, its default conversation and an active
proactive_message:write grant, and N due goal-check-in-reminder jobs (BatchWriteItem of
`skillcore.background.job_store.to_job_item` items), so each job really executes. Each scanner thread has its own
boto3 client (made like the ScanFunction's) and its own `Worker`; all scan with the same `now`.
Next to the runs: the raw conditional-UpdateItem rate of the same DynamoDB Local (the ceiling).
"""

from __future__ import annotations

import functools
import os
import queue
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from scripts.bench_common import Report, RequestCounter, SharedDynamo, env_scope

SECTION = "scheduler"
SKILL_ID = "goal-check-in-reminder"
PERMISSION = "proactive_message:write"
JOBS_PER_USER = 10
CEILING_THREADS = (1, 8)
SEED_THREADS = 4


@dataclass
class RunResult:
    scanners: int
    jobs: int
    seconds: float
    summary: Counter[str]
    requests: Counter[str]
    retries: int
    ddb_seconds: float
    verified: dict[str, Any] = field(default_factory=dict)
    first_shards: list[str | None] = field(default_factory=list)
    dispatch_seconds: float = 0.0

    @property
    def jobs_per_second(self) -> float:
        return self.summary["succeeded"] / self.seconds if self.seconds else 0.0

    @property
    def requests_total(self) -> int:
        return sum(self.requests.values())

    @property
    def lost_per_claim(self) -> float:
        return self.summary["lost_races"] / self.summary["claimed"] if self.summary["claimed"] else float("nan")


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


# ---------------------------------------------------------------------------------------------- seeding


def batch_write(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    """BatchWriteItem in chunks of 25, on a few threads, re-sending unprocessed items."""
    chunks = [items[i : i + 25] for i in range(0, len(items), 25)]

    def write(chunk: list[dict[str, Any]]) -> None:
        request: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in chunk]}
        while request:
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}

    with ThreadPoolExecutor(SEED_THREADS) as pool:
        list(pool.map(write, chunks))


def seed(db: Any, *, jobs: int, now: datetime, rng: random.Random, spread_seconds: float = 600,
         shards: int | None = None, user_prefix: str = "bench-user") -> dict[str, str]:
    """Users, agents, conversations, grants and `jobs` due jobs (due up to `spread_seconds` before `now`;
    0: all at `now`), under `shards` due shards (default: the module's); returns job id -> conversation id."""
    from skillcore.background.job_store import to_job_item
    from skillcore.background.lifecycle import JobStatus
    from skillcore.background.models import BackgroundJob
    from skillcore.conversations.agent_store import to_agent_item
    from skillcore.conversations.conversation_store import to_conversation_item
    from skillcore.conversations.models import Agent, AgentCard, Conversation, ConversationKind
    from skillcore.ids import new_id
    from skillcore.policy.grant_store import to_grant_item
    from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant
    from skillcore.skills.builtin import SKILLS

    definition = SKILLS.background.latest(SKILL_ID)
    assert definition is not None
    version = definition.manifest.version
    created = now - timedelta(hours=1)
    users = max(1, -(-jobs // JOBS_PER_USER))
    agents, conversations, grants, job_items = [], [], [], []
    owners: list[tuple[str, Agent]] = []
    for u in range(users):
        user_id = f"{user_prefix}-{u:05d}"
        agent = Agent(
            user_id=user_id, agent_id=new_id(created), name=f"Agent {u}", persona="A calm, curious friend.",
            default_conversation_id=new_id(created), last_reply_at=None, created_at=created,
        )
        conversation = Conversation(
            user_id=user_id, conversation_id=agent.default_conversation_id, kind=ConversationKind.SINGLE,
            agents=(AgentCard(agent_id=agent.agent_id, name=agent.name, persona=agent.persona),), title=agent.name,
            message_count=0, last_message_at=None, last_message_preview=None, created_at=created,
        )
        grant = PermissionGrant(
            grant_id=new_id(created), user_id=user_id, skill_id=SKILL_ID, skill_version=version,
            permission_code=PERMISSION, scope=GrantScope.user(), status=GrantStatus.ACTIVE,
            granted_at=created, revoked_at=None, updated_at=created,
        )
        agents.append(to_agent_item(agent))
        conversations.append(to_conversation_item(conversation))
        grants.append(to_grant_item(grant))
        owners.append((grant.grant_id, agent))
    conversation_of: dict[str, str] = {}
    for j in range(jobs):
        grant_id, agent = owners[j % users]
        due = now - timedelta(seconds=rng.uniform(1, spread_seconds)) if spread_seconds else now
        payload = definition.payload_model.model_validate({
            "agentId": agent.agent_id, "agentName": agent.name, "conversationId": agent.default_conversation_id,
            "note": f"每天跑步 30 分钟 / run 30 minutes a day #{j}",
        })
        job = BackgroundJob(
            job_id=new_id(created), user_id=agent.user_id, skill_id=SKILL_ID, skill_version=version,
            agent_id=agent.agent_id, conversation_id=agent.default_conversation_id, grant_id=grant_id,
            payload=payload.model_dump(mode="json", by_alias=True), status=JobStatus.SCHEDULED, scheduled_at=due,
            next_attempt_at=due, attempts=0, max_attempts=definition.max_attempts, revision=1,
            created_at=created, updated_at=created,
        )
        job_items.append(to_job_item(job) if shards is None else to_job_item(job, shards))
        conversation_of[job.job_id] = job.conversation_id
    tables = db.tables
    for table, items in ((tables.agents, agents), (tables.conversations, conversations),
                         (tables.grants, grants), (tables.jobs, job_items)):
        batch_write(db.client, table, items)
    return conversation_of


# ---------------------------------------------------------------------------------------------- verification


def _scan_all(client: Any, table: str, projection: str, names: dict[str, str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"TableName": table, "ProjectionExpression": projection,
                              "ExpressionAttributeNames": names}
    while True:
        page = client.scan(**params)
        items += page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return items
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def verify(db: Any, conversation_of: dict[str, str]) -> dict[str, Any]:
    """Every job succeeded once: status, attempts, and exactly one background message per job id."""
    client, tables = db.client, db.tables
    jobs = _scan_all(client, tables.jobs, "#pk, #st, #at", {"#pk": "pk", "#st": "status", "#at": "attempts"})
    statuses = Counter(i["status"]["S"] for i in jobs)
    attempts = Counter(int(i["attempts"]["N"]) for i in jobs)
    messages = _scan_all(client, tables.messages, "#pk, #sk, #o", {"#pk": "pk", "#sk": "sk", "#o": "origin"})
    background = [(i["pk"]["S"], i["sk"]["S"]) for i in messages if i.get("origin", {}).get("S") == "background"]
    per_job = Counter(sk for _, sk in background)
    wrong_place = sum(1 for pk, sk in background if conversation_of.get(sk) != pk)
    missing = sum(1 for job_id in conversation_of if per_job.get(job_id, 0) == 0)
    duplicated = sum(1 for n in per_job.values() if n > 1)
    stray = sum(1 for sk in per_job if sk not in conversation_of)
    ok = (
        statuses.get("succeeded", 0) == len(conversation_of) == len(jobs)
        and attempts == Counter({1: len(conversation_of)})
        and len(background) == len(conversation_of)
        and missing == duplicated == stray == wrong_place == 0
    )
    return {
        "ok": ok, "jobs": len(jobs), "statuses": dict(statuses), "attempts": dict(attempts),
        "messages": len(background), "missing": missing, "duplicated": duplicated, "stray": stray,
        "wrong_conversation": wrong_place,
    }


# ---------------------------------------------------------------------------------------------- runs


def _first_due_shard(shards: list[str | None], index: int) -> Any:
    """A botocore hook noting the first due shard a scanner queries (where its Worker started)."""

    def hook(params: dict[str, Any] | None = None, **_: Any) -> None:
        if shards[index] is None:
            for value in ((params or {}).get("ExpressionAttributeValues") or {}).values():
                text = value.get("S", "") if isinstance(value, dict) else ""
                if text.startswith("due#"):
                    shards[index] = text
                    return

    return hook


def drain(dynamo: SharedDynamo, *, scanners: int, jobs: int, rng: random.Random) -> RunResult:
    from skillcore.background.worker import Worker
    from skillcore.db.dynamo import make_db
    from skillcore.settings import Settings
    from skillcore.skills.builtin import SKILLS

    env = dynamo.function_env(dynamo.fresh_tables("sched"))
    settings = Settings.from_env(env)
    counter = RequestCounter()
    workers = []
    first_shards: list[str | None] = [None] * scanners
    with env_scope(env):  # the handlers' environment: dummy credentials, region, endpoint
        seeder = make_db(settings)
        # Clients are made here, one after another: boto3's default session is not thread-safe.
        for index in range(scanners):
            db = make_db(settings)
            counter.attach(db.client)
            db.client.meta.events.register("before-parameter-build.dynamodb.Query", _first_due_shard(first_shards, index))
            workers.append(Worker(db, SKILLS.background, batch_size=settings.scan_batch_size))
    now = datetime.now(UTC)
    conversation_of = seed(seeder, jobs=jobs, now=now, rng=rng)
    summaries: list[Any] = [None] * scanners
    errors: list[BaseException] = []
    start = threading.Barrier(scanners + 1)

    # The deployed path: the dispatcher's shard tasks in a queue, each worker thread takes the next task
    # and works its shard (dispatch.run_task, WorkerFunction's code); a continuation goes back in the queue.
    from skillcore.background import job_store
    from skillcore.work.dispatch import ShardTask, find_work, run_task
    from skillcore.work.drain import Probe, ScanSummary

    tasks: queue.SimpleQueue[str] = queue.SimpleQueue()

    class _Queue:
        def send(self, bodies: Any) -> None:
            for body in bodies:
                tasks.put(body)

    dispatch_started = time.perf_counter()
    _Queue().send([task.encode() for task in find_work(seeder.shards.read, (Probe("background", functools.partial(job_store.probe, seeder)),), now)])
    dispatch_seconds = time.perf_counter() - dispatch_started

    def scan(index: int) -> None:
        start.wait()
        total = ScanSummary()
        try:
            while True:
                try:
                    body = tasks.get_nowait()
                except queue.Empty:
                    break
                result = run_task(ShardTask.decode(body), {"background": workers[index]}, _Queue(),  # type: ignore[arg-type]
                                  lambda: 10**9, age_seconds=0, max_age_seconds=600)
                total.add(result.summary)
            summaries[index] = total
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=scan, args=(i,), name=f"scanner-{i}") for i in range(scanners)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    if errors:
        raise RuntimeError(f"a scanner failed: {errors[0]!r}") from errors[0]
    total: Counter[str] = Counter()
    for s in summaries:
        total.update({k: getattr(s, k) for k in ("recovered", "claimed", "succeeded", "retried", "failed",
                                                 "cancelled", "lost_races")})
    result = RunResult(scanners, jobs, elapsed, total, Counter(counter.operations), counter.retries, counter.seconds)
    result.first_shards = first_shards
    result.dispatch_seconds = dispatch_seconds
    result.verified = verify(seeder, conversation_of)
    return result


def ceiling(dynamo: SharedDynamo, threads: int, seconds: float) -> float:
    """Conditional UpdateItems per second: `threads` threads with a client each, each cycling through its own
    25 items of a jobs table with a claim-like update (revision check + bump, ALL_NEW), for `seconds`."""
    from skillcore.db.dynamo import make_db
    from skillcore.settings import Settings

    env = dynamo.function_env(dynamo.fresh_tables("ceil"))
    settings = Settings.from_env(env)
    table = settings.tables.jobs
    items = 25
    with env_scope(env):
        seeder = make_db(settings)
        clients = [make_db(settings).client for _ in range(threads)]
    batch_write(seeder.client, table, [
        {"pk": {"S": f"c{t}-{i}"}, "revision": {"N": "0"}, "status": {"S": "scheduled"}}
        for t in range(threads) for i in range(items)
    ])
    done = [0] * threads
    barrier = threading.Barrier(threads + 1)
    stop = threading.Event()

    def hammer(t: int) -> None:
        client = clients[t]
        revisions = [0] * items
        barrier.wait()
        n = 0
        while not stop.is_set():
            i = n % items
            client.update_item(
                TableName=table, Key={"pk": {"S": f"c{t}-{i}"}},
                UpdateExpression="SET #rev = :next",
                ConditionExpression="#rev = :rev AND #st IN (:scheduled)",
                ExpressionAttributeNames={"#rev": "revision", "#st": "status"},
                ExpressionAttributeValues={":rev": {"N": str(revisions[i])}, ":next": {"N": str(revisions[i] + 1)},
                                           ":scheduled": {"S": "scheduled"}},
                ReturnValues="ALL_NEW",
            )
            revisions[i] += 1
            n += 1
        done[t] = n

    workers = [threading.Thread(target=hammer, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    barrier.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    return sum(done) / (time.perf_counter() - began)


def run(report: Report, dynamo: SharedDynamo, *, quick: bool, jobs: int | None = None) -> None:
    jobs = jobs or (500 if quick else 5000)
    scanner_counts = (1, 2, 4, 8)
    report.heading(f"5. Scheduler: {jobs} due background jobs drained by 1, 2, 4 and 8 scanners")
    report.line(f"  {JOBS_PER_USER} jobs per user (agent + default conversation + active {PERMISSION} grant),"
                " fresh tables and jobs per run, batch size from Settings")
    if jobs < 5000:
        report.line(f"  note: with {jobs} jobs each shard holds fewer due jobs, so concurrent scanners meet more often"
                    " than with the 5,000 the targets are set for")
    rng = random.Random(5)
    window = 2.0 if quick else 3.0
    results = []
    for scanners in scanner_counts:
        result = drain(dynamo, scanners=scanners, jobs=jobs, rng=rng)
        results.append(result)
        report.line(f"  [{scanners} scanner(s): {result.summary['succeeded']} succeeded in {result.seconds:.1f} s;"
                    f" load average {_load()}]")
    # The ceiling comes after the runs, so DynamoDB Local's JVM is as warm for it as it was for them.
    ceilings = {threads: ceiling(dynamo, threads, window) for threads in CEILING_THREADS}
    base = results[0].jobs_per_second
    top = ceilings[max(CEILING_THREADS)]
    rows = []
    for r in results:
        per_job = r.requests_total / max(1, r.summary["succeeded"])
        rows.append((
            r.scanners, f"{r.seconds:.1f}", f"{r.jobs_per_second:.1f}", f"{r.jobs_per_second / base:.2f}",
            r.summary["claimed"], r.summary["succeeded"], r.summary["lost_races"], f"{r.lost_per_claim:.2f}",
            f"{per_job:.2f}", f"{r.requests_total / r.seconds:.0f}", f"{r.requests_total / r.seconds / top:.2f}",
            f"{r.jobs_per_second / (top / per_job):.2f}", r.retries,
        ))
    report.table(
        ["scanners", "seconds", "jobs/s", "vs 1", "claimed", "succeeded", "lost races", "lost/claim",
         "req/job", "req/s", "req/s : ceiling", "jobs/s : ceiling/(req/job)", "retries"],
        rows,
    )
    report.line()
    for threads, rate in ceilings.items():
        report.line(f"  ceiling, conditional UpdateItem on distinct items, {threads} thread(s): {rate:.0f} updates/s"
                    f" ({window:g} s, measured right after the runs)")
    report.line(f"  (ratios use the {max(CEILING_THREADS)}-thread ceiling; reads are cheaper than conditional writes,"
                " so a mixed request rate can exceed it)")
    report.line()
    report.line("  DynamoDB requests per job by operation:")
    for r in results:
        by_operation = {name: n / max(1, r.summary["succeeded"]) for name, n in r.requests.most_common()}
        report.line(f"    {r.scanners} scanner(s): "
                    + ", ".join(f"{name} {v:.2f}" for name, v in by_operation.items()))
        report.line(f"      DynamoDB wall time (sum over threads) {r.ddb_seconds:.1f} s of"
                    f" {r.seconds * r.scanners:.1f} thread-seconds")
    report.line()
    for r in results:
        if r.scanners > 1:
            starts = Counter(shard or "?" for shard in r.first_shards)
            shared = sum(n for n in starts.values() if n > 1)
            report.line(f"  {r.scanners} scanners started on shards {dict(sorted(starts.items()))}:"
                        f" {shared} of {r.scanners} shared their first shard with another scanner")
    report.line()
    report.line("  verification (job status, attempts, one background message per job in its conversation):")
    for r in results:
        v = r.verified
        report.line(
            f"    {r.scanners} scanner(s): {'OK' if v['ok'] else 'FAILED'} - {v['jobs']} jobs {v['statuses']},"
            f" attempts {v['attempts']}, {v['messages']} messages, missing {v['missing']},"
            f" duplicated {v['duplicated']}, stray {v['stray']}, wrong conversation {v['wrong_conversation']}"
        )
    report.line()
    eight = next(r for r in results if r.scanners == 8)
    scaling = eight.jobs_per_second / base if base else 0.0
    report.line("  8 scanners vs 1: " + f"{scaling:.2f}  (target >= 0.6): "
                + report.verdict(SECTION, "8-scanner rate / 1-scanner rate", f"{scaling:.2f}", ">= 0.6", scaling >= 0.6))
    lost = eight.lost_per_claim
    report.line("  8 scanners lost races per claim: " + f"{lost:.2f}  (target <= 0.5): "
                + report.verdict(SECTION, "lost races per claim (8 scanners)", f"{lost:.2f}", "<= 0.5", lost <= 0.5))
    for r in results:
        report.verdict(SECTION, f"every job succeeded exactly once ({r.scanners} scanner(s))",
                       "yes" if r.verified["ok"] else "no", "yes", bool(r.verified["ok"]))
