"""Chaos against DynamoDB Local: hundreds of reminder jobs, several scanner threads, crashes and transient
errors injected at the background fault points while they run, leases left to expire, jobs cancelled and
grants revoked on the way. Afterwards the lifecycle's invariants must hold for every job:

- it ended: succeeded, failed or cancelled (nothing scheduled, running or retrying is left);
- succeeded  <=> exactly one message with messageId == jobId; failed or cancelled => no message;
- attempts <= maxAttempts, and the attempts of all jobs add up to the claims the scanners won;
- the audit agrees: one `background.execute` succeeded event per succeeded job and none for any other,
  a failed/denied event for each failed job, a `background.cancel` event for each cancelled job;
- after a grant is revoked (between two scans) no message of that user's jobs is written any more.

The first tests pin single interleavings deterministically; the last one is the random storm.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from skillcore import faults
from skillcore.background.lifecycle import JobStatus
from skillcore.background.models import BackgroundJob
from skillcore.background.service import cancel_job
from skillcore.background.worker import Worker
from skillcore.errors import Conflict, NotFound
from skillcore.policy.grants import GrantScope
from skillcore.policy.permissions import set_permission
from skillcore.skills.builtin import SKILLS
from skillcore.work.drain import ScanSummary

from .conftest import LocalTables
from .job_world import CODE, SKILL, World, grant_users, job_world, put_jobs, reminder_job, scan_table

pytestmark = pytest.mark.stack

T0 = datetime(2032, 6, 7, 8, 0, tzinfo=UTC)
LIFECYCLE = {s.value for s in JobStatus}
FINAL = {"succeeded", "failed", "cancelled"}
ROUND = timedelta(minutes=3)  # longer than the 2-minute lease: a crashed attempt is recovered next round


# ---------------------------------------------------------------------------------------------- the world


@pytest.fixture
def world(ddb_local: LocalTables) -> Iterator[World]:
    faults.clear()
    try:
        with job_world(ddb_local, "chaos") as world:
            yield world
    finally:
        faults.clear()


def seed(world: World, *, users: int, agents_per_user: int, jobs: int, due_from: datetime, due_span_s: int,
         rng: random.Random) -> list[str]:
    created = due_from - timedelta(hours=1)
    user_ids = grant_users(world, users=users, agents_per_user=agents_per_user, created=created,
                           user_prefix="chaos-user")
    for i in range(jobs):
        agent = world.agents[rng.randrange(len(world.agents))]
        run_at = due_from + timedelta(seconds=rng.randrange(0, max(due_span_s, 1)))
        world.jobs.append(reminder_job(agent, run_at=run_at, created=created, note=f"goal {i}"))
    put_jobs(world)
    return user_ids


def job_items(world: World) -> dict[str, dict[str, Any]]:
    return {item["pk"]: item for item in scan_table(world.db, world.settings.tables.jobs)}


def background_messages(world: World) -> Counter[str]:
    """How many messages carry each id, over every conversation (a job's message id is its job id)."""
    return Counter(m["sk"] for m in scan_table(world.db, world.settings.tables.messages) if m.get("origin") == "background")


def audit_by_job(world: World) -> dict[str, list[dict[str, Any]]]:
    events: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in scan_table(world.db, world.settings.tables.audit):
        if event.get("targetId"):
            events[event["targetId"]].append(event)
    return events


class CountingWorker(Worker):
    """The real worker; only counts the claims it wins and loses, which a crashed scan cannot report."""

    def __init__(self, *args: Any, tally: Counter[str], lock: threading.Lock, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tally, self._lock = tally, lock

    def claim(self, candidate: Any, now: datetime, summary: ScanSummary) -> BackgroundJob | None:
        lost_before = summary.lost_races
        job = super().claim(candidate, now, summary)
        with self._lock:
            self._tally["claims"] += job is not None
            self._tally["lost_races"] += summary.lost_races - lost_before
        return job


def _scan_once(world: World, now: datetime, **kwargs: Any) -> ScanSummary:
    return Worker(world.new_db(), SKILLS.background, **kwargs).scan(now)


def _single_job(world: World) -> tuple[BackgroundJob, str]:
    users = seed(world, users=1, agents_per_user=1, jobs=1, due_from=T0, due_span_s=1, rng=random.Random(1))
    return world.jobs[0], users[0]


def _state(world: World, job: BackgroundJob) -> tuple[str, int]:
    item = job_items(world)[job.job_id]
    return item["status"], background_messages(world)[job.job_id]


# ---------------------------------------------------------------------------------------------- pinned interleavings


def test_crash_after_claim_is_recovered_and_retried(world: World) -> None:
    job, _ = _single_job(world)
    faults.arm("background.before_side_effect", 1, "crash")
    with pytest.raises(faults.InjectedCrash):
        _scan_once(world, T0 + timedelta(seconds=1))
    assert _state(world, job) == ("running", 0)
    assert _scan_once(world, T0 + timedelta(minutes=2)).recovered == 0  # the lease has not expired yet
    assert _scan_once(world, T0 + timedelta(minutes=2, seconds=2)).recovered == 1
    item = job_items(world)[job.job_id]
    assert item["status"] == "retrying" and item["lastErrorCode"] == "lease_expired" and item["attempts"] == 1
    _scan_once(world, T0 + timedelta(minutes=8))
    assert _state(world, job) == ("succeeded", 1)
    assert job_items(world)[job.job_id]["attempts"] == 2


def test_crashes_on_every_attempt_fail_the_job_without_a_message(world: World) -> None:
    job, _ = _single_job(world)
    at = T0 + timedelta(seconds=1)
    for _ in range(3):
        faults.arm("background.before_side_effect", 1, "crash")
        with pytest.raises(faults.InjectedCrash):
            _scan_once(world, at)
        at += timedelta(minutes=2, seconds=1)
        _scan_once(world, at)  # recovers the lease: retrying, or failed after the third attempt
        item = job_items(world)[job.job_id]
        if item["status"] == "retrying":
            at = datetime.fromisoformat(item["nextAttemptAt"].replace("Z", "+00:00")) + timedelta(seconds=1)
    item = job_items(world)[job.job_id]
    assert (item["status"], item["attempts"], item["lastErrorCode"]) == ("failed", 3, "lease_expired")
    assert background_messages(world)[job.job_id] == 0


def _at(event: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(event["at"].replace("Z", "+00:00"))


def _allowed_attempts(world: World, job: BackgroundJob) -> list[int]:
    """The attempts whose `background.execute` decision was `allowed`, as the audit shows them."""
    return sorted(int(e["metadata"]["attempt"]) for e in audit_by_job(world)[job.job_id]
                  if e["action"] == "background.execute" and e["decision"] == "allowed")


def _message_then_crash(world: World, job: BackgroundJob, *, transient_first: int = 0) -> datetime:
    """Runs the job `transient_first` times into a transient error, then once into a crash right after its
    message was written, and lets the lease expire. Returns the time of that recovery scan."""
    at = T0 + timedelta(seconds=1)
    for _ in range(transient_first):
        faults.arm("background.before_side_effect", 1, "transient")
        assert _scan_once(world, at).retried == 1
        item = job_items(world)[job.job_id]
        at = datetime.fromisoformat(item["nextAttemptAt"].replace("Z", "+00:00")) + timedelta(seconds=1)
    faults.arm("background.after_message", 1, "crash")
    with pytest.raises(faults.InjectedCrash):
        _scan_once(world, at)
    assert _state(world, job) == ("running", 1)  # the message is written, the job is not finished
    at += timedelta(minutes=2, seconds=1)
    _scan_once(world, at)
    return at


def test_crash_after_the_message_is_finished_by_lease_recovery_without_a_second_message(world: World) -> None:
    job, _ = _single_job(world)
    at = _message_then_crash(world, job)
    # Recovery finds the message delivered: the job succeeded, with no retry and no second message.
    item = job_items(world)[job.job_id]
    assert item["status"] == "succeeded" and item["attempts"] == 1 and "lastErrorCode" not in item
    assert _state(world, job) == ("succeeded", 1)
    assert at < T0 + timedelta(minutes=10)
    # The attempt that wrote the message left its `allowed` decision, although its worker died before finishing.
    assert _allowed_attempts(world, job) == [1]
    decisions = [(e["decision"], e["reason"]) for e in sorted(audit_by_job(world)[job.job_id], key=_at)
                 if e["action"] == "background.execute"]
    assert decisions == [("allowed", "allowed"), ("succeeded", "already_delivered")]


def test_crash_after_the_message_on_the_last_attempt_still_counts_the_delivered_message(world: World) -> None:
    """Two transient failures, then the third (last) attempt writes its message and dies before finishing.
    The message was delivered, so the job must not end `failed` next to it."""
    job, _ = _single_job(world)
    _message_then_crash(world, job, transient_first=2)
    item = job_items(world)[job.job_id]
    status, messages = item["status"], background_messages(world)[job.job_id]
    assert _allowed_attempts(world, job) == [1, 2, 3]  # the transient ones, and the one that wrote the message
    assert (status, messages) == ("succeeded", 1), (
        f"job ended {status} (attempts {item['attempts']}/{item['maxAttempts']}, lastErrorCode "
        f"{item.get('lastErrorCode')}) although its message {job.job_id} was delivered"
    )


def test_transient_error_after_the_message_on_the_last_attempt_still_counts_the_delivered_message(world: World) -> None:
    job, _ = _single_job(world)
    at = T0 + timedelta(seconds=1)
    for _ in range(2):
        faults.arm("background.before_side_effect", 1, "transient")
        _scan_once(world, at)
        item = job_items(world)[job.job_id]
        at = datetime.fromisoformat(item["nextAttemptAt"].replace("Z", "+00:00")) + timedelta(seconds=1)
    faults.arm("background.after_message", 1, "transient")
    _scan_once(world, at)
    item = job_items(world)[job.job_id]
    assert (item["status"], background_messages(world)[job.job_id]) == ("succeeded", 1), (
        f"job ended {item['status']} ({item.get('lastErrorCode')}) although its message was delivered"
    )


def test_a_job_whose_message_was_delivered_cannot_end_cancelled(world: World) -> None:
    """The seed forbids cancelling a running job precisely so that the page never shows `cancelled` for a
    message that was sent. A crash after the message makes the job `retrying` (cancellable) again."""
    job, user = _single_job(world)
    at = _message_then_crash(world, job)
    with contextlib.suppress(Conflict):  # refusing the cancel is one correct answer
        cancel_job(world.db, user, job.job_id, at + timedelta(seconds=1))
    _scan_once(world, at + timedelta(minutes=10))
    status, messages = _state(world, job)
    assert messages == 1
    assert status == "succeeded", f"job ended {status} although its message {job.job_id} was delivered"


def test_a_job_whose_message_was_delivered_is_not_failed_by_a_later_revoke(world: World) -> None:
    job, user = _single_job(world)
    at = _message_then_crash(world, job)
    set_permission(world.db, SKILLS, user, skill_id=SKILL, code=CODE, scope=GrantScope.user(), granted=False,
                   now=at + timedelta(seconds=1))
    _scan_once(world, at + timedelta(minutes=10))
    status, messages = _state(world, job)
    assert messages == 1
    assert status == "succeeded", f"job ended {status} although its message {job.job_id} was delivered"


def test_cancel_racing_the_claim_has_one_winner(world: World) -> None:
    seed(world, users=1, agents_per_user=2, jobs=60, due_from=T0 - timedelta(minutes=1), due_span_s=30,
         rng=random.Random(3))
    user = world.agents[0].user_id
    barrier = threading.Barrier(3)
    cancelled: list[str] = []
    refused: list[str] = []

    def canceller(jobs: list[BackgroundJob]) -> None:
        db = world.new_db()
        barrier.wait(timeout=30)
        for job in jobs:
            try:
                cancel_job(db, user, job.job_id, T0)
                cancelled.append(job.job_id)
            except Conflict:
                refused.append(job.job_id)

    def scanner() -> None:
        db = world.new_db()
        barrier.wait(timeout=30)
        Worker(db, SKILLS.background, rng=random.Random(5)).scan(T0)

    threads = [threading.Thread(target=canceller, args=(world.jobs[::2],)),
               threading.Thread(target=canceller, args=(world.jobs[1::2][::-1],)),
               threading.Thread(target=scanner)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    _scan_once(world, T0 + timedelta(minutes=1))
    items, messages = job_items(world), background_messages(world)
    for job in world.jobs:
        status = items[job.job_id]["status"]
        if job.job_id in cancelled:
            assert (status, messages[job.job_id]) == ("cancelled", 0)
        else:
            assert (status, messages[job.job_id]) == ("succeeded", 1)
    assert len(cancelled) + len(refused) == len(world.jobs)


# ---------------------------------------------------------------------------------------------- the storm


@dataclass
class Storm:
    scanners: int = 4
    chaos_rounds: int = 6
    max_rounds: int = 30
    fault_every_s: tuple[float, float] = (0.004, 0.03)
    faults_per_round: int = 14
    cancels_per_round: int = 6
    stats: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    errors: list[BaseException] = field(default_factory=list)


def _run_round(world: World, storm: Storm, now: datetime, rng: random.Random, *, chaos: bool,
               cancellable: list[tuple[str, str]]) -> None:
    """One scheduled scan time: `storm.scanners` concurrent invocations. A crashed invocation is replaced by
    a new one (a fresh Worker, as a new Lambda would be) until each slot completes a scan."""
    dbs = [world.new_db() for _ in range(storm.scanners + 1)]
    done = threading.Event()
    slot_seeds = [rng.randrange(1 << 30) for _ in range(storm.scanners)]

    def slot(i: int) -> None:
        for restart in range(50):
            worker = CountingWorker(dbs[i], SKILLS.background, rng=random.Random(slot_seeds[i] + restart),
                                    tally=storm.stats, lock=storm.lock)
            try:
                summary = worker.scan(now, lambda: 120_000)
            except faults.InjectedCrash as crash:
                with storm.lock:
                    storm.stats["crashes"] += 1
                    storm.stats[f"crashes at {str(crash).rsplit(' ', 1)[-1]}"] += 1
                continue
            except BaseException as error:  # noqa: BLE001 - anything else is a failure of the test
                with storm.lock:
                    storm.errors.append(error)
                return
            with storm.lock:
                storm.stats["scans"] += 1
                storm.stats["recovered"] += summary.recovered
                storm.stats["succeeded"] += summary.succeeded
                storm.stats["retried"] += summary.retried
                storm.stats["failed"] += summary.failed
            return
        with storm.lock:
            storm.errors.append(AssertionError(f"slot {i} crashed 50 times in one round"))

    chaos_rng = random.Random(rng.randrange(1 << 30))

    def chaos_monkey() -> None:
        db = dbs[-1]
        armed = cancels = 0
        while not done.is_set() and (armed < storm.faults_per_round or cancels < storm.cancels_per_round):
            if armed < storm.faults_per_round:
                point = chaos_rng.choice(["background.before_side_effect", "background.after_message"])
                kind = chaos_rng.choice(["crash", "crash", "transient"])
                faults.arm(point, 1, kind)
                armed += 1
                with storm.lock:
                    storm.stats[f"armed {kind} at {point}"] += 1
            if cancels < storm.cancels_per_round and cancellable:
                user, job_id = cancellable.pop(chaos_rng.randrange(len(cancellable)))
                cancels += 1
                try:
                    cancel_job(db, user, job_id, now)
                    with storm.lock:
                        storm.stats["cancelled by user"] += 1
                except (Conflict, NotFound):
                    with storm.lock:
                        storm.stats["cancel refused"] += 1
            time.sleep(chaos_rng.uniform(*storm.fault_every_s))

    threads = [threading.Thread(target=slot, args=(i,), name=f"scan-slot-{i}") for i in range(storm.scanners)]
    monkey = threading.Thread(target=chaos_monkey, name="chaos") if chaos else None
    for thread in threads:
        thread.start()
    if monkey is not None:
        monkey.start()
    for thread in threads:
        thread.join(timeout=60)
    done.set()
    if monkey is not None:
        monkey.join(timeout=10)
    assert not any(t.is_alive() for t in threads), "a scan slot hung"


def test_storm_of_crashes_cancels_and_revokes_keeps_every_invariant(world: World) -> None:
    started = time.monotonic()
    rng = random.Random(20240607)
    storm = Storm()
    users = seed(world, users=6, agents_per_user=2, jobs=300, due_from=T0 - timedelta(minutes=5),
                 due_span_s=12 * 60, rng=rng)
    revoked_user = users[0]
    revoke_after_round = 2
    revoked_at: datetime | None = None
    cancellable = [(job.user_id, job.job_id) for job in rng.sample(world.jobs, 60)]

    rounds = 0
    now = T0
    for round_no in range(storm.max_rounds):
        chaos = round_no < storm.chaos_rounds
        _run_round(world, storm, now, rng, chaos=chaos, cancellable=cancellable)
        rounds += 1
        assert storm.errors == [], storm.errors
        if round_no == revoke_after_round:
            revoked_at = now + timedelta(seconds=30)
            set_permission(world.db, SKILLS, revoked_user, skill_id=SKILL, code=CODE, scope=GrantScope.user(),
                           granted=False, now=revoked_at)
        if not chaos:
            faults.clear()
            open_jobs = [i for i in job_items(world).values() if i["status"] not in FINAL]
            if not open_jobs:
                break
        now += ROUND
    leftover_faults = 0
    for point in faults.FaultPoint:
        while faults.take(point) is not None:
            leftover_faults += 1

    items = job_items(world)
    messages = background_messages(world)
    message_times = {
        m["sk"]: datetime.fromisoformat(m["createdAt"].replace("Z", "+00:00"))
        for m in scan_table(world.db, world.settings.tables.messages) if m.get("origin") == "background"
    }
    audit = audit_by_job(world)
    statuses = Counter(i["status"] for i in items.values())
    storm.stats["lease recoveries (audit)"] = sum(
        1 for events in audit.values() for e in events if e.get("reason") == "lease_expired"
    )
    storm.stats["transient failures (audit)"] = sum(
        1 for events in audit.values() for e in events if e.get("reason") == "transient_error"
    )
    report = (
        f"rounds {rounds}, {time.monotonic() - started:.1f} s, statuses {dict(statuses)}, "
        f"faults armed but never reached {leftover_faults}, stats {dict(sorted(storm.stats.items()))}"
    )
    print("\n" + report)

    violations: list[str] = []
    assert set(items) == {j.job_id for j in world.jobs}
    for job in world.jobs:
        item = items[job.job_id]
        status, count = item["status"], messages[job.job_id]
        events = audit.get(job.job_id, [])
        execute = [e for e in events if e["action"] == "background.execute"]
        if status not in LIFECYCLE:
            violations.append(f"{job.job_id}: status {status!r} is not a lifecycle status")
        if status not in FINAL:
            violations.append(f"{job.job_id}: left {status}")
        if item["attempts"] > item["maxAttempts"]:
            violations.append(f"{job.job_id}: attempts {item['attempts']} > maxAttempts {item['maxAttempts']}")
        if status == "succeeded" and count != 1:
            violations.append(f"{job.job_id}: succeeded with {count} messages")
        if status in ("failed", "cancelled") and count != 0:
            violations.append(
                f"{job.job_id}: {status} (lastErrorCode {item.get('lastErrorCode')}, attempts {item['attempts']}) "
                f"but its message was delivered"
            )
        succeeded_events = [e for e in execute if e["decision"] == "succeeded"]
        if count and job.job_id in message_times and not any(
            e["decision"] == "allowed" and _at(e) == message_times[job.job_id] for e in execute
        ):
            violations.append(f"{job.job_id}: its message has no `allowed` decision of the attempt that wrote it")
        if status == "succeeded" and len(succeeded_events) != 1:
            violations.append(f"{job.job_id}: succeeded with {len(succeeded_events)} succeeded events")
        if status != "succeeded" and succeeded_events:
            violations.append(f"{job.job_id}: {status} but the audit says succeeded")
        if status == "failed" and not any(e["decision"] in ("failed", "denied") for e in execute):
            violations.append(f"{job.job_id}: failed without a failed/denied event")
        if status == "cancelled" and not any(
            e["action"] == "background.cancel" and e["decision"] == "cancelled" for e in events
        ):
            violations.append(f"{job.job_id}: cancelled without a background.cancel event")
        written = message_times.get(job.job_id)
        if job.user_id == revoked_user and revoked_at is not None and written is not None and written > revoked_at:
            violations.append(f"{job.job_id}: message written at {written}, after its grant was revoked")

    attempts = sum(int(i["attempts"]) for i in items.values())
    if attempts != storm.stats["claims"]:
        violations.append(f"attempts add up to {attempts} but the scanners won {storm.stats['claims']} claims")

    # The storm did storm: crashes at both points, transient errors, recoveries, cancels, lost races.
    assert storm.stats["crashes at background.before_side_effect"] > 0, report
    assert storm.stats["crashes at background.after_message"] > 0, report
    assert storm.stats["lease recoveries (audit)"] > 0 and storm.stats["transient failures (audit)"] > 0, report
    assert storm.stats["cancelled by user"] > 0 and storm.stats["lost_races"] > 0, report
    assert statuses["succeeded"] > 0 and statuses["failed"] > 0, report
    assert violations == [], f"{len(violations)} violations; {report}\n" + "\n".join(violations[:40])
    assert time.monotonic() - started < 120, report
