"""What an uninstall removes besides the install (packages/installs.py `uninstall`): every grant of the skill,
revoked and audited as `permission.revoke` with reason `uninstall`; its background jobs not yet run, cancelled
through the background service (audited `background.cancel`); the automation jobs that use one of its tools,
deleted. Imported by the first uninstall only."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from skillcore.automation import service as automation
from skillcore.automation import store as automation_store
from skillcore.background import job_store
from skillcore.background import service as background
from skillcore.background.errors import JobNotCancellable
from skillcore.background.lifecycle import CANCELLABLE
from skillcore.db.dynamo import Db
from skillcore.errors import NotFound
from skillcore.ids import new_id
from skillcore.policy import audit_store, grant_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision

REASON = "uninstall"


def remove_grants(db: Db, user_id: str, skill_id: str, version: str, now: datetime) -> int:
    revoked = 0
    for grant in grant_store.all_grants(db, user_id):
        if grant.skill_id != skill_id or not grant.active:
            continue
        after = grant_store.set_grant(db, user_id=user_id, skill_id=skill_id, skill_version=version,
                                      code=grant.permission_code, scope=grant.scope, granted=False,
                                      grant_id=grant.grant_id, now=now)
        audit_store.put_audit(db, AuditEvent(
            event_id=new_id(now), user_id=user_id, at=now, skill_id=skill_id, skill_version=version,
            action=AuditAction.PERMISSION_REVOKE, decision=Decision.SUCCEEDED, scope=grant.scope,
            target_id=grant.scope.agent_id, reason=REASON,
            metadata=AuditMetadata(permission_codes=(grant.permission_code,), matched_grant_ids=(after.grant_id,)),
        ))
        revoked += 1
    return revoked


def remove_jobs(db: Db, user_id: str, skill_id: str, now: datetime, *, tool_names: Iterable[str] = ()) -> int:
    removed = 0
    cursor: str | None = None
    while True:
        jobs, cursor = job_store.list_jobs(db, user_id, status=None, limit=100, cursor=cursor)
        for job in jobs:
            if job.skill_id == skill_id and job.status in CANCELLABLE:
                try:
                    background.cancel_job(db, user_id, job.job_id, now)
                    removed += 1
                except JobNotCancellable:
                    pass  # it started meanwhile: its policy re-check before the side effect finds no grant
        if cursor is None:
            break
    tools = frozenset(tool_names)
    if tools:
        cursor = None
        while True:
            automations, cursor = automation_store.list_jobs(db, user_id, limit=100, cursor=cursor)
            for found in automations:
                if tools & set(found.config.tools):
                    try:
                        automation.delete_job(db, user_id, found.job_id)
                        removed += 1
                    except NotFound:
                        pass
            if cursor is None:
                break
    return removed
