"""Automation jobs and runs tables.

AutomationJobs: pk = jobId. GSIs: `byUser` (userId, createdSort) for the API; `due` (dueShard, dueAt),
sparse: only active jobs carry it, sharded like the background queue (db/due_index.py), so the scan reads exactly the
due, active jobs with a Query. The job item is its own lease: a claim moves `nextRunAt` a lease ahead and
records the slot in `currentSlot`, so a worker that dies leaves a job that is simply due again shortly.
The default job's id is derived from the user id, so it can only ever be created once.

AutomationRuns: pk = jobId, sk = scheduledSlot (ms UTC): one run per job and slot (the dedupe key),
updated in place by retries of the same slot.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from skillcore.automation.models import (
    AutomationConfig,
    AutomationJob,
    AutomationRun,
    AutomationStatus,
    RunStatus,
)
from skillcore.clock import parse_time, to_sort_time
from skillcore.db import due_index
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.due_index import SHARDS, due_attrs, query_due
from skillcore.db.dynamo import Db, key, query_page
from skillcore.db.errors import ConditionFailed
from skillcore.db.records import UnreadableRecord, read_record, readable
from skillcore.db.transact import Op, write
from skillcore.errors import AlreadyExists

BY_USER = "byUser"


def to_job_item(job: AutomationJob, shards: int = SHARDS) -> dict[str, Any]:
    data: dict[str, Any] = {
        "pk": job.job_id, "userId": job.user_id, "title": job.title, "scheduleType": job.schedule_type,
        "localTime": job.local_time, "weekday": job.weekday, "timezone": job.timezone, "agentId": job.agent_id,
        "config": {"prompt": job.config.prompt, "tools": list(job.config.tools)}, "status": job.status.value,
        "nextRunAt": to_sort_time(job.next_run_at),
        "lastRunAt": to_sort_time(job.last_run_at) if job.last_run_at else None,
        "lastRunStatus": job.last_run_status.value if job.last_run_status else None,
        "isDefault": job.is_default, "revision": job.revision,
        "currentSlot": to_sort_time(job.current_slot) if job.current_slot else None,
        "slotAttempts": job.slot_attempts, "createdAt": to_sort_time(job.created_at),
        "updatedAt": to_sort_time(job.updated_at), "createdSort": f"{to_sort_time(job.created_at)}#{job.job_id}",
    }
    if job.status is AutomationStatus.ACTIVE:
        data |= due_attrs(job.job_id, job.next_run_at, shards)
    return to_item(data)


JOB_KIND = "automation_job"
RUN_KIND = "automation_run"


def job_from_item(item: dict[str, Any]) -> AutomationJob:
    """The job of an item; UnreadableRecord (type and id only) when the item does not make a valid job."""
    return read_record(JOB_KIND, item, _job)


def _job(item: dict[str, Any]) -> AutomationJob:
    def t(name: str) -> datetime | None:
        return parse_time(item[name]) if item.get(name) else None

    return AutomationJob(
        job_id=item["pk"], user_id=item["userId"], title=item["title"], schedule_type=item["scheduleType"],
        local_time=item["localTime"], weekday=item.get("weekday"), timezone=item["timezone"],
        agent_id=item.get("agentId"), config=AutomationConfig(**item["config"]),
        status=AutomationStatus(item["status"]), next_run_at=parse_time(item["nextRunAt"]),
        last_run_at=t("lastRunAt"), last_run_status=RunStatus(item["lastRunStatus"]) if item.get("lastRunStatus") else None,
        is_default=bool(item.get("isDefault")), revision=int(item["revision"]), current_slot=t("currentSlot"),
        slot_attempts=int(item.get("slotAttempts", 0)), created_at=parse_time(item["createdAt"]),
        updated_at=parse_time(item["updatedAt"]),
    )


def create_job_op(db: Db, job: AutomationJob) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": db.tables.automation_jobs, "Item": to_job_item(job, db.shards.write),
            "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"},
        }
    }


def create_job(db: Db, job: AutomationJob) -> None:
    try:
        write(db, Op("automation_job", create_job_op(db, job)))
    except ConditionFailed as error:
        raise AlreadyExists("automation job exists") from error


def get_job(db: Db, job_id: str, *, consistent: bool = True) -> AutomationJob | None:
    response = db.client.get_item(TableName=db.tables.automation_jobs, Key=key(pk=job_id), ConsistentRead=consistent)
    item = from_item(response.get("Item"))
    return job_from_item(item) if item else None


def list_jobs(db: Db, user_id: str, *, limit: int, cursor: str | None) -> tuple[list[AutomationJob], str | None]:
    page = query_page(db, table=db.tables.automation_jobs, index=BY_USER, partition=("userId", user_id),
                      limit=limit, cursor=cursor)
    return readable(JOB_KIND, page.items, _job), page.next_cursor


def replace_job_op(db: Db, job: AutomationJob, *, expected_revision: int) -> dict[str, Any]:
    """Writes the job's new state under optimistic concurrency (revision), keeping the due index in step."""
    return {
        "Put": {
            "TableName": db.tables.automation_jobs, "Item": to_job_item(job, db.shards.write),
            "ConditionExpression": "#rev = :rev",
            "ExpressionAttributeNames": {"#rev": "revision"},
            "ExpressionAttributeValues": {":rev": to_value(expected_revision)},
        }
    }


def owner_of(db: Db, job_id: str) -> str | None:
    """Only the owner of a job item, which reads even when the rest of the item does not."""
    response = db.client.get_item(TableName=db.tables.automation_jobs, Key=key(pk=job_id), ConsistentRead=True,
                                  ProjectionExpression="#u", ExpressionAttributeNames={"#u": "userId"})
    owner = (from_item(response.get("Item")) or {}).get("userId")
    return owner if isinstance(owner, str) else None


def delete_job(db: Db, job_id: str) -> None:
    db.client.delete_item(TableName=db.tables.automation_jobs, Key=key(pk=job_id))


def due_jobs(db: Db, shard_no: int, now: datetime, *, limit: int) -> list[AutomationJob | UnreadableRecord]:
    """Due active jobs of one shard, as the (eventually consistent) index shows them; an item that does not
    read is handed back as its UnreadableRecord, for the scan to isolate (it never fails the batch)."""
    jobs: list[AutomationJob | UnreadableRecord] = []
    for raw in query_due(db, db.tables.automation_jobs, shard_no, now, limit=limit):
        try:
            jobs.append(job_from_item(from_item(raw) or {}))
        except UnreadableRecord as error:
            jobs.append(error)
    return jobs


def quarantine(db: Db, job_id: str, now: datetime) -> None:
    """An unreadable job leaves the due index (due_index.quarantine)."""
    due_index.quarantine(db, db.tables.automation_jobs, job_id, ("dueShard", "dueAt"), now)


# -- runs ---------------------------------------------------------------------------------------------

def to_run_item(run: AutomationRun) -> dict[str, Any]:
    return to_item({
        "pk": run.job_id, "sk": to_sort_time(run.scheduled_slot), "runId": run.run_id, "status": run.status.value,
        "errorCode": run.error_code, "conversationIds": list(run.conversation_ids), "attempts": run.attempts,
        "startedAt": to_sort_time(run.started_at),
        "finishedAt": to_sort_time(run.finished_at) if run.finished_at else None,
        "slotDelayMs": run.slot_delay_ms,
    })


def run_from_item(item: dict[str, Any]) -> AutomationRun:
    return read_record(RUN_KIND, item, _run)


def _run(item: dict[str, Any]) -> AutomationRun:
    return AutomationRun(
        job_id=item["pk"], run_id=item["runId"], scheduled_slot=parse_time(item["sk"]),
        status=RunStatus(item["status"]), error_code=item.get("errorCode"),
        conversation_ids=tuple(item.get("conversationIds", [])), attempts=int(item.get("attempts", 1)),
        started_at=parse_time(item["startedAt"]),
        finished_at=parse_time(item["finishedAt"]) if item.get("finishedAt") else None,
        slot_delay_ms=int(item["slotDelayMs"]) if item.get("slotDelayMs") is not None else None,
    )


def put_run_op(db: Db, run: AutomationRun) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.automation_runs, "Item": to_run_item(run)}}


def get_run(db: Db, job_id: str, slot: datetime) -> AutomationRun | None:
    response = db.client.get_item(
        TableName=db.tables.automation_runs, Key=key(pk=job_id, sk=to_sort_time(slot)), ConsistentRead=True
    )
    item = from_item(response.get("Item"))
    return run_from_item(item) if item else None


def list_runs(db: Db, job_id: str, *, limit: int, cursor: str | None) -> tuple[list[AutomationRun], str | None]:
    page = query_page(db, table=db.tables.automation_runs, partition=("pk", job_id), limit=limit, cursor=cursor,
                      newest_first=True)
    return readable(RUN_KIND, page.items, _run), page.next_cursor


def probe(db: Db, shard_no: int, now: datetime) -> tuple[bool, bool]:
    """(due slots, nothing to recover) in a shard: a Query with Limit 1 (the dispatching scan's question)."""
    return bool(due_jobs(db, shard_no, now, limit=1)), False
