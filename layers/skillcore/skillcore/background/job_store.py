"""Jobs table: skill_background_jobs, the DynamoDB job queue.

Key design: pk = jobId. Three global secondary indexes, two of them sparse:
- `due`    hash `dueShard` ("due#0".."due#<N-1>"), range `dueAt` ("<nextAttemptAt ms>#<jobId>"): only jobs that
           are scheduled or retrying carry these attributes, so the index holds exactly the claimable jobs.
           Sharding by job id spreads one instant's jobs over N partitions (N: db.shards, see
           db/due_index.py); the dispatcher hands each due shard to a worker, so concurrent workers mostly
           claim different jobs instead of racing for the same ones.
- `leases` hash `leaseShard`, range `leaseAt` (lease expiry): only running jobs; the scan's lease recovery.
- `byUser` hash `userId`, range `createdSort` ("<createdAt ms>#<jobId>"): a user's jobs, newest first.
The due and lease indexes project `revision` and `status`, so a claim is one conditional UpdateItem
straight from the index entry (a stale entry simply loses the condition).

Every transition is a conditional update on id + revision + status (see background/lifecycle.py) that bumps
the revision; a lost condition is translated into LeaseLost/VersionConflict here and nowhere else.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from msgspec import Struct

from skillcore.background.lifecycle import DUE, JobStatus, check_transition
from skillcore.background.models import BackgroundJob
from skillcore.clock import parse_time, to_sort_time
from skillcore.db import due_index
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.due_index import SHARDS, due_attrs, query_due, shard
from skillcore.db.dynamo import Db, key, query_page
from skillcore.db.errors import ConditionFailed
from skillcore.db.records import UnreadableRecord, read_record, readable
from skillcore.db.transact import Op, write
from skillcore.errors import LeaseLost

LEASE_INDEX = "leases"
BY_USER = "byUser"
LEASE = timedelta(minutes=2)


def lease_attrs(job_id: str, lease_expires_at: datetime, shards: int = SHARDS) -> dict[str, str]:
    return {"leaseShard": f"lease#{shard(job_id, shards)}", "leaseAt": f"{to_sort_time(lease_expires_at)}#{job_id}"}


def to_job_item(job: BackgroundJob, shards: int = SHARDS) -> dict[str, Any]:
    data: dict[str, Any] = {
        "pk": job.job_id, "userId": job.user_id, "skillId": job.skill_id, "skillVersion": job.skill_version,
        "agentId": job.agent_id, "conversationId": job.conversation_id, "grantId": job.grant_id,
        "payload": job.payload, "status": job.status.value, "scheduledAt": to_sort_time(job.scheduled_at),
        "nextAttemptAt": to_sort_time(job.next_attempt_at), "attempts": job.attempts, "maxAttempts": job.max_attempts,
        "revision": job.revision, "lastErrorCode": job.last_error_code, "createdAt": to_sort_time(job.created_at),
        "updatedAt": to_sort_time(job.updated_at), "createdSort": f"{to_sort_time(job.created_at)}#{job.job_id}",
        "leaseExpiresAt": to_sort_time(job.lease_expires_at) if job.lease_expires_at else None,
        "completedAt": to_sort_time(job.completed_at) if job.completed_at else None,
    }
    if job.status in DUE:
        data |= due_attrs(job.job_id, job.next_attempt_at, shards)
    return to_item(data)


JOB_KIND = "background_job"


def job_from_item(item: dict[str, Any]) -> BackgroundJob:
    """The job of an item; UnreadableRecord (type and id only) when the item does not make a valid job."""
    return read_record(JOB_KIND, item, _job)


def _job(item: dict[str, Any]) -> BackgroundJob:
    def t(name: str) -> datetime | None:
        return parse_time(item[name]) if item.get(name) else None

    return BackgroundJob(
        job_id=item["pk"], user_id=item["userId"], skill_id=item["skillId"], skill_version=item["skillVersion"],
        agent_id=item["agentId"], conversation_id=item["conversationId"], grant_id=item.get("grantId"),
        payload=item.get("payload", {}), status=JobStatus(item["status"]), scheduled_at=parse_time(item["scheduledAt"]),
        next_attempt_at=parse_time(item["nextAttemptAt"]), attempts=int(item["attempts"]),
        max_attempts=int(item["maxAttempts"]), revision=int(item["revision"]), lease_expires_at=t("leaseExpiresAt"),
        last_error_code=item.get("lastErrorCode"), created_at=parse_time(item["createdAt"]),
        updated_at=parse_time(item["updatedAt"]), completed_at=t("completedAt"),
    )


def put_job_op(db: Db, job: BackgroundJob) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": db.tables.jobs, "Item": to_job_item(job, db.shards.write),
            "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"},
        }
    }


def get_job(db: Db, job_id: str) -> BackgroundJob | None:
    item = from_item(db.client.get_item(TableName=db.tables.jobs, Key=key(pk=job_id), ConsistentRead=True).get("Item"))
    return job_from_item(item) if item else None


def list_jobs(
    db: Db, user_id: str, *, status: JobStatus | None, limit: int, cursor: str | None
) -> tuple[list[BackgroundJob], str | None]:
    page = query_page(
        db, table=db.tables.jobs, index=BY_USER, partition=("userId", user_id), limit=limit, cursor=cursor,
        newest_first=True, filter_expression="#status = :status" if status else None,
        names={"#status": "status"} if status else None, values={":status": status.value} if status else None,
    )
    return readable(JOB_KIND, page.items, _job), page.next_cursor


# -- transitions ------------------------------------------------------------------------------------

class Candidate(Struct, frozen=True):
    """A due or leased job as the sparse index shows it (possibly stale)."""

    job_id: str
    revision: int
    status: JobStatus


def _candidate(raw: dict[str, Any]) -> Candidate:
    return Candidate(job_id=raw["pk"]["S"], revision=int(raw["revision"]["N"]), status=JobStatus(raw["status"]["S"]))


def _candidates(response: dict[str, Any]) -> list[Candidate | UnreadableRecord]:
    """Index entries; an entry that does not read is handed back as its UnreadableRecord for the scan to
    isolate, so one bad item never fails the batch."""
    found: list[Candidate | UnreadableRecord] = []
    for raw in response.get("Items", []):
        try:
            found.append(read_record(JOB_KIND, raw, _candidate))
        except UnreadableRecord as error:
            found.append(error)
    return found


def due_candidates(db: Db, shard_no: int, now: datetime, *, limit: int) -> list[Candidate | UnreadableRecord]:
    return _candidates({"Items": query_due(db, db.tables.jobs, shard_no, now, limit=limit)})


def quarantine(db: Db, job_id: str, now: datetime) -> None:
    """An unreadable job leaves the due and lease indexes (due_index.quarantine)."""
    due_index.quarantine(db, db.tables.jobs, job_id, ("dueShard", "dueAt", "leaseShard", "leaseAt"), now)


def expired_leases(db: Db, shard_no: int, now: datetime, *, limit: int) -> list[Candidate | UnreadableRecord]:
    response = db.client.query(
        TableName=db.tables.jobs, IndexName=LEASE_INDEX,
        KeyConditionExpression="#shard = :shard AND #lease < :now",
        ExpressionAttributeNames={"#shard": "leaseShard", "#lease": "leaseAt"},
        ExpressionAttributeValues={":shard": {"S": f"lease#{shard_no}"}, ":now": {"S": to_sort_time(now)}},
        Limit=limit,
    )
    return _candidates(response)


def transition_op(
    db: Db, job_id: str, *, revision: int, current: frozenset[JobStatus] | JobStatus, target: JobStatus,
    now: datetime, sets: dict[str, Any] | None = None, adds: dict[str, int] | None = None,
    removes: tuple[str, ...] = (), due_before: datetime | None = None,
) -> dict[str, Any]:
    """The conditional UpdateItem of one lifecycle transition (named sub-conditions: same revision,
    expected status, optionally due by `due_before`)."""
    currents = frozenset({current}) if isinstance(current, JobStatus) else current
    for status in currents:
        check_transition(status, target)
    names: dict[str, str] = {"#rev": "revision", "#status": "status", "#u": "updatedAt"}
    values: dict[str, Any] = {":rev": to_value(revision), ":next_rev": to_value(revision + 1),
                              ":target": to_value(target.value), ":now": to_value(to_sort_time(now))}
    status_values = {f":from{i}": to_value(s.value) for i, s in enumerate(sorted(currents))}
    values |= status_values
    same_revision = "#rev = :rev"
    expected_status = f"#status IN ({', '.join(status_values)})"
    conditions = [same_revision, expected_status]
    if due_before is not None:
        names["#next"] = "nextAttemptAt"
        values[":due"] = to_value(to_sort_time(due_before))
        conditions.append("#next <= :due")
    set_parts = ["#rev = :next_rev", "#status = :target", "#u = :now"]
    for i, (name, value) in enumerate((sets or {}).items()):
        names[f"#s{i}"] = name
        values[f":s{i}"] = to_value(value)
        set_parts.append(f"#s{i} = :s{i}")
    for i, (name, amount) in enumerate((adds or {}).items()):
        names[f"#a{i}"] = name
        values[f":a{i}"] = to_value(amount)
        set_parts.append(f"#a{i} = #a{i} + :a{i}")
    expression = "SET " + ", ".join(set_parts)
    if removes:
        remove_names = []
        for i, name in enumerate(removes):
            names[f"#r{i}"] = name
            remove_names.append(f"#r{i}")
        expression += " REMOVE " + ", ".join(remove_names)
    return {
        "Update": {
            "TableName": db.tables.jobs, "Key": key(pk=job_id), "UpdateExpression": expression,
            "ConditionExpression": " AND ".join(conditions), "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }


def apply(db: Db, op: dict[str, Any]) -> BackgroundJob:
    """Runs one transition alone; returns the job as it now is, or raises LeaseLost with the job as it was."""
    try:
        after = write(db, Op("job", op), return_values="ALL_NEW")
    except ConditionFailed as failed:
        raise lost(failed.old) from failed
    return job_from_item(after or {})


def lost(before: dict[str, Any] | None) -> LeaseLost:
    """The LeaseLost for a transition whose condition failed, saying the status the job had instead."""
    return LeaseLost("the job changed under this worker", {"status": before["status"]} if before else None)


def claim_op(db: Db, candidate: Candidate, now: datetime) -> dict[str, Any]:
    lease_until = now + LEASE
    return transition_op(
        db, candidate.job_id, revision=candidate.revision, current=DUE, target=JobStatus.RUNNING, now=now,
        sets={"leaseExpiresAt": to_sort_time(lease_until), **lease_attrs(candidate.job_id, lease_until, db.shards.write)},
        adds={"attempts": 1}, removes=("dueShard", "dueAt"), due_before=now,
    )


def retry_sets(job_id: str, at: datetime, error_code: str, shards: int = SHARDS) -> dict[str, Any]:
    return {"nextAttemptAt": to_sort_time(at), "lastErrorCode": error_code, **due_attrs(job_id, at, shards)}


LEASE_FIELDS = ("leaseShard", "leaseAt", "leaseExpiresAt")


def probe(db: Db, shard_no: int, now: datetime) -> tuple[bool, bool]:
    """(due jobs, expired leases) in a shard: a Query with Limit 1 on each (the dispatching scan's question)."""
    return (bool(due_candidates(db, shard_no, now, limit=1)), bool(expired_leases(db, shard_no, now, limit=1)))
