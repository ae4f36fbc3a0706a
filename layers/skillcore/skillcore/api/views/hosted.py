"""Bodies of the hosted endpoint routes (docs/contract.md "Hosted external workflows"). The URL and the token are never
here: `host` and `urlMasked` only."""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from skillcore.api.views import Body, Time, time
from skillcore.hosted.call_answer import CallResult
from skillcore.hosted.models import EndpointStatus, PendingSnapshot
from skillcore.hosted.models import HostedEndpoint as EndpointRecord


class SnapshotToolView(Body, frozen=True, kw_only=True):
    name: str
    description: str
    input_schema: dict[str, Any]
    enabled: bool
    requires_approval: bool


class SnapshotView(Body, frozen=True, kw_only=True):
    fingerprint: str
    taken_at: Time
    tools: list[SnapshotToolView]


class SnapshotDiffView(Body, frozen=True, kw_only=True):
    """A drift against the pinned snapshot, by tool name. `fingerprint` and `takenAt` are the pending list's:
    the fingerprint is what `POST .../snapshot/accept` takes."""

    fingerprint: str
    taken_at: Time
    added: list[str]
    removed: list[str]
    changed: list[str]


def snapshot_diff(pending: PendingSnapshot) -> SnapshotDiffView:
    return SnapshotDiffView(fingerprint=pending.snapshot.fingerprint, taken_at=time(pending.snapshot.taken_at),
                            added=list(pending.diff.added), removed=list(pending.diff.removed),
                            changed=list(pending.diff.changed))


class HostedEndpoint(Body, frozen=True, kw_only=True):
    endpoint_id: str
    name: str
    display_name: str
    host: str
    url_masked: str
    status: EndpointStatus
    version: int
    snapshot: SnapshotView
    pending_diff: SnapshotDiffView | UnsetType = UNSET  # only while a drift is pending
    created_at: Time
    updated_at: Time


class RefreshResult(Body, frozen=True, kw_only=True):
    changed: bool
    diff: SnapshotDiffView | UnsetType = UNSET  # the pending drift, when there is one


def hosted_endpoint(record: EndpointRecord) -> HostedEndpoint:
    return HostedEndpoint(
        endpoint_id=record.endpoint_id, name=record.name, display_name=record.display_name, host=record.host,
        url_masked=record.url_masked, status=record.status, version=record.version,
        snapshot=SnapshotView(fingerprint=record.snapshot.fingerprint, taken_at=time(record.snapshot.taken_at),
                              tools=[SnapshotToolView(name=t.name, description=t.description,
                                                      input_schema=t.input_schema, enabled=t.enabled,
                                                      requires_approval=t.requires_approval)
                                     for t in record.snapshot.tools]),
        pending_diff=snapshot_diff(record.pending) if record.pending is not None else UNSET,
        created_at=time(record.created_at), updated_at=time(record.updated_at),
    )


class HostedCall(Body, frozen=True, kw_only=True):
    call_id: str
    is_error: bool
    content: str  # the result's text, at most 16 KiB of UTF-8
    structured_content: dict[str, Any] | UnsetType = UNSET
    duration_ms: int


def hosted_call(result: CallResult) -> HostedCall:
    return HostedCall(call_id=result.call_id, is_error=result.is_error, content=result.content,
                      structured_content=UNSET if result.structured_content is None else result.structured_content,
                      duration_ms=result.duration_ms)
