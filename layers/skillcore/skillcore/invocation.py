"""The time left in the current Lambda invocation, for a deadline that must end before the invocation does.

A proxied call to a hosted endpoint may wait up to 30 s (egress), but the functions that make one time out
at 29 s (template Globals) and sit behind the HTTP API, which answers 503 on its own after 30 s. A call that
outlived its invocation would leave its record claimed and never answered (hosted/calls.py: "a claim whose
caller died") and the user with the gateway's bare error, so its deadline is cut to what the invocation has
left (hosted/service.py `egress_now`). The store's client does the same with each attempt of a DynamoDB call
(db/dynamo.py `StoreTimeouts`): one that could not end in time is not started, and the request answers 503
`store_unavailable` itself.

    budget = InvocationBudget()          # at module level, once per cold start
    budget.begin(context)                # first thing in lambda_handler
    budget.seconds_left()                # None outside an invocation (scripts, tests without a context)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class InvocationBudget:
    """One per function instance: Lambda runs one invocation at a time in it. The local stack runs several at
    once on their own threads, so the invocation begun on the asking thread wins; a thread that began none (a
    helper thread of the invocation) gets the one begun last, which in Lambda is the only one."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._last: Callable[[], int] | None = None

    def begin(self, context: Any) -> None:
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        self._local.remaining_ms = remaining
        self._last = remaining

    def seconds_left(self) -> float | None:
        remaining = getattr(self._local, "remaining_ms", self._last)
        return remaining() / 1000 if remaining is not None else None
