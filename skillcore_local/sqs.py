"""The local stand-in for SQS and the Lambda event source mapping that feeds WorkerFunction.

`LocalQueue` keeps messages in memory with SQS's at-least-once rules: a received message is invisible for
the visibility timeout and visible again unless deleted; each receive counts (ApproximateReceiveCount), and
a message received `max_receives` times without being deleted moves to the dead-letter queue (the
template's RedrivePolicy). For tests it can deliver every message twice (`duplicates`) and hand out
visible messages in random order (`shuffle`).

`EventSource` is the mapping: it receives up to BatchSize messages, invokes the worker handler with a real
SQS event (Records with messageId, receiptHandle, body, attributes, eventSource "aws:sqs"), deletes the
records the response does not list in `batchItemFailures`, and leaves the failed ones (all of them if the
invocation raised) to come back after `retry_after` seconds. `drain` does this until nothing is visible or
in flight: `POST /_local/scan` runs the scan and then drains, so a test can wait on the whole path.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from skillcore_local.invoke import LOCAL_ACCOUNT, LOCAL_REGION, LOCAL_WORK_QUEUE_URL, FunctionRegistry
from skillcore_local.template import load_template

QUEUE_URL = LOCAL_WORK_QUEUE_URL


class _Message:
    __slots__ = ("body", "message_id", "receipt", "receives", "sent_ms", "visible_at")

    def __init__(self, body: str, now: float) -> None:
        self.body = body
        self.message_id = str(uuid.uuid4())
        self.sent_ms = int(time.time() * 1000)
        self.receives = 0
        self.visible_at = now
        self.receipt = ""


class LocalQueue:
    def __init__(self, name: str = "WorkQueue", *, visibility_timeout: float = 30.0, max_receives: int = 3,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.visibility_timeout = visibility_timeout
        self.max_receives = max_receives
        self.duplicates = False
        self.shuffle = False
        self.dead: list[_Message] = []
        self._messages: list[_Message] = []
        self._clock = clock
        self._lock = threading.Lock()
        self._rng = random.Random()

    # -- the sender's side (db/work_queue.WorkQueue)
    def send(self, bodies: Sequence[str]) -> None:
        now = self._clock()
        with self._lock:
            for body in bodies:
                self._messages.append(_Message(body, now))
                if self.duplicates:
                    self._messages.append(_Message(body, now))

    # -- the receiver's side
    def receive(self, limit: int) -> list[_Message]:
        now = self._clock()
        with self._lock:
            visible = [m for m in self._messages if m.visible_at <= now]
            if self.shuffle:
                self._rng.shuffle(visible)
            taken: list[_Message] = []
            for message in visible:
                if message.receives >= self.max_receives:  # the redrive policy: off to the DLQ
                    self._messages.remove(message)
                    self.dead.append(message)
                    continue
                if len(taken) == limit:
                    break
                message.receives += 1
                message.receipt = str(uuid.uuid4())
                message.visible_at = now + self.visibility_timeout
                taken.append(message)
            return taken

    def delete(self, message: _Message, receipt: str) -> None:
        with self._lock:
            if message in self._messages and message.receipt == receipt:
                self._messages.remove(message)

    def release(self, message: _Message, after: float) -> None:
        """Visible again `after` seconds from now (a failed record; SQS would wait out the visibility timeout)."""
        with self._lock:
            message.visible_at = self._clock() + after

    def pending(self) -> tuple[int, int]:
        """(visible, in flight) messages, after moving exhausted ones to the DLQ."""
        now = self._clock()
        with self._lock:
            for message in [m for m in self._messages if m.receives >= self.max_receives and m.visible_at <= now]:
                self._messages.remove(message)
                self.dead.append(message)
            visible = sum(m.visible_at <= now for m in self._messages)
            return visible, len(self._messages) - visible

    def clear(self) -> None:
        with self._lock:
            self._messages.clear()
            self.dead.clear()


def sqs_record(message: _Message, queue: str) -> dict[str, Any]:
    return {
        "messageId": message.message_id,
        "receiptHandle": message.receipt,
        "body": message.body,
        "attributes": {
            "ApproximateReceiveCount": str(message.receives),
            "SentTimestamp": str(message.sent_ms),
            "SenderId": LOCAL_ACCOUNT,
            "ApproximateFirstReceiveTimestamp": str(int(time.time() * 1000)),
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(message.body.encode()).hexdigest(),  # noqa: S324 - SQS's own checksum
        "eventSource": "aws:sqs",
        "eventSourceARN": f"arn:aws:sqs:{LOCAL_REGION}:{LOCAL_ACCOUNT}:{queue}",
        "awsRegion": LOCAL_REGION,
    }


def mapping_config(template: dict[str, Any] | None = None) -> tuple[str, int, int, float]:
    """(function, BatchSize, maxReceiveCount, VisibilityTimeout) of the template's one SQS event source."""
    template = template or load_template()
    resources = template.get("Resources") or {}
    for logical_id, resource in resources.items():
        for event in ((resource.get("Properties") or {}).get("Events") or {}).values():
            if event.get("Type") != "SQS":
                continue
            props = event.get("Properties") or {}
            target = props["Queue"]["Fn::GetAtt"] if isinstance(props["Queue"], dict) else props["Queue"]
            queue = resources[target[0] if isinstance(target, list) else str(target).split(".")[0]]
            qprops = queue.get("Properties") or {}
            redrive = qprops.get("RedrivePolicy") or {}
            return (logical_id, int(props.get("BatchSize", 10)), int(redrive.get("maxReceiveCount", 3)),
                    float(qprops.get("VisibilityTimeout", 30)))
    raise LookupError("template.yaml has no function with an SQS event")


class EventSource:
    def __init__(self, registry: FunctionRegistry, queue: LocalQueue | None = None, *,
                 template: dict[str, Any] | None = None, retry_after: float = 0.0) -> None:
        function, batch, receives, visibility = mapping_config(template)
        self.registry = registry
        self.function = function
        self.batch_size = batch
        self.queue = queue or LocalQueue(visibility_timeout=visibility, max_receives=receives)
        self.retry_after = retry_after

    def deliver_once(self) -> tuple[dict[str, int], BaseException | None] | None:
        """One batch through the worker handler; None when nothing was visible."""
        messages = self.queue.receive(self.batch_size)
        if not messages:
            return None
        receipts = {m.message_id: m.receipt for m in messages}
        event = {"Records": [sqs_record(m, self.queue.name) for m in messages]}
        try:
            response = self.registry.invoke(self.function, event)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: B036 - a crashed worker: every record comes back
            for message in messages:
                self.queue.release(message, self.retry_after)
            return {}, error
        response = response if isinstance(response, dict) else {}
        failed = {f.get("itemIdentifier") for f in response.get("batchItemFailures") or []}
        for message in messages:
            if message.message_id in failed:
                self.queue.release(message, self.retry_after)
            else:
                self.queue.delete(message, receipts[message.message_id])
        summary = response.get("summary")
        return (summary if isinstance(summary, dict) else {}), None

    def drain(self, *, timeout: float = 600.0) -> tuple[dict[str, int], list[BaseException]]:
        """Delivers until no message is visible or in flight; the summed summaries and any crashes."""
        total: dict[str, int] = {}
        crashes: list[BaseException] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            delivered = self.deliver_once()
            if delivered is None:
                visible, in_flight = self.queue.pending()
                if not visible and not in_flight:
                    break
                time.sleep(0.01)
                continue
            summary, crash = delivered
            for key, value in summary.items():
                if isinstance(value, int):
                    total[key] = total.get(key, 0) + value
            if crash is not None:
                crashes.append(crash)
        return total, crashes
