"""The work queue: the SQS queue the scan sends shard tasks to and WorkerFunction receives them from.

A message is a hint ("shard N of this queue has due work as of this scan"), never the truth: the worker's
conditional claims decide what runs, so a duplicate, late or reordered message does nothing harmful. The
body is `dispatch.ShardTask` as JSON; SendMessageBatch sends up to 10 per request.

Locally there is no SQS: a queue URL of the form `local://<name>` resolves, at send time, to the queue the
local stack registered under that name (skillcore_local/sqs.py), which delivers real SQS event shapes to
the same worker handler.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from skillcore.db.errors import StoreError, StoreUnavailable

LOCAL_SCHEME = "local://"
BATCH = 10  # SendMessageBatch's limit of entries
MAX_BATCH_BYTES = 256 * 1024  # SQS's limit on one message, and on the sum of one batch's messages
ATTEMPTS = 3  # sends of an entry SQS refused for its own reasons (not the request's fault)
BACKOFF_S = 0.05


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
    """The deployed queue. `send` packs the bodies into SendMessageBatch requests of at most BATCH entries
    and MAX_BATCH_BYTES (SQS counts the sum of the bodies), retries the entries SQS refused for its own
    reasons (`SenderFault` false: throttling, an internal error) with a short backoff, and raises, after
    every batch was tried, for what is still not sent: a refused entry (the request's fault) at once, a
    retried one after ATTEMPTS. A raised send leaves the caller's message undeleted, so it comes back."""

    def __init__(self, client: Any, url: str, *, sleep: Callable[[float], None] = time.sleep):
        self._client = client
        self._url = url
        self._sleep = sleep

    def send(self, bodies: Sequence[str]) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        unsent: dict[str, str] = {}  # entry id (the body's index) -> SQS's error code
        for batch in batches(bodies):
            entries = batch
            for attempt in range(ATTEMPTS):
                if attempt:
                    self._sleep(BACKOFF_S * 2 ** (attempt - 1))
                try:
                    response = self._client.send_message_batch(QueueUrl=self._url, Entries=entries)
                except (ClientError, BotoCoreError) as error:
                    raise StoreUnavailable("SendMessageBatch failed", code=type(error).__name__,
                                           operation="send_message_batch") from error
                retry = []
                failed = {f["Id"]: f for f in response.get("Failed", [])}
                for entry in entries:
                    failure = failed.get(entry["Id"])
                    if failure is None:
                        unsent.pop(entry["Id"], None)
                    elif failure.get("SenderFault"):
                        unsent[entry["Id"]] = str(failure.get("Code", "SenderFault"))
                    else:
                        unsent[entry["Id"]] = str(failure.get("Code", "ServiceFault"))
                        retry.append(entry)
                entries = retry
                if not entries:
                    break
        if unsent:
            codes = ", ".join(sorted(set(unsent.values())))
            raise StoreError(f"{len(unsent)} of {len(bodies)} messages not accepted ({codes})", code="SendFailed",
                             operation="send_message_batch")


def batches(bodies: Sequence[str]) -> list[list[dict[str, str]]]:
    """SendMessageBatch entries: at most BATCH per request and MAX_BATCH_BYTES of bodies; the Id of an
    entry is its body's index in `bodies`. A body larger than one message may be is refused here."""
    out: list[list[dict[str, str]]] = []
    current: list[dict[str, str]] = []
    size = 0
    for index, body in enumerate(bodies):
        length = len(body.encode())
        if length > MAX_BATCH_BYTES:
            raise StoreError(f"message {index} is {length} bytes, over SQS's {MAX_BATCH_BYTES}",
                             code="MessageTooLong", operation="send_message_batch")
        if current and (len(current) == BATCH or size + length > MAX_BATCH_BYTES):
            out.append(current)
            current, size = [], 0
        current.append({"Id": str(index), "MessageBody": body})
        size += length
    if current:
        out.append(current)
    return out


def make_work_queue(url: str, region: str) -> WorkQueue:
    if url.startswith(LOCAL_SCHEME):
        return _LocalRef(url)
    from botocore.config import Config

    from skillcore.db.aws import client

    config = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=2, read_timeout=5)
    return SqsWorkQueue(client("sqs", region_name=region, config=config), url)
