"""A private copy of the template's tables on the session's DynamoDB Local, with users who granted the
goal-check-in reminder and their due reminder jobs: the ground the scanner stack tests (concurrency, chaos)
race on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from skillcore.background import job_store
from skillcore.background.lifecycle import JobStatus
from skillcore.background.models import BackgroundJob
from skillcore.conversations.agents import create_agent
from skillcore.conversations.models import Agent
from skillcore.db.codec import from_item
from skillcore.db.dynamo import Db
from skillcore.ids import new_id
from skillcore.policy.grants import GrantScope
from skillcore.policy.permissions import set_permission
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS
from skillcore_local.ddb_local import client as ddb_client
from skillcore_local.template import ensure_tables

from .conftest import LocalTables

SKILL = "goal-check-in-reminder"
CODE = "proactive_message:write"


@dataclass
class World:
    endpoint: str
    settings: Settings
    db: Db
    agents: list[Agent] = field(default_factory=list)
    jobs: list[BackgroundJob] = field(default_factory=list)

    def new_db(self) -> Db:
        """A Db with a boto3 client of its own (create clients before starting threads: creation is not
        thread-safe, calls are)."""
        return Db(client=ddb_client(self.endpoint), tables=self.settings.tables)


@contextmanager
def job_world(ddb_local: LocalTables, prefix: str) -> Iterator[World]:
    """Fresh tables named `<prefix><random>-...`, deleted afterwards."""
    names = ensure_tables(ddb_local.client, prefix=f"{prefix}{uuid.uuid4().hex[:8]}-")
    settings = Settings.from_env({**ddb_local.env, **names})
    try:
        yield World(ddb_local.endpoint, settings, Db(client=ddb_local.client, tables=settings.tables))
    finally:
        for table in names.values():
            ddb_local.client.delete_table(TableName=table)


def grant_users(world: World, *, users: int, agents_per_user: int, created: datetime, user_prefix: str) -> list[str]:
    """Users with `agents_per_user` agents each (into `world.agents`) and the reminder's grant."""
    user_ids = []
    for u in range(users):
        user = f"{user_prefix}-{u}-{uuid.uuid4().hex[:6]}"
        user_ids.append(user)
        for a in range(agents_per_user):
            world.agents.append(create_agent(world.db, user, name=f"Agent{u}-{a}", persona="", now=created))
        set_permission(world.db, SKILLS, user, skill_id=SKILL, code=CODE, scope=GrantScope.user(), granted=True,
                       now=created)
    return user_ids


def reminder_job(agent: Agent, *, run_at: datetime, created: datetime, note: str) -> BackgroundJob:
    return BackgroundJob(
        job_id=new_id(created), user_id=agent.user_id, skill_id=SKILL, skill_version="1.0.0",
        agent_id=agent.agent_id, conversation_id=agent.default_conversation_id, grant_id=None,
        payload={"agentId": agent.agent_id, "agentName": agent.name,
                 "conversationId": agent.default_conversation_id, "note": note},
        status=JobStatus.SCHEDULED, scheduled_at=run_at, next_attempt_at=run_at, attempts=0, max_attempts=3,
        revision=1, created_at=created, updated_at=created,
    )


def put_jobs(world: World) -> None:
    """Writes `world.jobs` in batches of 25, retrying what DynamoDB leaves unprocessed."""
    for start in range(0, len(world.jobs), 25):
        request = {world.settings.tables.jobs: [
            {"PutRequest": {"Item": job_store.to_job_item(job)}} for job in world.jobs[start:start + 25]
        ]}
        while request:
            request = world.db.client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}


def scan_table(db: Db, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    request: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = db.client.scan(**request)
        items += [from_item(i) or {} for i in page.get("Items", [])]
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
