"""The ChatModel named by the settings.

botocore and the Bedrock adapter are imported only when Bedrock is chosen: importing botocore costs a cold
start a noticeable share of its budget, and the offline model never needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

if TYPE_CHECKING:
    from skillcore.model.offline import ToolPlanner
    from skillcore.model.port import ChatModel
    from skillcore.settings import Settings

# API Gateway ends a request after 29 s. Two attempts of (2 s connect + 10 s read) plus the standard
# retry mode's backoff (at most 1 s before the first retry) stay under it and leave time for the turn's
# own reads and writes; a model that has not answered in 10 s is better reported (ModelError) than
# waited on. Functions with a longer budget (automation runs) pass their own read timeout.
CONNECT_TIMEOUT_S = 2.0
READ_TIMEOUT_S = 10.0
TOTAL_MAX_ATTEMPTS = 2


def make_model(
    settings: Settings, *, read_timeout: float = READ_TIMEOUT_S, tool_planner: ToolPlanner | None = None
) -> ChatModel:
    """`tool_planner` only matters offline: it decides the offline model's tool calls (automation runs)."""
    if settings.model == "offline":
        from skillcore.model.offline import OfflineModel

        return OfflineModel(tool_planner=tool_planner)
    if settings.model == "bedrock":
        return _bedrock_model(settings, read_timeout=read_timeout)
    assert_never(settings.model)


def _bedrock_model(settings: Settings, *, read_timeout: float) -> ChatModel:
    from botocore.config import Config

    from skillcore.db.aws import client as aws_client
    from skillcore.model.bedrock import BedrockModel

    config = Config(
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=read_timeout,
        # standard mode: throttling and transient errors, jittered backoff, and a retry quota that stops
        # retries from piling onto a service that is already failing.
        retries={"mode": "standard", "total_max_attempts": TOTAL_MAX_ATTEMPTS},
    )
    client = aws_client(
        "bedrock-runtime", region_name=settings.bedrock_region or settings.region, config=config
    )
    return BedrockModel(client, model_id=settings.bedrock_model_id, max_tokens=settings.bedrock_max_tokens)
