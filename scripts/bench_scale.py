"""`make bench` section "scale" (issue 13, point 5): a burst due at one instant, drained through the
dispatcher's shard tasks by 1, 2, 4 and 8 concurrent workers against DynamoDB Local, each running one item
of a shard at a time, and by 1 and 8 workers running 4 items each at once (settings.worker_concurrency).

Each run gets fresh tables and seeds R goal reminders (all due at the same instant) and S default memory
jobs (all due at the same 10:00 Asia/Shanghai slot; every user chatted, so every run calls the model).
`dispatch.find_work` (the ScanFunction's code) turns the due shards into shard tasks; W worker threads
take tasks from one queue and run each with `dispatch.run_task` (WorkerFunction's code), running up to
C items of the shard at once (W×C in the report), each worker with its own boto3 clients (one for reminders, one for automation runs, so their requests are counted
apart) and a Lambda-like time budget, so a long shard is handed on as a continuation task.

The model stand-in takes MODEL_MS per call and sits behind one shared `RateLimiter` (the Bedrock quota,
`Size.model_rpm`), each worker with its own `ThrottledModel` (backoff with jitter). Capacity units are DynamoDB
Local's own ConsumedCapacity (ReturnConsumedCapacity=TOTAL added to every call that takes it).

Checks per run: every reminder wrote exactly one background message in its conversation (duplicates 0,
lost 0), every slot was won exactly once and has one run record (duplicates 0, lost 0), and one
automation reply per succeeded run. Slot delay p50/p99 come from the run records' slotDelayMs.
"""

from __future__ import annotations

import contextlib
import functools
import io
import queue
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from scripts.bench_common import Report, RequestCounter, SharedDynamo, env_scope
from scripts.bench_scheduler import _scan_all, verify
from scripts.bench_scheduler import seed as seed_reminders

SECTION = "scale"
# (workers, items each runs at once): the worker counts at one item, then the in-worker concurrency.
CONFIGS = ((1, 1), (2, 1), (4, 1), (8, 1), (1, 4), (8, 4))
WARM_UP = (40, 4)  # reminders, slots drained first and not reported: DynamoDB Local's JVM warms up on them
MODEL_MS = 100  # the stand-in's fixed time per call
TASK_BUDGET_MS = 20_000 + 10_000  # SAFETY_MARGIN_MS + 10 s of work per task, then a continuation
WITH_CAPACITY = {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
                 "BatchWriteItem", "TransactWriteItems", "TransactGetItems"}


@dataclass(frozen=True)
class Size:
    reminders: int
    slots: int
    shards: int
    model_rpm: int  # the shared rate limit of model calls (the Bedrock quota)


# --quick: ~1 minute on 2 cores for the six configurations; the limit of 240 calls/min (4/s) binds from one
# worker on (its drains measure the throttle, not the workers). Full: the burst; 6,000 calls/min
# (100/s) binds only at 8×4.
QUICK = Size(reminders=200, slots=20, shards=16, model_rpm=240)
FULL = Size(reminders=20_000, slots=2_000, shards=32, model_rpm=6_000)


def parse_configs(text: str) -> tuple[tuple[int, int], ...]:
    """"1,2,4,8,8x4" -> ((1, 1), (2, 1), (4, 1), (8, 1), (8, 4))."""
    configs = []
    for part in text.split(","):
        if part.strip():
            workers, _, items = part.strip().lower().partition("x")
            configs.append((int(workers), int(items or 1)))
    return tuple(configs)


def label(workers: int, items: int) -> str:
    return f"{workers}x{items}"


class CapacityCounter:
    """Sums ConsumedCapacity (capacity units) of every call of the clients it is attached to."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.units = 0.0
        self.read = 0.0
        self.write = 0.0

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-parameter-build.dynamodb", self._ask)
        client.meta.events.register("after-call.dynamodb", self._add)

    @staticmethod
    def _ask(params: dict[str, Any], model: Any = None, **_: Any) -> None:
        if model is not None and model.name in WITH_CAPACITY:
            params.setdefault("ReturnConsumedCapacity", "TOTAL")

    def _add(self, parsed: dict[str, Any] | None = None, **_: Any) -> None:
        consumed = (parsed or {}).get("ConsumedCapacity")
        entries = consumed if isinstance(consumed, list) else [consumed] if consumed else []
        with self._lock:
            for entry in entries:
                self.units += float(entry.get("CapacityUnits", 0))
                self.read += float(entry.get("ReadCapacityUnits", 0))
                self.write += float(entry.get("WriteCapacityUnits", 0))


class SlowModel:
    """The model stand-in: the offline model's answer after a fixed MODEL_MS."""

    def __init__(self, model: Any, ms: int) -> None:
        self._model = model
        self._seconds = ms / 1000
        self._lock = threading.Lock()  # one worker's runs call it from several threads
        self.calls = 0

    def converse(self, request: Any) -> Any:
        time.sleep(self._seconds)
        with self._lock:
            self.calls += 1
        return self._model.converse(request)


@dataclass
class ScaleRun:
    workers: int
    items: int  # items each worker runs at once
    reminders: int
    slots: int
    seconds: float = 0.0
    tasks: int = 0
    continuations: int = 0
    summary: Counter[str] = field(default_factory=Counter)
    slot_claims: int = 0
    slot_lost: int = 0
    runs: int = 0
    model_calls: int = 0
    throttle_waits: int = 0
    bg_requests: Counter[str] = field(default_factory=Counter)
    auto_requests: Counter[str] = field(default_factory=Counter)
    bg_units: float = 0.0
    auto_units: float = 0.0
    dispatch_requests: int = 0
    delays_ms: list[int] = field(default_factory=list)
    reminder_check: dict[str, Any] = field(default_factory=dict)
    slot_check: dict[str, Any] = field(default_factory=dict)

    @property
    def jobs(self) -> int:
        return self.reminders + self.slots


def _pct(values: list[int], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))])


def drain(dynamo: SharedDynamo, *, workers: int, items: int, reminders: int, slots: int, shards: int, model_rpm: int,
          rng: random.Random) -> ScaleRun:
    from scripts.bench_automation import seed as seed_slots
    from skillcore.automation import store as automation_store
    from skillcore.automation.offline_extraction import plan
    from skillcore.automation.runner import AutomationRunner
    from skillcore.automation.throttle import RateLimiter, ThrottledModel
    from skillcore.background import job_store
    from skillcore.background.worker import Worker
    from skillcore.db.dynamo import make_db
    from skillcore.model.offline import OfflineModel
    from skillcore.settings import Settings
    from skillcore.skills.builtin import SKILLS
    from skillcore.work.dispatch import ShardTask, find_work, run_task
    from skillcore.work.drain import Probe, ScanSummary

    env = dynamo.function_env(dynamo.fresh_tables("scale"))
    env["SKILLS_DUE_SHARDS"] = env["SKILLS_DUE_SHARDS_PREVIOUS"] = str(shards)
    env["SKILLS_WORKER_CONCURRENCY"] = str(items)
    settings = Settings.from_env(env)
    result = ScaleRun(workers, items, reminders, slots)
    bg_counter, auto_counter, dispatch_counter = RequestCounter(), RequestCounter(), RequestCounter()
    bg_units, auto_units = CapacityCounter(), CapacityCounter()
    limiter = RateLimiter(model_rpm)
    stand_ins: list[SlowModel] = []
    throttles: list[ThrottledModel] = []
    wins: Counter[str] = Counter()
    lost = [0]
    claims_lock = threading.Lock()

    class CountingRunner(AutomationRunner):
        def claim(self, job: Any, now: datetime) -> Any:
            claimed = super().claim(job, now)
            with claims_lock:
                if claimed is None:
                    lost[0] += 1
                else:
                    wins[job.job_id] += 1
            return claimed

    pairs: list[tuple[Any, Any]] = []
    with env_scope(env):
        seeder = make_db(settings)
        dispatcher = make_db(settings)
        dispatch_counter.attach(dispatcher.client)
        for _ in range(workers):  # made one after another: boto3's default session is not thread-safe
            bg_db, auto_db = make_db(settings), make_db(settings)
            bg_counter.attach(bg_db.client)
            bg_units.attach(bg_db.client)
            auto_counter.attach(auto_db.client)
            auto_units.attach(auto_db.client)
            stand_in = SlowModel(OfflineModel(tool_planner=plan), MODEL_MS)
            model = ThrottledModel(stand_in, limiter, max_wait_ms=settings.model_wait_ms,
                                   rng=random.Random(rng.random()))
            stand_ins.append(stand_in)
            throttles.append(model)
            pairs.append((Worker(bg_db, SKILLS.background, batch_size=settings.scan_batch_size,
                                 concurrency=settings.worker_concurrency),
                          CountingRunner(auto_db, SKILLS, model, batch_size=settings.scan_batch_size,
                                         rng=random.Random(rng.random()), concurrency=settings.worker_concurrency)))

    # The instant: a 10:00 Asia/Shanghai slot (02:00 UTC) a second ago; the reminders are due then too.
    slot = datetime.now(UTC).replace(hour=2, minute=0, second=0, microsecond=0) - timedelta(days=1)
    now = slot + timedelta(seconds=1)
    conversation_of = seed_reminders(seeder, jobs=reminders, now=slot, rng=rng, spread_seconds=0, shards=shards)
    seed_slots(seeder, users=slots, slot=slot, rng=rng, active_share=1.0, shards=shards)

    tasks: queue.SimpleQueue[tuple[str, float]] = queue.SimpleQueue()
    busy = [0]
    busy_lock = threading.Lock()
    continuations = [0]

    class _Queue:
        def send(self, bodies: Any) -> None:
            for body in bodies:
                tasks.put((body, time.monotonic()))

    class _Continuations(_Queue):
        def send(self, bodies: Any) -> None:
            with busy_lock:
                continuations[0] += len(bodies)
            super().send(bodies)

    began = time.perf_counter()
    shard_tasks = find_work(dispatcher.shards.read, (
        Probe("background", functools.partial(job_store.probe, dispatcher)),
        Probe("automation", functools.partial(automation_store.probe, dispatcher))), now)
    _Queue().send([t.encode() for t in shard_tasks])
    result.tasks = len(shard_tasks)
    summaries = [ScanSummary() for _ in range(workers)]
    errors: list[BaseException] = []

    def work(index: int) -> None:
        worker, runner = pairs[index]
        total = summaries[index]
        try:
            while True:
                with busy_lock:
                    try:
                        body, sent = tasks.get_nowait()
                        busy[0] += 1
                    except queue.Empty:
                        if busy[0] == 0:
                            return
                        body = ""
                if not body:
                    time.sleep(0.01)
                    continue
                try:
                    deadline = time.monotonic() + TASK_BUDGET_MS / 1000
                    done = run_task(ShardTask.decode(body), {"background": worker, "automation": runner},  # type: ignore[arg-type]
                                    _Continuations(),
                                    lambda deadline=deadline: int((deadline - time.monotonic()) * 1000),
                                    age_seconds=time.monotonic() - sent, max_age_seconds=3600)
                    total.add(done.summary)
                finally:
                    with busy_lock:
                        busy[0] -= 1
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,), name=f"worker-{i}") for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.perf_counter() - began
    if errors:
        raise RuntimeError(f"a worker failed: {errors[0]!r}") from errors[0]
    for s in summaries:
        result.summary.update(s.as_dict())
    result.continuations = continuations[0]
    result.slot_claims = sum(wins.values())
    result.slot_lost = lost[0]
    result.model_calls = sum(m.calls for m in stand_ins)
    result.throttle_waits = sum(t.waits for t in throttles)
    result.bg_requests = Counter(bg_counter.operations)
    result.auto_requests = Counter(auto_counter.operations)
    result.dispatch_requests = sum(dispatch_counter.operations.values())
    result.bg_units, result.auto_units = bg_units.units, auto_units.units
    result.reminder_check = verify(seeder, conversation_of)
    result.slot_check, result.delays_ms = check_slots(seeder, slots, wins)
    result.runs = result.slot_check["runs"]
    return result


def check_slots(db: Any, slots: int, wins: Counter[str]) -> tuple[dict[str, Any], list[int]]:
    """Every default job won once, one run record each, one automation reply per succeeded run."""
    tables = db.tables
    runs = _scan_all(db.client, tables.automation_runs, "#pk, #st, #d",
                     {"#pk": "pk", "#st": "status", "#d": "slotDelayMs"})
    per_job = Counter(i["pk"]["S"] for i in runs)
    statuses = Counter(i["status"]["S"] for i in runs)
    delays = [int(i["slotDelayMs"]["N"]) for i in runs if "slotDelayMs" in i]
    messages = _scan_all(db.client, tables.messages, "#o, #r", {"#o": "origin", "#r": "role"})
    replies = sum(1 for i in messages if i.get("origin", {}).get("S") == "automation"
                  and i.get("role", {}).get("S") == "assistant")
    duplicated = sum(1 for n in wins.values() if n > 1) + sum(1 for n in per_job.values() if n > 1)
    lost = slots - len(per_job)
    ok = (len(wins) == slots and duplicated == 0 and lost == 0 and len(delays) == len(runs)
          and replies == statuses.get("succeeded", 0))
    return ({"ok": ok, "runs": len(runs), "statuses": dict(statuses), "duplicated": duplicated, "lost": lost,
             "replies": replies}, delays)


def _row(r: ScaleRun, base: ScaleRun) -> tuple[Any, ...]:
    done = r.summary["succeeded"] + r.runs
    bg_req = sum(r.bg_requests.values()) / max(1, r.summary["succeeded"])
    auto_req = sum(r.auto_requests.values()) / max(1, r.runs)
    claims = r.summary["claimed"] + r.slot_claims
    races = r.summary["lost_races"] + r.slot_lost
    dup = r.reminder_check["duplicated"] + r.slot_check["duplicated"]
    lost = r.reminder_check["missing"] + r.slot_check["lost"]
    return (
        label(r.workers, r.items), f"{r.seconds:.1f}", f"{done / r.seconds:.1f}",
        f"{(done / r.seconds) / (base.jobs / base.seconds):.2f}",
        f"{bg_req:.2f}", f"{r.bg_units / max(1, r.summary['succeeded']):.1f}", f"{auto_req:.2f}",
        f"{r.auto_units / max(1, r.runs):.1f}", f"{races / max(1, claims):.3f}", dup, lost,
        f"{_pct(r.delays_ms, 0.5) / 1000:.1f}", f"{_pct(r.delays_ms, 0.99) / 1000:.1f}",
        f"{r.tasks}+{r.continuations}", r.throttle_waits,
    )


HEADERS = ["workers x items", "seconds", "jobs/s", "vs 1x1", "req/reminder", "CU/reminder", "req/run", "CU/run",
           "lost races/claim", "duplicates", "lost", "delay p50 s", "delay p99 s", "tasks+cont.", "throttle waits"]


def run(report: Report, dynamo: SharedDynamo, *, quick: bool, reminders: int | None = None,
        slots: int | None = None, configs: tuple[tuple[int, int], ...] = CONFIGS) -> list[ScaleRun]:
    size = QUICK if quick else FULL
    reminders = reminders or size.reminders
    slots = slots or size.slots
    report.heading(f"Scale: {reminders:,} reminders and {slots:,} automation slots due at one instant, drained"
                   f" through shard tasks by {', '.join(label(w, c) for w, c in configs)} (workers x items"
                   " each runs at once)")
    report.line(f"  {size.shards} due shards; model stand-in {MODEL_MS} ms per call behind a shared limit of"
                f" {size.model_rpm:,} calls/min; task budget {TASK_BUDGET_MS / 1000:.0f} s (20 s margin), then a"
                " continuation; every slot's user chatted (each run calls the model)")
    rng = random.Random(13)
    with contextlib.redirect_stdout(io.StringIO()):
        warm = drain(dynamo, workers=1, items=1, reminders=WARM_UP[0], slots=WARM_UP[1], shards=size.shards,
                     model_rpm=size.model_rpm, rng=random.Random(0))
    report.line(f"  (warm-up, not reported: {WARM_UP[0]} reminders + {WARM_UP[1]} slots by 1x1 in {warm.seconds:.1f} s)")
    results: list[ScaleRun] = []
    for workers, items in configs:
        # The handlers' log lines and metric flushes (EMF to stdout) would drown the report.
        with contextlib.redirect_stdout(io.StringIO()):
            r = drain(dynamo, workers=workers, items=items, reminders=reminders, slots=slots, shards=size.shards,
                      model_rpm=size.model_rpm, rng=rng)
        results.append(r)
        # Each configuration's figures as soon as it finished (a long run stopped early keeps them).
        report.line(f"  [{label(workers, items)}: {r.summary['succeeded']} reminders + {r.runs} runs in"
                    f" {r.seconds:.1f} s | " + " | ".join(f"{h} {v}" for h, v in zip(HEADERS[2:], _row(r, results[0])[2:], strict=True))
                    + "]")
    base = results[0]
    report.table(HEADERS, [_row(r, base) for r in results])
    report.line()
    for r in results:
        report.line(f"  {label(r.workers, r.items)}: reminders {r.summary['succeeded']:,} at"
                    f" {r.summary['succeeded'] / r.seconds:.1f}/s; runs {r.runs:,} {r.slot_check['statuses']},"
                    f" model calls {r.model_calls:,} ({r.model_calls / r.seconds * 60:,.0f}/min of {size.model_rpm:,});"
                    f" dispatch {r.dispatch_requests} requests for {r.tasks} tasks")
        report.line("    reminder requests: " + ", ".join(
            f"{op} {n / max(1, r.summary['succeeded']):.2f}" for op, n in r.bg_requests.most_common()))
        report.line("    run requests:      " + ", ".join(
            f"{op} {n / max(1, r.runs):.2f}" for op, n in r.auto_requests.most_common()))
        v, s = r.reminder_check, r.slot_check
        report.line(f"    check: reminders {'OK' if v['ok'] else 'FAILED'} ({v['messages']} messages, missing"
                    f" {v['missing']}, duplicated {v['duplicated']}); slots {'OK' if s['ok'] else 'FAILED'}"
                    f" ({s['runs']} run records, lost {s['lost']}, duplicated {s['duplicated']},"
                    f" {s['replies']} replies)")
    report.line()
    for r in results:
        ok = bool(r.reminder_check["ok"] and r.slot_check["ok"])
        report.verdict(SECTION, f"no duplicates, none lost ({label(r.workers, r.items)})", "yes" if ok else "no",
                       "yes", ok)
    # A drain whose model calls ran at the shared limit measured the limit, not the workers (the quick size's
    # 240 calls/min binds from one worker on): its throughput ratios are reported without a verdict.
    def bound(*runs: ScaleRun) -> bool:
        return any(r.model_calls / r.seconds * 60 >= 0.8 * size.model_rpm for r in runs)

    limit_note = f"the model limit of {size.model_rpm:,} calls/min binds: reported only"
    singles = [r for r in results if r.items == 1]
    if len(singles) > 1:
        top = singles[-1]
        scaling = (top.jobs / top.seconds) / (base.jobs / base.seconds)
        report.line(f"  {label(top.workers, 1)} vs {label(base.workers, base.items)}: {scaling:.2f}x throughput: "
                    + (limit_note if bound(top, base) else
                       report.verdict(SECTION, f"{top.workers}-worker / {base.workers}-worker throughput",
                                      f"{scaling:.2f}", "> 1.5", scaling > 1.5)))
    for fanned in (r for r in results if r.items > 1):
        same = next((r for r in singles if r.workers == fanned.workers), None)
        if same is None:
            continue
        gain = (fanned.jobs / fanned.seconds) / (same.jobs / same.seconds)
        p99 = _pct(fanned.delays_ms, 0.99) / max(1.0, _pct(same.delays_ms, 0.99))
        text = (f"  {label(fanned.workers, fanned.items)} vs {label(same.workers, 1)}: {gain:.2f}x throughput,"
                f" slot delay p99 x{p99:.2f}")
        if fanned.workers == 1 and bound(fanned, same):
            text += ": " + limit_note
        elif fanned.workers == 1:
            # One worker leaves the machine idle while it waits on DynamoDB and the model: the gain of items
            # at once shows there. With 8 workers on a small machine its cores are the limit (reported only).
            text += ": " + report.verdict(SECTION, f"{fanned.items} items at once / 1 (1 worker)", f"{gain:.2f}",
                                          "> 1.2", gain > 1.2)
        report.line(text)
    return results
