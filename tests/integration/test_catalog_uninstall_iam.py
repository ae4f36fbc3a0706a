"""An uninstall's clean-up within CatalogFunction's role (template.yaml, enforced as the local stack enforces it:
skillcore_local/iam.py): the skill's grants revoked, its background jobs cancelled (a retrying one only after its
message's key is read) and the automation jobs that use its tools deleted. The stack tests uninstall over HTTP a
skill with grants only; the jobs here are made through RpcFunction (moto), the clean-up runs on a client guarded
by CatalogFunction's role, so a request that role does not allow fails the test."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Any

from skillcore.background import job_store
from skillcore.background.lifecycle import JobStatus
from skillcore.db.dynamo import key, make_db
from skillcore.db.errors import StoreError
from skillcore.packages import uninstall
from skillcore.policy import grant_store
from skillcore.settings import Settings
from skillcore_local import iam
from tests.support import invoke, load_event, load_function

SKILL = "goal-check-in-reminder"
USER = "user-alice"


def test_an_uninstall_cleans_up_within_the_catalog_functions_role(aws: Any) -> None:
    rpc = load_function("RpcFunction")
    assert invoke(rpc, load_event("rpc_put_me.json", body={"timezone": "Asia/Shanghai", "displayName": "A"}))[0] == 200
    agent = invoke(rpc, load_event("rpc_create_agent.json", body={"name": "Mika"}))[1]
    grant = {"skillId": SKILL, "permissionCode": "proactive_message:write", "scope": {"type": "user"}}
    assert invoke(rpc, load_event("rpc_patch_permission.json", body=grant | {"granted": True}))[0] == 200
    jobs = []
    for hours in (1, 2):
        job = {"skillId": SKILL, "agentId": agent["agentId"], "runAt": (datetime.now(UTC) + timedelta(hours=hours)).isoformat(),
               "note": "run"}
        status, created = invoke(rpc, load_event("rpc_create_background_job.json", body=job))
        assert status == 201, created
        jobs.append(created["jobId"])
    auto = {"title": "weekly", "scheduleType": "weekly", "localTime": "09:30", "weekday": 1,
            "config": {"prompt": "summarise", "tools": ["memory_write"]}}
    status, automation = invoke(rpc, load_event("rpc_create_automation_job.json", body=auto))
    assert status == 201, automation

    plain = make_db(Settings.from_env())
    # The second job failed once and waits for its retry: cancelling it reads whether its message was written.
    plain.client.update_item(TableName=plain.tables.jobs, Key=key(pk=jobs[1]), UpdateExpression="SET #s = :r",
                             ExpressionAttributeNames={"#s": "status"},
                             ExpressionAttributeValues={":r": {"S": JobStatus.RETRYING.value}})

    db = make_db(Settings.from_env())
    iam.guard(db.client, "CatalogFunction", os.environ)
    now = datetime.now(UTC)
    assert uninstall.remove_grants(db, USER, SKILL, "1.0.0", now) == 1
    # Both background jobs, the automation job made here and the default daily memory job (the first PUT /rpc/me
    # makes it), which writes memories too.
    assert uninstall.remove_jobs(db, USER, SKILL, now, tool_names=("memory_write",)) == 4

    assert [job_store.get_job(plain, job_id).status for job_id in jobs] == [JobStatus.CANCELLED] * 2  # type: ignore[union-attr]
    assert not [g for g in grant_store.all_grants(plain, USER) if g.skill_id == SKILL and g.active]
    assert invoke(rpc, load_event("rpc_get_automation_job.json", path_ids={"JOB_ID": automation["jobId"]}))[0] == 404


def test_the_guard_refuses_what_the_catalog_functions_role_does_not_allow(aws: Any) -> None:
    """The test above can fail: CatalogFunction's role has nothing of the memories table."""
    db = make_db(Settings.from_env())
    iam.guard(db.client, "CatalogFunction", os.environ)
    try:
        db.client.get_item(TableName=db.tables.memories, Key=key(pk="x", sk="y"))
    except Exception as error:  # noqa: BLE001 - botocore's ClientError, or the store's translation of it
        assert "AccessDenied" in str(error) or isinstance(error, StoreError)
    else:
        raise AssertionError("the guard allowed a read of the memories table")
