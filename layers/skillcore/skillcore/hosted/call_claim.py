"""A hosted call's record and its one exchange: the claim committed beside the session's opening, `tools/call`
sent only once it won, and the answer for a clientCallId that already has its record (hosted/calls.py)."""

from __future__ import annotations

import contextvars
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

from skillcore.db.dynamo import Db
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact
from skillcore.egress.settings import EgressSettings
from skillcore.hosted import call_store, service
from skillcore.hosted.call_answer import CallResult, replay
from skillcore.hosted.call_refusals import call_in_progress, key_reused
from skillcore.hosted.models import EndpointSecret
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditEvent

WAIT_POLL_SECONDS = 0.1
WAIT_SLACK_SECONDS = 5.0

# Claims run here, beside the session's opening (one per call; the local stack's concurrent requests share it).
_BESIDE = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hosted-call")


def forward(deps: service.HostedDeps, secret: EndpointSecret, egress: EgressSettings, tool_name: str,
             arguments: dict[str, Any], claim: Claim, sent: threading.Event) -> dict[str, Any] | None:
    """tools/call on the endpoint, sent only once the claim committed: the official client opens its session
    while the claim is written and waits for it before tools/call. None when the claim was lost (nothing of
    the call was sent). `sent` is set just before tools/call goes out. An injected `deps.call_tool` (tests) is the
    exchange alone: it is called after the claim, as sent."""
    call_tool = deps.call_tool
    if call_tool is None:
        from skillcore.egress import mcp_session

        return mcp_session.call_tool(secret.url, secret.token, egress, tool_name, arguments, ready=claim.won,
                                     sent=sent)
    if not claim.won.result():
        return None
    sent.set()
    return call_tool(secret.url, secret.token, egress, tool_name, arguments)


class Claim:
    """The call record's claim (with the call's `allowed` audit, and the approval's use when there is one),
    committed on a worker thread beside the session's opening. `won` resolves True once committed, False when a
    condition failed or the write did (then `lost` holds why); it never raises."""

    def __init__(self, db: Db, ops: list[Op]) -> None:
        self.lost: Exception | None = None
        # In a copy of this context: the commit's store attempts keep the invocation's deadline (invocation.py).
        self.won: Future[bool] = _BESIDE.submit(contextvars.copy_context().run, self._commit, db, ops)

    def _commit(self, db: Db, ops: list[Op]) -> bool:
        try:
            transact(db, ops)
        except Exception as error:  # noqa: BLE001  (handed to the calling thread, which decides: calls.call)
            self.lost = error
            return False
        return True


def answer_recorded(deps: service.HostedDeps, record: call_store.CallRecord, tool_name: str, digest: str,
                     now: datetime) -> CallResult:
    """The answer for a clientCallId that already has its record: 409 `idempotency_key_reused` for another tool or
    other arguments (nothing called, the first answer not shown); else the stored answer, or the wait for it."""
    if not record.same_request(tool_name, digest):
        raise key_reused()
    if record.done:
        return replay(record)
    if (now - record.claimed_at).total_seconds() > deps.egress.deadline_seconds + WAIT_SLACK_SECONDS:
        raise call_in_progress()  # its caller stopped before answering (a crashed invocation): outcome unknown
    return wait_for(deps, record, tool_name, digest)


def wait_for(deps: service.HostedDeps, held: call_store.CallRecord, tool_name: str, digest: str) -> CallResult:
    """A concurrent identical call holds the record: wait for its answer (its deadline, and some slack)."""
    end = time.monotonic() + deps.egress.deadline_seconds + WAIT_SLACK_SECONDS
    while time.monotonic() < end:
        record = call_store.get_call(deps.db, held.user_id, held.endpoint_id, held.client_call_id)
        if record is not None and not record.same_request(tool_name, digest):
            raise key_reused()
        if record is not None and record.done:
            return replay(record)
        time.sleep(WAIT_POLL_SECONDS)
    raise call_in_progress()


def complete_releasing(db: Db, completed: dict[str, Any], event: AuditEvent, release: dict[str, Any]) -> None:
    """The completion and the outcome's audit with the approval's release, one transaction; a release whose
    condition fails (the approval is no longer this call's use) leaves it as it is, and the completion is written
    alone."""
    ops = [Op("call", {"Put": {"TableName": db.tables.hosted_endpoints, "Item": completed}}),
           Op("audit", audit_store.put_audit_op(db, event)), Op("approval", release)]
    try:
        transact(db, ops)
    except TransactionFailed:
        transact(db, ops[:2])
