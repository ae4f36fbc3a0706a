"""The hosted endpoint record and its snapshot."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from msgspec import Struct
from msgspec.structs import force_setattr

MAX_ENDPOINTS_PER_USER = 10
MAX_TOOLS = 64
MAX_SNAPSHOT_BYTES = 256 * 1024


class EndpointStatus(StrEnum):
    ACTIVE = "active"
    DISABLED = "disabled"
    DRIFT_PENDING = "drift_pending"


class SnapshotTool(Struct, frozen=True, kw_only=True):
    name: str
    description: str
    input_schema: dict[str, Any]
    enabled: bool = True
    requires_approval: bool = True


class Snapshot(Struct, frozen=True, kw_only=True):
    fingerprint: str  # SHA-256 of the canonical JSON (RFC 8785) of the tools' names, descriptions and schemas
    taken_at: datetime
    tools: tuple[SnapshotTool, ...]

    def tool(self, name: str) -> SnapshotTool | None:
        return next((t for t in self.tools if t.name == name), None)


class SnapshotDiff(Struct, frozen=True, kw_only=True):
    """What a refresh saw change against the pinned snapshot, by tool name (each tuple in name order)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()  # description or input schema differ

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


class PendingSnapshot(Struct, frozen=True, kw_only=True):
    """A refreshed tool list that differs from the pinned one: held until the owner accepts its fingerprint."""

    snapshot: Snapshot
    diff: SnapshotDiff


class HostedEndpoint(Struct, frozen=True, kw_only=True):
    endpoint_id: str
    user_id: str
    name: str
    display_name: str
    host: str
    url_masked: str
    url_sha256: str
    # The URL and the token, sealed (hosted/secrets.py): the only form in which they are stored.
    sealed_secret: str
    status: EndpointStatus
    version: int
    snapshot: Snapshot
    created_at: datetime
    updated_at: datetime
    pending: PendingSnapshot | None = None  # set while status is drift_pending

    def __post_init__(self) -> None:
        force_setattr(self, "status", EndpointStatus(self.status))

    def drifted_tool_names(self) -> frozenset[str]:
        """Tools refused with `tool_drifted` until the pending list is accepted: the added, the changed and the
        removed ones. A removed tool is still in the pinned snapshot, but the server no longer has it: a call
        would reach a tool the owner cannot see, so it is refused like the others (after the accept it is gone
        from the snapshot and a call is `unknown_tool`)."""
        if self.pending is None:
            return frozenset()
        diff = self.pending.diff
        return frozenset(diff.added) | frozenset(diff.changed) | frozenset(diff.removed)


class EndpointSecret(Struct, frozen=True, kw_only=True):
    """What is sealed: never logged, audited or returned."""

    url: str
    token: str | None = None

    def __repr__(self) -> str:  # a traceback or a log line never shows the secret
        return "EndpointSecret(<sealed>)"
