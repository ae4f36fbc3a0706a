"""Domain errors of background jobs (docs/contract.md "Background skills")."""

from __future__ import annotations

from typing import TypedDict

from skillcore.errors import Conflict, RuleViolation


class JobNotCancellableDetails(TypedDict):
    status: str  # the job's status now


class JobNotCancellable(Conflict):
    code = "job_not_cancellable"
    details: JobNotCancellableDetails

    def __init__(self, status: str) -> None:
        super().__init__(f"a {status} job cannot be cancelled", JobNotCancellableDetails(status=status))


class RunAtOutOfRange(RuleViolation):
    code = "run_at_out_of_range"
    default_message = "runAt must be between 1 minute and 1 year ahead"
