"""The time left in the current Lambda invocation, for a deadline that must end before the invocation does.

A proxied call to a hosted endpoint may wait up to 30 s (egress), but the functions that make one time out
at 29 s (template Globals) and sit behind the HTTP API, which answers 503 on its own after 30 s. A call that
outlived its invocation would leave its record claimed and never answered (hosted/calls.py: "a claim whose
caller died") and the user with the gateway's bare error, so its deadline is cut to what the invocation has
left (hosted/service.py `egress_now`).

    budget = InvocationBudget()          # at module level, once per cold start
    budget.begin(context)                # first thing in lambda_handler
    budget.seconds_left()                # None outside an invocation (scripts, tests without a context)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class InvocationBudget:
    """One per function instance: Lambda runs one invocation at a time in it."""

    def __init__(self) -> None:
        self._remaining_ms: Callable[[], int] | None = None

    def begin(self, context: Any) -> None:
        self._remaining_ms = getattr(context, "get_remaining_time_in_millis", None)

    def seconds_left(self) -> float | None:
        return self._remaining_ms() / 1000 if self._remaining_ms is not None else None
