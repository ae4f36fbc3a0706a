"""What a DynamoDB call can fail with, as types of this package: nothing outside db/ sees botocore.

`translate` is the one place a botocore error becomes one of these; the client of `Db` applies it to every
call, so stores, services, the worker and the runner catch `StoreError` and its kinds, never ClientError:
- `ConditionFailed`: a single-item conditional write lost its condition; `old` is the item as it was
  (ALL_OLD), deserialised.
- `TransactionCanceled`: a TransactWriteItems was cancelled; its reasons are by operation index. The
  transaction helper (db/transact.py) names them and raises `TransactionFailed` or retries.
- `StoreUnavailable`: throttling, a DynamoDB-side fault or a network error, worth retrying later (also a
  transaction still throttled after its retries, `TransactionThrottled`); a request answers it 503.
- `StoreError` itself: anything else (a malformed request is a bug; it surfaces as an internal error).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from skillcore.db.codec import from_item

# Error codes that say "not now" rather than "never" (botocore's own retries have already run out).
TRANSIENT_CODES = frozenset({
    "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
    "InternalServerError", "ServiceUnavailable", "TransactionConflictException",
    "TransactionInProgressException", "RequestTimeout", "RequestTimeoutException",
})
# Cancellation reasons of a transaction that a second attempt may not meet.
TRANSIENT_REASONS = frozenset({"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"})


class StoreError(Exception):
    """A DynamoDB call failed; `code` is DynamoDB's error code (never shown to a caller)."""

    def __init__(self, message: str, *, code: str, operation: str = ""):
        super().__init__(message)
        self.code = code
        self.operation = operation


class StoreUnavailable(StoreError):
    """Transient: throttled, a service fault or the network. Retry later."""


class ConditionFailed(StoreError):
    """A conditional write found the item otherwise; `old` is it as it was (None if absent or not asked)."""

    def __init__(self, message: str, *, operation: str = "", old: dict[str, Any] | None = None):
        super().__init__(message, code="ConditionalCheckFailedException", operation=operation)
        self.old = old


class Reason:
    """One operation's outcome in a cancelled transaction."""

    __slots__ = ("code", "old")

    def __init__(self, code: str, old: dict[str, Any] | None):
        self.code = code
        self.old = old

    def __repr__(self) -> str:
        return f"Reason({self.code!r})"


class TransactionCanceled(StoreError):
    """A cancelled TransactWriteItems; `reasons[i]` is operation i's (code 'None' where it was fine)."""

    def __init__(self, message: str, *, reasons: list[Reason]):
        super().__init__(message, code="TransactionCanceledException", operation="TransactWriteItems")
        self.reasons = reasons


class TransactionThrottled(TransactionCanceled, StoreUnavailable):
    """A transaction still cancelled by throttling after its retries: a cancellation (its reasons by operation)
    that is also transient, so a request answers it 503 `store_unavailable` like any other unavailability."""


class Failure:
    """A named operation whose condition failed, with the item as it was (ALL_OLD)."""

    __slots__ = ("index", "name", "old")

    def __init__(self, index: int, name: str, old: dict[str, Any] | None):
        self.index = index
        self.name = name
        self.old = old

    def __repr__(self) -> str:
        return f"Failure({self.index}, {self.name!r})"


class TransactionFailed(TransactionCanceled):
    """A transaction lost a condition. `failures` are the operations that did, in operation order, by name;
    a store turns this into its domain error (AlreadyExists, VersionConflict, LeaseLost, QuotaExceeded)."""

    def __init__(self, failures: tuple[Failure, ...], reasons: list[Reason]):
        super().__init__(f"transaction condition failed: {', '.join(f.name for f in failures)}", reasons=reasons)
        self.failures = failures

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.failures)

    def failed(self, name: str) -> Failure | None:
        """The first failed operation called `name`, or None when that one's condition held."""
        return next((f for f in self.failures if f.name == name), None)


def translate(error: Exception, operation: str) -> StoreError:
    """The StoreError for a botocore error raised by `operation` (the client method, such as 'put_item')."""
    if isinstance(error, ClientError):
        body = error.response
        code = body.get("Error", {}).get("Code", "Unknown")
        message = f"{operation}: {code}"
        if code == "ConditionalCheckFailedException":
            return ConditionFailed(message, operation=operation, old=from_item(body.get("Item")))
        if code == "TransactionCanceledException":
            reasons = [Reason(r.get("Code") or "None", from_item(r.get("Item")))
                       for r in body.get("CancellationReasons", [])]
            return TransactionCanceled(message, reasons=reasons)
        status = body.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if code in TRANSIENT_CODES or status >= 500:
            return StoreUnavailable(message, code=code, operation=operation)
        return StoreError(message, code=code, operation=operation)
    if isinstance(error, BotoCoreError):  # connection refused, read timeout, ...
        return StoreUnavailable(f"{operation}: {type(error).__name__}", code=type(error).__name__, operation=operation)
    raise TypeError(f"not a botocore error: {type(error).__name__}")
