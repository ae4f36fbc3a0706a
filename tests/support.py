"""Helpers shared by the test suites: the sample events of events/ and the function handlers."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from skillcore_local.template import load_template

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"


def load_event(
    name: str,
    *,
    user: str | None = "user-alice",
    path_ids: dict[str, str] | None = None,
    body: Any = ...,
    query: dict[str, str] | None = None,
    groups: str | None = None,
) -> dict[str, Any]:
    """events/<name> with its placeholders (e.g. CONVERSATION_ID) replaced, and optionally another caller/body."""
    text = (EVENTS / name).read_text(encoding="utf-8")
    for placeholder, value in (path_ids or {}).items():
        text = text.replace(placeholder, value)
    event = json.loads(text)
    claims = event.get("requestContext", {}).get("authorizer", {}).get("jwt", {}).get("claims")
    if claims is not None:
        if user is None:
            del event["requestContext"]["authorizer"]
        else:
            claims["sub"] = user
            claims.setdefault("auth_time", str(int(time.time())))  # a person who just signed in
            if groups is not None:
                claims["cognito:groups"] = groups
    if body is not ...:
        event["body"] = body if isinstance(body, str) or body is None else json.dumps(body, ensure_ascii=False)
    if query is not None:
        event["queryStringParameters"] = query
        event["rawQueryString"] = "&".join(f"{k}={v}" for k, v in query.items())
    return event


def load_function(logical_id: str) -> ModuleType:
    """Imports a function's handler module fresh (its module-level clients bind to the current environment)."""
    properties = load_template()["Resources"][logical_id]["Properties"]
    module_file, _ = properties["Handler"].rsplit(".", 1)
    path = ROOT / properties["CodeUri"] / f"{module_file}.py"
    name = f"fn_{logical_id}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Lambda's task root is the code directory: sibling modules import as top-level names.
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


class FakeContext:
    function_name = "test"
    memory_limit_in_mb = "512"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:test"
    aws_request_id = "req-1"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def invoke(module: ModuleType, event: dict[str, Any]) -> tuple[int, Any]:
    response = module.lambda_handler(event, FakeContext())
    body = response.get("body")
    return response["statusCode"], (json.loads(body) if body else None)


class ScanPath:
    """The deployed scan path in one call: ScanFunction dispatches shard tasks to the work queue (moto's
    SQS), then WorkerFunction receives them as SQS events until the queue is empty, deleting what its
    partial batch response did not list as failed. Answers the workers' summed counts (docs/contract.md "The local stack")."""

    def __init__(self) -> None:
        import boto3

        self.sqs = boto3.client("sqs", region_name="us-east-1")
        os.environ["SKILLS_WORK_QUEUE_URL"] = self.sqs.create_queue(QueueName="skillcore-work")["QueueUrl"]
        self.scan = load_function("ScanFunction")
        self.worker = load_function("WorkerFunction")
        self.automations = self.worker.work.source("automation")

    def lambda_handler(self, event: dict[str, Any], context: Any) -> dict[str, int]:
        self.scan.lambda_handler(event, context)
        url = os.environ["SKILLS_WORK_QUEUE_URL"]
        total = dict.fromkeys(("recovered", "claimed", "succeeded", "retried", "failed", "cancelled",
                               "automationRuns", "errors"), 0)
        while True:
            got = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"],
                                           VisibilityTimeout=0).get("Messages", [])
            if not got:
                return total
            records = [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                        "attributes": m.get("Attributes", {}), "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
                        "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:skillcore-work",
                        "awsRegion": "us-east-1"} for m in got]
            response = self.worker.lambda_handler({"Records": records}, context)
            failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
            assert not failed, response  # these tests send no poison; a failure is a bug
            for m in got:
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            for key, value in response["summary"].items():
                total[key] = total.get(key, 0) + value


T = TypeVar("T")


def together(count: int, work: Callable[[int], T], *, budget_s: float = 120.0) -> list[T]:
    """`work(i)` in `count` threads released at once; their results in thread order."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    failures: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=run, args=(i,), name=f"racer-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(budget_s)
    assert not any(t.is_alive() for t in threads), "a racer did not finish in time"
    assert not failures, failures[:3]
    return results
