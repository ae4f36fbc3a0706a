"""Domain -> API bodies (camelCase, UTC times with Z). The only place that knows the API's shapes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from pydantic.alias_generators import to_camel

from skillcore.clock import to_api_time

if TYPE_CHECKING:  # only types: a function that renders messages need not import the job or audit models
    from skillcore.automation.models import AutomationJob, AutomationRun
    from skillcore.background.models import BackgroundJob
    from skillcore.memory.models import MemoryItem
    from skillcore.models import Agent, Conversation, Message, Profile, SkillRun
    from skillcore.policy.audit import AuditEvent
    from skillcore.policy.grants import GrantScope, PermissionGrant
    from skillcore.services.skills import CatalogEntry


def _time(value: Any) -> str | None:
    return to_api_time(value) if value is not None else None


def profile(p: Profile) -> dict[str, Any]:
    return {
        "userId": p.user_id, "timezone": p.timezone, "displayName": p.display_name,
        "createdAt": _time(p.created_at), "updatedAt": _time(p.updated_at),
    }


def agent(a: Agent) -> dict[str, Any]:
    return {
        "agentId": a.agent_id, "name": a.name, "persona": a.persona,
        "defaultConversationId": a.default_conversation_id, "lastReplyAt": _time(a.last_reply_at),
        "createdAt": _time(a.created_at),
    }


def conversation(c: Conversation) -> dict[str, Any]:
    body: dict[str, Any] = {
        "conversationId": c.conversation_id, "kind": c.kind.value, "agentIds": c.agent_ids, "title": c.title,
        "messageCount": c.message_count, "lastMessageAt": _time(c.last_message_at),
        "lastMessagePreview": c.last_message_preview, "createdAt": _time(c.created_at),
    }
    if c.automation_job_id:
        body["automationJobId"] = c.automation_job_id
    return body


def message(m: Message, *, admin: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messageId": m.message_id, "conversationId": m.conversation_id, "role": m.role.value,
        "text": m.text, "origin": m.origin.value, "createdAt": _time(m.created_at),
    }
    if m.agent_id:
        body["agentId"] = m.agent_id
    if admin:
        body["hiddenFromUser"] = m.hidden_from_user
    return body


def run(r: SkillRun, *, with_context: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "runId": r.run_id, "kind": r.kind.value, "skillId": r.skill_id, "skillVersion": r.skill_version,
        "outcome": r.outcome.value, "durationMs": r.duration_ms,
    }
    if r.memories_used is not None:
        body["memoriesUsed"] = r.memories_used
    if with_context:
        body["conversationId"] = r.conversation_id
        body["at"] = _time(r.at)
    return body


def catalog_item(entry: CatalogEntry) -> dict[str, Any]:
    m = entry.manifest
    return {
        "skillId": m.skill_id, "version": m.version, "kind": m.kind.value, "name": m.name,
        "description": m.description, "enabled": entry.enabled,
        "permissions": [
            {"code": p.code, "riskLevel": p.risk_level.value, "approvalMode": p.approval_mode.value,
             "granted": p.code in entry.granted}
            for p in m.permissions
        ],
    }


def page(items: list[dict[str, Any]], next_cursor: str | None) -> dict[str, Any]:
    return {"items": items, "nextCursor": next_cursor}


def scope(s: GrantScope | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"type": s.type.value, "agentId": s.agent_id} if s.agent_id else {"type": s.type.value}


def grant(g: PermissionGrant) -> dict[str, Any]:
    body: dict[str, Any] = {
        "grantId": g.grant_id, "skillId": g.skill_id, "skillVersion": g.skill_version,
        "permissionCode": g.permission_code, "scope": scope(g.scope), "status": g.status.value,
        "grantedAt": _time(g.granted_at), "updatedAt": _time(g.updated_at),
    }
    if g.revoked_at:
        body["revokedAt"] = _time(g.revoked_at)
    return body


def audit_event(e: AuditEvent) -> dict[str, Any]:
    body: dict[str, Any] = {
        "eventId": e.event_id, "at": _time(e.at), "skillId": e.skill_id, "skillVersion": e.skill_version,
        "action": e.action.value, "decision": e.decision.value,
        "metadata": {to_camel(k): v for k, v in msgspec.to_builtins(e.metadata).items()},  # set fields only
    }
    if e.scope:
        body["scope"] = scope(e.scope)
    if e.target_id:
        body["targetId"] = e.target_id
    if e.reason:
        body["reason"] = e.reason
    return body


def memory(m: MemoryItem) -> dict[str, Any]:
    return {
        "memoryId": m.memory_id, "agentId": m.agent_id, "title": m.title, "content": m.content,
        "importance": m.importance, "status": m.status.value, "source": m.source.value,
        "createdAt": _time(m.created_at), "updatedAt": _time(m.updated_at),
    }


def background_job(j: BackgroundJob) -> dict[str, Any]:
    body: dict[str, Any] = {
        "jobId": j.job_id, "skillId": j.skill_id, "skillVersion": j.skill_version, "agentId": j.agent_id,
        "conversationId": j.conversation_id, "status": j.status.value, "scheduledAt": _time(j.scheduled_at),
        "nextAttemptAt": _time(j.next_attempt_at), "attempts": j.attempts, "maxAttempts": j.max_attempts,
        "note": j.note, "createdAt": _time(j.created_at), "updatedAt": _time(j.updated_at),
    }
    if j.last_error_code:
        body["lastErrorCode"] = j.last_error_code
    if j.completed_at:
        body["completedAt"] = _time(j.completed_at)
    return body


def automation_job(j: AutomationJob) -> dict[str, Any]:
    body: dict[str, Any] = {
        "jobId": j.job_id, "title": j.title, "scheduleType": j.schedule_type, "localTime": j.local_time,
        "timezone": j.timezone, "config": {"prompt": j.config.prompt, "tools": list(j.config.tools)},
        "status": j.status.value, "nextRunAt": _time(j.next_run_at), "isDefault": j.is_default,
        "createdAt": _time(j.created_at), "updatedAt": _time(j.updated_at),
    }
    if j.weekday is not None:
        body["weekday"] = j.weekday
    if j.agent_id:
        body["agentId"] = j.agent_id
    if j.last_run_at:
        body["lastRunAt"] = _time(j.last_run_at)
    if j.last_run_status:
        body["lastRunStatus"] = j.last_run_status.value
    return body


def automation_run(r: AutomationRun) -> dict[str, Any]:
    body: dict[str, Any] = {
        "runId": r.run_id, "scheduledSlot": _time(r.scheduled_slot), "status": r.status.value,
        "conversationIds": list(r.conversation_ids), "attempts": r.attempts,
        "startedAt": _time(r.started_at), "finishedAt": _time(r.finished_at),
    }
    if r.error_code:
        body["errorCode"] = r.error_code
    return body
