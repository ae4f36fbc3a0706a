"""Settings, read once at the edge (the Lambda module) from the environment and passed down.

Every table name comes from `template.yaml` through `SKILLS_TABLE_<NAME>` variables; locally the same
variables are set by the local stack.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TABLES = (
    "users",
    "agents",
    "conversations",
    "messages",
    "turns",
    "sessions",
    "runs",
    "grants",
    "audit",
    "tool_executions",
    "memories",
    "jobs",
    "automation_jobs",
    "automation_runs",
)


class TableNames(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    users: str
    agents: str
    conversations: str
    messages: str
    turns: str
    sessions: str
    runs: str
    grants: str
    audit: str
    tool_executions: str
    memories: str
    jobs: str
    automation_jobs: str
    automation_runs: str


class Settings(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    region: str = "us-east-1"
    tables: TableNames
    dynamodb_endpoint: str | None = None
    model: Literal["offline", "bedrock"] = "offline"
    bedrock_model_id: str = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    bedrock_region: str | None = None
    bedrock_max_tokens: int = Field(default=512, ge=16, le=8192)
    history_messages: int = Field(default=20, ge=0, le=100)
    scan_batch_size: int = Field(default=20, ge=1, le=100)
    local: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        tables = TableNames(**{name: env.get(f"SKILLS_TABLE_{name.upper()}", f"skillcore-{name}") for name in TABLES})
        return cls(
            region=region,
            tables=tables,
            dynamodb_endpoint=env.get("SKILLS_DYNAMODB_ENDPOINT") or None,
            model=env.get("SKILLS_MODEL", "offline"),  # type: ignore[arg-type]
            bedrock_model_id=env.get("SKILLS_BEDROCK_MODEL_ID", cls.model_fields["bedrock_model_id"].default),
            bedrock_region=env.get("SKILLS_BEDROCK_REGION") or None,
            bedrock_max_tokens=int(env.get("SKILLS_BEDROCK_MAX_TOKENS", "512")),
            history_messages=int(env.get("SKILLS_HISTORY_MESSAGES", "20")),
            scan_batch_size=int(env.get("SKILLS_SCAN_BATCH_SIZE", "20")),
            local=env.get("SKILLS_LOCAL", "") == "1",
        )
