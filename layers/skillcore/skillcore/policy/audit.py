"""The audit record. Its metadata is a typed model with no field able to hold free text: every string is
an identifier, a code or a digest (a closed pattern), so message text, memory text and notes cannot be
written into skill_audit_events even by mistake.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from skillcore.policy.grants import GrantScope

# An identifier or code: letters, digits and a few separators, no spaces, at most 128 characters.
Code = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9:_.#@/+-]{0,127}$")]
Digest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]

_CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:_.#@/+-]{0,127}$")


def audit_code(value: str) -> str:
    """`value` if it is a code; otherwise a fixed placeholder, so untrusted names (a model's tool call)
    never carry free text into the audit."""
    return value if _CODE.match(value) else "invalid_name"


class AuditAction(StrEnum):
    """What was attempted. An execution writes two events with the same action: the policy decision
    (allowed/denied) and, if allowed, the result (succeeded/failed)."""

    PERMISSION_GRANT = "permission.grant"
    PERMISSION_REVOKE = "permission.revoke"
    TOOL_EXECUTE = "tool.execute"
    BACKGROUND_CREATE = "background.create"
    BACKGROUND_EXECUTE = "background.execute"
    BACKGROUND_CANCEL = "background.cancel"
    AUTOMATION_EXECUTE = "automation.execute"


class Decision(StrEnum):
    ALLOWED = "allowed"
    DENIED = "denied"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class AuditMetadata(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    permission_codes: tuple[Code, ...] = ()
    missing_permissions: tuple[Code, ...] = ()
    matched_grant_ids: tuple[Code, ...] = ()
    tool_id: Code | None = None
    idempotency_key: Digest | None = None
    input_sha256: Digest | None = None
    error_code: Code | None = None
    duration_ms: int | None = Field(default=None, ge=0)
    attempt: int | None = Field(default=None, ge=0)
    call_index: int | None = Field(default=None, ge=0)
    results: int | None = Field(default=None, ge=0)
    conversation_id: Code | None = None
    source_message_id: Code | None = None
    job_id: Code | None = None
    run_id: Code | None = None
    tools: tuple[Code, ...] = ()


class AuditEvent(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    event_id: str
    user_id: str
    at: datetime
    skill_id: Code
    skill_version: Code
    action: AuditAction
    decision: Decision
    scope: GrantScope | None = None
    target_id: Code | None = None
    reason: Code | None = None
    metadata: AuditMetadata = Field(default_factory=AuditMetadata)
