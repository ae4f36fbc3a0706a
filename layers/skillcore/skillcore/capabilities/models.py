"""Domain records of user-defined capabilities (seed 004, API.md "User-defined capabilities").

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

from skillcore.models import Frozen

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
