"""The time left in the current Lambda invocation, for a deadline that must end before the invocation does.

A proxied call to a hosted endpoint may wait up to 30 s (egress), but the functions that make one time out
at 29 s (template Globals) and sit behind the HTTP API, which answers 503 on its own after 30 s. A call that
outlived its invocation would leave its record claimed and never answered (hosted/calls.py: "a claim whose
caller died") and the user with the gateway's bare error, so its deadline is cut to what the invocation has
left (hosted/service.py `egress_now`). The store's client does the same with each attempt of a DynamoDB call
(db/dynamo.py `StoreTimeouts`): one that could not end in time is not started, and the request answers 503
`store_unavailable` itself.

    budget = InvocationBudget()          # at module level, once per cold start
    with budget.invocation(context):     # around the whole of lambda_handler
        budget.seconds_left()            # None outside an invocation (scripts, tests without a context)

The budget is a context variable: the local stack runs several invocations at once on their own threads, and
a thread an invocation hands work to gets its budget only by running in a copy of its context
(`contextvars.copy_context().run`, as hosted/calls.py's claim does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any


class InvocationBudget:
    """One per function instance (Lambda runs one invocation at a time in it; the local stack several)."""

    def __init__(self) -> None:
        self._remaining_ms: ContextVar[Callable[[], int] | None] = ContextVar(
            f"invocation_budget_{id(self)}", default=None)

    def begin(self, context: Any) -> None:
        """The invocation of `context` is the current one (until another begins; see `invocation`)."""
        self._remaining_ms.set(getattr(context, "get_remaining_time_in_millis", None))

    @contextmanager
    def invocation(self, context: Any) -> Iterator[None]:
        """The invocation of `context` is the current one inside the block only: after it, nothing run in this
        context (a test's use of a function's clients, a script) is bound by an invocation that has ended."""
        token = self._remaining_ms.set(getattr(context, "get_remaining_time_in_millis", None))
        try:
            yield
        finally:
            self._remaining_ms.reset(token)

    def seconds_left(self) -> float | None:
        remaining = self._remaining_ms.get()
        return remaining() / 1000 if remaining is not None else None
