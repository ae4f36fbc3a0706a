"""Logger and Metrics, configured once; the business events every module records with one call.

Log lines and metrics carry ids and codes only (skill_id, job_id, kinds, outcomes, reason codes): never
message, memory or note text. A metric's dimensions are low-cardinality codes only, never ids.

Metrics are CloudWatch embedded metric format (EMF) lines on stdout, printed by `@metrics.log_metrics`
when the handler returns or raises (a scan that fails half-way still reports the jobs it finished).
Business events are counted during the invocation and flushed as one EMF document per metric and
dimension values; each document also declares the roll-up without `reason`, so an alarm can watch
e.g. every failed background job whatever its reason.

No Tracer: a real one imports aws_xray_sdk and patches botocore at init, which the cold-start budget
cannot afford (figures in docs/observability.md, "No tracing"); the template sets no tracing either.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

logger = Logger(service="skillcore")

# Metric names: one per business event.
CHAT_TURN = "ChatTurn"                # kind (workflow, tool, prompt, plain), outcome (succeeded, denied,
                                      # degraded, failed)
TOOL_CALL = "ToolCall"                # outcome (succeeded, denied, failed, timed_out), reason
HOSTED_CALL = "HostedCall"            # outcome (succeeded, denied, failed), reason: a hosted endpoint's call,
                                      # counted where its audit event is written
BACKGROUND_JOB = "BackgroundJob"      # outcome (succeeded, retried, failed, recovered), reason
AUTOMATION_RUN = "AutomationRun"      # outcome (succeeded, failed, skipped), reason
MODEL_DEGRADED = "ModelDegraded"      # reason (the model error code: throttled, timeout, ...)
RATE_LIMITED = "RateLimited"          # rate_class (chat, drafting, hosted_calls, refresh, writes)
BUDGET_EXHAUSTED = "BudgetExhausted"  # (none): a model-backed request or run refused for the day's budget

ROLLED_UP = "reason"  # the dimension each document also declares a roll-up without
_CODE = re.compile(r"[a-z][a-z0-9_]{0,47}")


def code(value: str) -> str:
    """A dimension value as a code; anything else (free text, by mistake) becomes `other`."""
    return value if _CODE.fullmatch(value) else "other"


class EventMetrics(AmazonCloudWatchEMFProvider):
    """Powertools' EMF provider, plus business events counted by dimension values.

    One Powertools metric set shares one set of dimension values, while each event has its own (an
    outcome, a reason): the events are therefore kept apart and each distinct (metric, dimensions) is
    written as its own document, with the count of the invocation as its value. An invocation without
    events (most RPC routes) is normal and prints nothing, with no warning. The lock is for the local
    stack, which runs invocations on threads of one process (Lambda runs one at a time).
    """

    def __init__(self, namespace: str, service: str):
        super().__init__(namespace=namespace, service=service)
        self.events: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
        self._lock = threading.Lock()

    def count(self, name: str, **dimensions: str) -> None:
        key = (name, tuple((dimension, code(value)) for dimension, value in dimensions.items()))
        with self._lock:
            self.events[key] += 1

    def take(self) -> Counter[tuple[str, tuple[tuple[str, str], ...]]]:
        """The events counted so far, forgotten here."""
        with self._lock:
            events, self.events = self.events, Counter()
        return events

    def documents(self, events: Counter[tuple[str, tuple[tuple[str, str], ...]]]) -> list[dict[str, Any]]:
        stamp = int(datetime.now(UTC).timestamp() * 1000)
        service = self.service or "skillcore"
        documents = []
        for (name, dims), value in events.items():
            names = ["service", *(key for key, _ in dims)]
            sets = [names] + ([[n for n in names if n != ROLLED_UP]] if ROLLED_UP in names else [])
            documents.append({
                "_aws": {"Timestamp": stamp, "CloudWatchMetrics": [{
                    "Namespace": self.namespace, "Dimensions": sets,
                    "Metrics": [{"Name": name, "Unit": "Count"}],
                }]},
                "service": service, **dict(dims), name: value,
            })
        return documents

    def flush_metrics(self, raise_on_empty_metrics: bool = False) -> None:
        events = self.take()
        if events and not is_metrics_disabled():
            for document in self.documents(events):
                print(json.dumps(document, ensure_ascii=False, separators=(",", ":")))
        # Metrics added the Powertools way (none today), or the empty-set error the caller asked for.
        if self.metric_set or (raise_on_empty_metrics and not events):
            super().flush_metrics(raise_on_empty_metrics=raise_on_empty_metrics)


# The template sets the namespace per stage; the local stack and the tests may not set it at all.
_events = EventMetrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "skillcore",
                       service=os.environ.get("POWERTOOLS_SERVICE_NAME") or "skillcore")
metrics = Metrics(provider=_events)
_metric_lock = threading.Lock()


# -- the business events: one call where each happens ------------------------------------------------
def chat_turn(kind: str, outcome: str) -> None:
    _events.count(CHAT_TURN, kind=kind, outcome=outcome)


def tool_call(status: str, reason: str | None) -> None:
    """`status` is the ToolRunner's (succeeded, denied, failed), `reason` its error code or else the policy's
    reason (allowed, no_permission_needed, grant_missing, ...); a failure by timeout is its own outcome."""
    outcome = "timed_out" if reason == "timeout" else status
    _events.count(TOOL_CALL, outcome=outcome, reason=reason or status)


def hosted_call(outcome: str, reason: str) -> None:
    """A hosted endpoint's call refused (denied, with the refusal's code) or sent and ended (succeeded, or
    failed with the error's code), as its audit event says."""
    _events.count(HOSTED_CALL, outcome=outcome, reason=reason)


def background_job(outcome: str, reason: str) -> None:
    _events.count(BACKGROUND_JOB, outcome=outcome, reason=reason)


def automation_run(outcome: str, reason: str | None) -> None:
    _events.count(AUTOMATION_RUN, outcome=outcome, reason=reason or outcome)


SLOT_DELAY = "AutomationSlotDelay"


def slot_delay(milliseconds: int) -> None:
    """From a run's slot (10:00 in the user's zone) to the end of its run: one value per run, so CloudWatch
    can answer its p50/p99 (the alarm in template.yaml watches p99)."""
    with _metric_lock:  # runs finish on several threads of one worker; the metric set is not thread-safe
        metrics.add_metric(name=SLOT_DELAY, unit="Milliseconds", value=milliseconds)


def model_degraded(reason: str) -> None:
    _events.count(MODEL_DEGRADED, reason=reason)


def rate_limited(rate_class: str) -> None:
    _events.count(RATE_LIMITED, rate_class=rate_class)


def budget_exhausted() -> None:
    _events.count(BUDGET_EXHAUSTED)


@contextmanager
def job_keys(*, job_id: str, skill_id: str) -> Iterator[None]:
    """`job_id` and `skill_id` on every log line written while a worker acts on one job."""
    # Thread-safe keys: a worker runs several jobs of a shard at once, each on its own thread.
    logger.thread_safe_append_keys(job_id=job_id, skill_id=skill_id)
    try:
        yield
    finally:
        logger.thread_safe_remove_keys(["job_id", "skill_id"])
