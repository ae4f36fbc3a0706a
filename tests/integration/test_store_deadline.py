"""db/dynamo.py StoreTimeouts: a DynamoDB attempt starts only while the invocation has time for it, so a
request whose store stays unavailable answers 503 before its function's timeout (and API Gateway's 30 s)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from skillcore.db.dynamo import ANSWER_MARGIN_SECONDS, StoreClient, StoreTimeouts, make_client
from skillcore.db.errors import StoreUnavailable
from skillcore.settings import Settings
from skillcore_local.invoke import function_specs
from skillcore_local.template import load_template

API_GATEWAY_TIMEOUT_S = 30


@pytest.fixture
def refused_endpoint() -> Iterator[str]:
    """A local port nobody listens on: every attempt fails at once (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


def settings(endpoint: str, **env: str) -> Settings:
    return Settings.from_env({"SKILLS_DYNAMODB_ENDPOINT": endpoint, "AWS_ACCESS_KEY_ID": "x", **env})


def counted(client: Any) -> list[int]:
    attempts: list[int] = []
    client.meta.events.register("before-send.dynamodb", lambda **_: attempts.append(1), unique_id="count")
    return attempts


def test_the_timeouts_come_from_the_settings() -> None:
    timeouts = StoreTimeouts.of(settings("http://127.0.0.1:1", SKILLS_STORE_READ_TIMEOUT_MS="1500",
                                         SKILLS_STORE_CONNECT_TIMEOUT_MS="500", SKILLS_STORE_MAX_ATTEMPTS="6"))
    assert (timeouts.connect_s, timeouts.read_s, timeouts.attempts, timeouts.attempt_s) == (0.5, 1.5, 6, 2.0)
    assert StoreTimeouts.of(settings("http://127.0.0.1:1")) == StoreTimeouts()


def test_without_a_budget_every_attempt_runs(refused_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    raw = make_client(settings(refused_endpoint, SKILLS_STORE_MAX_ATTEMPTS="3"))
    attempts = counted(raw)
    with pytest.raises(StoreUnavailable) as refused:
        StoreClient(raw).get_item(TableName="t", Key={"pk": {"S": "k"}})
    assert refused.value.code == "EndpointConnectionError" and len(attempts) == 3


def test_no_attempt_starts_that_could_not_end_in_time(refused_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    timeouts = StoreTimeouts()
    # Time left before each attempt: room for two, then less than one attempt and the margin.
    left = iter([20.0, timeouts.attempt_s + ANSWER_MARGIN_SECONDS, timeouts.attempt_s + ANSWER_MARGIN_SECONDS - 0.01])
    raw = make_client(settings(refused_endpoint, SKILLS_STORE_MAX_ATTEMPTS="10"), time_left=lambda: next(left))
    attempts = counted(raw)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as cut:
        StoreClient(raw).transact_write_items(TransactItems=[{"Put": {"TableName": "t", "Item": {"pk": {"S": "k"}}}}])
    assert cut.value.code == "NoTimeLeft" and cut.value.operation == "transact_write_items"
    assert len(attempts) == 2  # the third was refused before it was sent
    assert time.monotonic() - started < 2


def test_outside_an_invocation_nothing_is_cut(refused_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    raw = make_client(settings(refused_endpoint, SKILLS_STORE_MAX_ATTEMPTS="2"), time_left=lambda: None)
    attempts = counted(raw)
    with pytest.raises(StoreUnavailable):
        StoreClient(raw).query(TableName="t", KeyConditionExpression="pk = :p",
                               ExpressionAttributeValues={":p": {"S": "k"}})
    assert len(attempts) == 2


def test_every_http_function_ends_before_api_gateway_and_has_room_for_an_attempt() -> None:
    """The deadline is the invocation's: below API Gateway's 30 s, and long enough for one attempt and the
    answer (else every request would be cut before its first store call)."""
    template = load_template()
    http_functions = {name for name, resource in template["Resources"].items()
                      if resource["Type"] == "AWS::Serverless::Function"
                      and any(e["Type"] == "HttpApi" for e in resource["Properties"].get("Events", {}).values())}
    assert http_functions >= {"RpcFunction", "ChatTurnFunction", "HostedFunction", "McpFunction", "CatalogFunction"}
    specs = function_specs(template)
    for name in http_functions:
        assert StoreTimeouts().attempt_s + ANSWER_MARGIN_SECONDS < specs[name].timeout < API_GATEWAY_TIMEOUT_S, name
