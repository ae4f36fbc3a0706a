"""Domain records of user-defined capabilities (seed 004, docs/contract.md "User-defined capabilities").

Two clauses of the seed's design are the point of these types, so they are written here where every reader
of the model sees them:
- Only the structured workflow is stored; the protocol an agent reads is rendered by the server from this
  workflow and the declared bindings, so no free text can widen what an agent may call.
- For a tool binding the platform stores the tool's identity and input schema only: it never registers,
  proxies or runs that tool (the agent host calls it locally).

These are neither API bodies (api/requests, api/views) nor DynamoDB items (db/user_capabilities).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from skillcore.conversations.models import Frozen

CAPABILITY_PREFIX = "user:"
MAX_CAPABILITIES_PER_USER = 50
MAX_BINDINGS_PER_CAPABILITY = 20
MAX_STEPS = 20


class CapabilityStatus(StrEnum):
    DRAFT = "draft"
    ACTIVE = "active"


class StepKind(StrEnum):
    PLATFORM_CAPABILITY = "platformCapability"
    LOCAL_TOOL = "localTool"


class PlatformStep(Frozen, frozen=True, kw_only=True):
    """Use one built-in skill; `capability_id` must be among the capability's declared platform ids."""

    capability_id: str
    instruction: str
    kind: StepKind = StepKind.PLATFORM_CAPABILITY


class LocalToolStep(Frozen, frozen=True, kw_only=True):
    """Use one declared binding (same name and host profile) on the agent host."""

    tool_name: str
    host_profile: str
    instruction: str
    kind: StepKind = StepKind.LOCAL_TOOL


Step = PlatformStep | LocalToolStep


class Workflow(Frozen, frozen=True, kw_only=True):
    objective: str
    steps: tuple[Step, ...]
    completion_criteria: str


class ToolBinding(Frozen, frozen=True, kw_only=True):
    name: str
    host_profile: str
    mcp_server_id: str
    mcp_tool_name: str
    input_schema: dict[str, Any]
    requires_user_confirmation: bool = True
    created_at: datetime
    updated_at: datetime


class UserCapability(Frozen, frozen=True, kw_only=True):
    user_id: str
    user_capability_id: str
    name: str
    display_name: str
    when_to_use: tuple[str, ...]
    status: CapabilityStatus
    version: int
    workflow: Workflow
    platform_capability_ids: tuple[str, ...]
    tool_bindings: tuple[ToolBinding, ...]
    created_at: datetime
    updated_at: datetime
    activated_at: datetime | None = None

    @property
    def capability_id(self) -> str:
        return CAPABILITY_PREFIX + self.name

    def binding(self, name: str) -> ToolBinding | None:
        return next((b for b in self.tool_bindings if b.name == name), None)


# -- creation by conversation (docs/contract.md "Creating a capability by conversation") ---------------------------

DRAFT_LIFETIME_HOURS = 24


class DraftStatus(StrEnum):
    OPEN = "open"
    CONFIRMED = "confirmed"
    EXPIRED = "expired"  # never stored: an open draft read at or after its expiresAt


class GapKind(StrEnum):
    MISSING_BINDING = "missing_binding"
    UNKNOWN_CAPABILITY = "unknown_capability"
    MISSING_INFO = "missing_info"


class Gap(Frozen, frozen=True, kw_only=True):
    """What the draft still needs, asked as a question; `path` is the JSON Pointer into the create body the
    answer fills (for a removed step, the index it had in the proposal the model made)."""

    gap_id: str
    path: str
    kind: GapKind
    question: str
    # A gap about one step: that step's description as the user gave it (data, shown beside the question; it
    # passed the text filter like every step instruction), so the person sees which step is meant.
    instruction: str | None = None


class DraftAnswer(Frozen, frozen=True, kw_only=True):
    """What the user answered, kept with the gap it answered (the next generation reads the question too)."""

    path: str
    kind: GapKind
    question: str
    text: str | None = None
    binding_name: str | None = None
    dropped: bool = False  # the person removed the step this gap is about (a step gap only)


class Draft(Frozen, frozen=True, kw_only=True):
    """A capability being created by conversation, kept 24 h. `revision` is its optimistic lock.

    `bindings` are the tool bindings the user gave in answers, as their request bodies (camelCase), by name;
    they are the only bindings a proposal ever carries. `proposal` is the create body without its
    `toolBindings` (those are `bindings`, added when the draft is shown or confirmed), or None."""

    user_id: str
    draft_id: str
    revision: int
    status: DraftStatus  # open or confirmed as stored; see `status_at`
    description: str
    answers: tuple[DraftAnswer, ...]
    bindings: tuple[dict[str, Any], ...]
    proposal: dict[str, Any] | None
    gaps: tuple[Gap, ...]
    created_at: datetime
    updated_at: datetime
    expires_at: datetime
    user_capability_id: str | None = None

    def status_at(self, now: datetime) -> DraftStatus:
        """TTL deletion is lazy (up to days late), so an open draft past its time is expired whatever the table
        still holds."""
        if self.status is DraftStatus.OPEN and now >= self.expires_at:
            return DraftStatus.EXPIRED
        return self.status

    def full_proposal(self) -> dict[str, Any] | None:
        if self.proposal is None:
            return None
        return {**self.proposal, "toolBindings": [dict(b) for b in self.bindings]}

# The drafting model's figures, here (a light module) because the per-user limiter reserves a draft's tokens in
# every function, which must not import the drafting path for them. A full proposal is a few thousand tokens of
# tool input; one attempt of 20 s still fits the gateway's 29 s (a retry after a slow first attempt may not: the
# client then sees a 503 from the gateway and retries).
DRAFT_MAX_TOKENS = 4096
DRAFT_READ_TIMEOUT_S = 20.0
