"""The worker's partial batch response for an SQS event source (ReportBatchItemFailures): each record is handled
on its own; one that raises is listed in `batchItemFailures` by its messageId, so only it is delivered again,
and the others are deleted. A batch whose every record failed is answered the same way (all listed), not
raised: the invocation itself did not fail.

The same semantics as Powertools' BatchProcessor(EventType.SQS, raise_on_entire_batch_failure=False) with
process_partial_response, in a few lines: importing that utility (its data classes and asyncio) cost the
worker's cold start about 17 ms, for a loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from skillcore.observability import logger


def partial_batch(event: Mapping[str, Any], handle: Callable[[Mapping[str, Any]], object]) -> dict[str, list[dict[str, str]]]:
    """Calls `handle` on each record of the SQS event in order; `{"batchItemFailures": [...]}` lists the
    records whose handling raised an Exception (a BaseException such as KeyboardInterrupt propagates)."""
    records = event.get("Records")  # a non-SQS event is refused as Powertools refuses it
    if not isinstance(records, list):
        raise ValueError("Invalid event format. Please ensure batch event is a valid SQS event.")
    failures: list[dict[str, str]] = []
    for record in records:
        try:
            handle(record)
        except Exception:
            logger.exception("record failed", extra={"message_id": record.get("messageId")})
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}

