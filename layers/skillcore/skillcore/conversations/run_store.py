"""Runs table: one SkillRun per executed chat turn (and per background/automation execution).

Key design: pk = userId, sk = runId (a ULID, so the sort order is time order). Items hold kind, skill,
version, outcome, duration and the conversation id, never message text; they expire after RUN_TTL_DAYS.
Access pattern: the user's recent runs, newest first (Query pk, ScanIndexForward false).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from skillcore.clock import parse_time, to_api_time
from skillcore.conversations.models import RunKind, RunOutcome, SkillRun
from skillcore.db.codec import to_item
from skillcore.db.dynamo import Db, query_page

RUN_TTL_DAYS = 90


def to_run_item(run: SkillRun) -> dict[str, Any]:
    return to_item(
        {
            "pk": run.user_id,
            "sk": run.run_id,
            "conversationId": run.conversation_id,
            "kind": run.kind.value,
            "skillId": run.skill_id,
            "skillVersion": run.skill_version,
            "outcome": run.outcome.value,
            "durationMs": run.duration_ms,
            "memoriesUsed": run.memories_used,
            "at": to_api_time(run.at),
            "expiresAt": int((run.at + timedelta(days=RUN_TTL_DAYS)).timestamp()),
        }
    )


def run_from_item(item: dict[str, Any]) -> SkillRun:
    return SkillRun(
        run_id=item["sk"],
        user_id=item["pk"],
        conversation_id=item["conversationId"],
        kind=RunKind(item["kind"]),
        skill_id=item.get("skillId"),
        skill_version=item.get("skillVersion"),
        outcome=RunOutcome(item["outcome"]),
        duration_ms=int(item["durationMs"]),
        memories_used=item.get("memoriesUsed"),
        at=parse_time(item["at"]),
    )


def put_run_op(db: Db, run: SkillRun) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.runs, "Item": to_run_item(run)}}


def list_runs(db: Db, user_id: str, *, limit: int, cursor: str | None) -> tuple[list[SkillRun], str | None]:
    page = query_page(
        db, table=db.tables.runs, partition=("pk", user_id), limit=limit, cursor=cursor, newest_first=True
    )
    return [run_from_item(i) for i in page.items], page.next_cursor
