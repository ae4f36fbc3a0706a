"""The work queue: the SQS queue the scan sends shard tasks to and WorkerFunction receives them from.

A message is a hint ("shard N of this queue has due work as of this scan"), never the truth: the worker's
conditional claims decide what runs, so a duplicate, late or reordered message does nothing harmful. The
body is `dispatch.ShardTask` as JSON; SendMessageBatch sends up to 10 per request.

Locally there is no SQS: a queue URL of the form `local://<name>` resolves, at send time, to the queue the
local stack registered under that name (skillcore_local/sqs.py), which delivers real SQS event shapes to
the same worker handler.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from skillcore.db.errors import StoreError, StoreUnavailable

LOCAL_SCHEME = "local://"
BATCH = 10  # SendMessageBatch's limit


class WorkQueue(Protocol):
    def send(self, bodies: Sequence[str]) -> None: ...


_local: dict[str, WorkQueue] = {}


def local_queue(url: str) -> WorkQueue | None:
    """The local stack's queue registered for `url`, if any."""
    return _local.get(url)


def register_local(url: str, queue: WorkQueue | None) -> None:
    """The local stack's queue for `url` (None removes it)."""
    if queue is None:
        _local.pop(url, None)
    else:
        _local[url] = queue


class _LocalRef:
    def __init__(self, url: str):
        self._url = url

    def send(self, bodies: Sequence[str]) -> None:
        queue = _local.get(self._url)
        if queue is None:
            raise StoreUnavailable(f"no local queue registered as {self._url}", code="QueueUnavailable")
        queue.send(bodies)


class SqsWorkQueue:
    def __init__(self, client: Any, url: str):
        self._client = client
        self._url = url

    def send(self, bodies: Sequence[str]) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        for start in range(0, len(bodies), BATCH):
            entries = [{"Id": str(i), "MessageBody": body} for i, body in enumerate(bodies[start:start + BATCH])]
            for _ in range(3):  # entries SQS could not take this time are sent again
                try:
                    response = self._client.send_message_batch(QueueUrl=self._url, Entries=entries)
                except (ClientError, BotoCoreError) as error:
                    raise StoreUnavailable("SendMessageBatch failed", code=type(error).__name__,
                                           operation="send_message_batch") from error
                failed = {f["Id"] for f in response.get("Failed", [])}
                entries = [e for e in entries if e["Id"] in failed]
                if not entries:
                    break
            if entries:
                raise StoreError(f"{len(entries)} messages not accepted", code="SendFailed",
                                 operation="send_message_batch")


def make_work_queue(url: str, region: str) -> WorkQueue:
    if url.startswith(LOCAL_SCHEME):
        return _LocalRef(url)
    import boto3  # imported here: the worker, which only sends continuations, pays for it on first use
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=2, read_timeout=5)
    return SqsWorkQueue(boto3.client("sqs", region_name=region, config=config), url)
