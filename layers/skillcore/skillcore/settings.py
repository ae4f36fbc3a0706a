"""Settings, read once at the edge (the Lambda module) from the environment and passed down.

Every table name comes from `template.yaml` through `SKILLS_TABLE_<NAME>` variables; locally the same
variables are set by the local stack.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from msgspec import Struct

from skillcore import checks

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
    "user_capabilities",
    "approvals",
    "capability_drafts",
    "hosted_endpoints",
    "limits",
    "catalog",
)


class TableNames(Struct, frozen=True, kw_only=True):
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
    user_capabilities: str
    approvals: str
    capability_drafts: str
    hosted_endpoints: str
    limits: str
    catalog: str


MODELS = ("offline", "bedrock")
DEFAULT_BEDROCK_MODEL_ID = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
# (default, lowest, highest) of the numeric settings.
BOUNDS = {
    "bedrock_max_tokens": (512, 16, 8192),
    "history_messages": (20, 0, 100),
    "scan_batch_size": (20, 1, 100),
    # The due index's shards (db/due_index.py): new writes use `due_shards`; readers walk up to the larger of
    # it and `due_shards_previous`, the largest count items may still be under (8 before it was a setting).
    "due_shards": (8, 1, 1024),
    "due_shards_previous": (8, 1, 1024),
    # A queue message older than this (by SQS's SentTimestamp) is stale: the next scan dispatches again.
    "work_max_age_seconds": (600, 60, 86_400),
    # Model calls the automation runs of one worker may start per minute (0: no throttle), see
    # automation/throttle.py; a throttled run waits with backoff and jitter for at most this long.
    "model_calls_per_minute": (0, 0, 1_000_000),
    "model_wait_ms": (30_000, 0, 600_000),
    # Items of one shard a worker runs at once (skillcore/work/fanout.py): each keeps its own conditional claim.
    "worker_concurrency": (4, 1, 32),
    # The DynamoDB client's timeouts per attempt and its attempts per call (db/dynamo.py StoreTimeouts, which
    # also bounds them by the invocation's time left).
    "store_connect_timeout_ms": (2_000, 100, 10_000),
    "store_read_timeout_ms": (5_000, 100, 20_000),
    "store_max_attempts": (5, 1, 10),  # in all: the first and the retries
    # Per-user limits (skillcore/limits/): requests per minute of each route class (0: no limit), the daily
    # model budget in tokens (0: none) and the open capability drafts a user may hold.
    "rate_chat_per_minute": (20, 0, 100_000),
    "rate_drafting_per_minute": (6, 0, 100_000),
    "rate_hosted_calls_per_minute": (30, 0, 100_000),
    "rate_refresh_per_minute": (6, 0, 100_000),
    "rate_writes_per_minute": (60, 0, 100_000),
    "model_tokens_per_day": (200_000, 0, 1_000_000_000),
    "max_open_drafts": (5, 1, 1_000),
    # Installed packages' rollouts (skillcore/packages/rollout.py): the share of installs (percent) a new version
    # reaches first, the window its outcomes are counted over, the calls it needs before it is judged, and how
    # many percentage points its failure rate may exceed the previous version's before every install rolls back.
    "canary_percent": (10, 0, 100),
    "rollout_window_minutes": (60, 1, 10_080),
    "rollout_min_calls": (20, 1, 1_000_000),
    "rollback_threshold_percent": (20, 1, 100),
}


class Settings(Struct, frozen=True, kw_only=True):
    """Checked on construction: a misconfigured function fails its cold start with the variable's name."""

    region: str = "us-east-1"
    tables: TableNames
    dynamodb_endpoint: str | None = None
    model: Literal["offline", "bedrock"] = "offline"
    bedrock_model_id: str = DEFAULT_BEDROCK_MODEL_ID
    bedrock_region: str | None = None
    bedrock_max_tokens: int = BOUNDS["bedrock_max_tokens"][0]
    history_messages: int = BOUNDS["history_messages"][0]
    scan_batch_size: int = BOUNDS["scan_batch_size"][0]
    due_shards: int = BOUNDS["due_shards"][0]
    due_shards_previous: int = BOUNDS["due_shards_previous"][0]
    work_max_age_seconds: int = BOUNDS["work_max_age_seconds"][0]
    model_calls_per_minute: int = BOUNDS["model_calls_per_minute"][0]
    model_wait_ms: int = BOUNDS["model_wait_ms"][0]
    worker_concurrency: int = BOUNDS["worker_concurrency"][0]
    store_connect_timeout_ms: int = BOUNDS["store_connect_timeout_ms"][0]
    store_read_timeout_ms: int = BOUNDS["store_read_timeout_ms"][0]
    store_max_attempts: int = BOUNDS["store_max_attempts"][0]
    rate_chat_per_minute: int = BOUNDS["rate_chat_per_minute"][0]
    rate_drafting_per_minute: int = BOUNDS["rate_drafting_per_minute"][0]
    rate_hosted_calls_per_minute: int = BOUNDS["rate_hosted_calls_per_minute"][0]
    rate_refresh_per_minute: int = BOUNDS["rate_refresh_per_minute"][0]
    rate_writes_per_minute: int = BOUNDS["rate_writes_per_minute"][0]
    model_tokens_per_day: int = BOUNDS["model_tokens_per_day"][0]
    max_open_drafts: int = BOUNDS["max_open_drafts"][0]
    canary_percent: int = BOUNDS["canary_percent"][0]
    rollout_window_minutes: int = BOUNDS["rollout_window_minutes"][0]
    rollout_min_calls: int = BOUNDS["rollout_min_calls"][0]
    rollback_threshold_percent: int = BOUNDS["rollback_threshold_percent"][0]
    # The trust levels whose skills may ask for permissions at risk L3 and above (packages/trust.py), from
    # SKILLS_HIGH_RISK_TRUST_LEVELS: comma-separated; an empty value lets none.
    high_risk_trust_levels: tuple[str, ...] = ("builtin", "verified_publisher")
    # The SQS queue of shard work (the scan sends, WorkerFunction receives); "" where nothing dispatches.
    work_queue_url: str = ""
    # Package bytes (skillcore/packages/): the S3 bucket in AWS, a directory locally (SKILLS_LOCAL_PACKAGE_DIR).
    package_bucket: str = ""
    local_package_dir: str = ""
    local: bool = False

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"SKILLS_MODEL must be one of {', '.join(MODELS)}, not {self.model!r}")
        for name, (_, lowest, highest) in BOUNDS.items():
            value = getattr(self, name)
            if not checks.integer(value, lowest, highest):
                raise ValueError(f"SKILLS_{name.upper()} must be an integer from {lowest} to {highest}, not {value!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        tables = TableNames(**{name: env.get(f"SKILLS_TABLE_{name.upper()}", f"skillcore-{name}") for name in TABLES})
        numbers = {name: _integer(env, name, default) for name, (default, _, _) in BOUNDS.items()}
        return cls(
            region=region,
            tables=tables,
            dynamodb_endpoint=env.get("SKILLS_DYNAMODB_ENDPOINT") or None,
            model=env.get("SKILLS_MODEL", "offline"),  # type: ignore[arg-type]  # checked in __post_init__
            bedrock_model_id=env.get("SKILLS_BEDROCK_MODEL_ID", DEFAULT_BEDROCK_MODEL_ID),
            bedrock_region=env.get("SKILLS_BEDROCK_REGION") or None,
            local=env.get("SKILLS_LOCAL", "") == "1",
            work_queue_url=env.get("SKILLS_WORK_QUEUE_URL", ""),
            package_bucket=env.get("SKILLS_PACKAGE_BUCKET", ""),
            local_package_dir=env.get("SKILLS_LOCAL_PACKAGE_DIR", ""),
            high_risk_trust_levels=_levels(env.get("SKILLS_HIGH_RISK_TRUST_LEVELS", "builtin,verified_publisher")),
            **numbers,
        )


TRUST_LEVELS = ("builtin", "verified_publisher", "community", "user_own")  # skillcore.packages.models.TrustLevel


def _levels(raw: str) -> tuple[str, ...]:
    levels = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [level for level in levels if level not in TRUST_LEVELS]
    if unknown:
        raise ValueError(f"SKILLS_HIGH_RISK_TRUST_LEVELS names unknown trust levels: {', '.join(unknown)}")
    return levels


def _integer(env: Mapping[str, str], name: str, default: int) -> int:
    variable = f"SKILLS_{name.upper()}"
    raw = env.get(variable)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{variable} must be an integer, not {raw!r}") from None
