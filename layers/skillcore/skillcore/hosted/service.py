"""Hosted endpoints: register (check the URL, connect, snapshot, seal), list, get, update, delete, and the drift
of the pinned snapshot: refresh (check the URL again, connect, compare) and accept (adopt the pending list).

Nothing here logs, audits or returns the URL or the token: the record keeps them sealed (secrets.py), the
views show `host` and `urlMasked`, the audit the host and the URL's SHA-256. Egress failures become the
API's errors here (`url_not_allowed` with `details.reason`, 502 `upstream_error`, 504 `upstream_timeout`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from skillcore.db.dynamo import Db
from skillcore.db.transact import Op
from skillcore.egress.errors import EgressError, Refused, UpstreamTimeout
from skillcore.egress.settings import EgressSettings
from skillcore.errors import (
    ConcurrentUpdate,
    DomainError,
    UnknownTool,
    UpstreamError,
    VersionConflict,
)
from skillcore.errors import UpstreamTimeout as UpstreamTimeoutError
from skillcore.hosted import endpoint_store as store
from skillcore.hosted import secrets, snapshot
from skillcore.hosted.errors import UrlNotAllowed
from skillcore.hosted.models import (
    MAX_TOOLS,
    EndpointSecret,
    EndpointStatus,
    HostedEndpoint,
    PendingSnapshot,
    SnapshotDiff,
)
from skillcore.ids import new_id
from skillcore.policy import audit_store
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.skills.manifest import SkillManifest

ListTools = Callable[[str, str | None, EgressSettings], list[dict[str, Any]]]


class HostedDeps(Struct, frozen=True, kw_only=True):
    db: Db
    keys: secrets.KeyPort
    egress: EgressSettings
    skill: SkillManifest  # the hosted workflows skill's manifest: its id and version go into the audit
    list_tools: ListTools | None = None  # default: egress.mcp_session.list_tools (tests may inject)
    # default: egress.mcp_session.call_tool (hosted/calls.py; tests may inject): (url, token, egress, name, arguments)
    call_tool: Callable[[str, str | None, EgressSettings, str, dict[str, Any]], dict[str, Any]] | None = None
    # seconds left in the invocation (skillcore/invocation.py), so that a request out ends before it does
    time_left: Callable[[], float | None] | None = None


# What the invocation keeps for itself after a request out: the call record's completion and the answer.
ANSWER_MARGIN_SECONDS = 2.0
MIN_DEADLINE_SECONDS = 1.0


def egress_now(deps: HostedDeps) -> EgressSettings:
    """The egress settings for a request that starts now: the deadline is the configured one (30 s) or what
    the invocation has left less ANSWER_MARGIN_SECONDS, whichever is shorter (at least MIN_DEADLINE_SECONDS),
    so the function answers `upstream_timeout` itself instead of being cut off mid-call."""
    left = deps.time_left() if deps.time_left is not None else None
    if left is None or left - ANSWER_MARGIN_SECONDS >= deps.egress.deadline_seconds:
        return deps.egress
    return replace(deps.egress, deadline_seconds=max(MIN_DEADLINE_SECONDS, left - ANSWER_MARGIN_SECONDS))


def url_not_allowed(reason: str) -> UrlNotAllowed:
    return UrlNotAllowed({"reason": reason})


def domain_error(error: EgressError) -> DomainError:
    if isinstance(error, Refused):
        return url_not_allowed(error.reason)
    if isinstance(error, UpstreamTimeout):
        return UpstreamTimeoutError("the endpoint did not answer in time")
    return UpstreamError("the endpoint answered badly", {"reason": error.reason})


@contextmanager
def egress_errors() -> Iterator[None]:
    try:
        yield
    except EgressError as error:
        raise domain_error(error) from None


def masked(host: str) -> str:
    return f"https://{host}/…"


def url_digest(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


def _metadata(endpoint: HostedEndpoint, *, pending_fingerprint: str | None = None,
              previous_fingerprint: str | None = None) -> AuditMetadata:
    return AuditMetadata(endpoint_id=endpoint.endpoint_id, host=endpoint.host, url_sha256=endpoint.url_sha256,
                         fingerprint=endpoint.snapshot.fingerprint, pending_fingerprint=pending_fingerprint,
                         previous_fingerprint=previous_fingerprint)


def _event(deps: HostedDeps, endpoint: HostedEndpoint, action: AuditAction, now: datetime,
           metadata: AuditMetadata | None = None) -> AuditEvent:
    return AuditEvent(event_id=new_id(now), user_id=endpoint.user_id, at=now, skill_id=deps.skill.skill_id,
                      skill_version=deps.skill.version, action=action, decision=Decision.SUCCEEDED,
                      target_id=endpoint.endpoint_id, metadata=metadata or _metadata(endpoint))


def _audit(deps: HostedDeps, endpoint: HostedEndpoint, action: AuditAction, now: datetime,
           metadata: AuditMetadata | None = None) -> Op:
    return Op("audit", audit_store.put_audit_op(deps.db, _event(deps, endpoint, action, now, metadata)))


def fetch_tools(deps: HostedDeps, url: str, token: str | None) -> list[dict[str, Any]]:
    egress = egress_now(deps)
    if deps.list_tools is not None:
        return deps.list_tools(url, token, egress)
    from skillcore.egress import mcp_session

    return mcp_session.list_tools(url, token, egress, max_tools=MAX_TOOLS)


def register(deps: HostedDeps, user_id: str, *, name: str, display_name: str, url: str, token: str | None,
             now: datetime) -> HostedEndpoint:
    from skillcore.egress.url_policy import check_url

    with egress_errors():
        destination = check_url(url, deps.egress.allowed_domains)
    if store.name_in_use(deps.db, user_id, name):
        raise store.name_taken()
    if store.quota_used(deps.db, user_id) >= store.MAX_ENDPOINTS_PER_USER:
        raise store.quota_exceeded()
    with egress_errors():
        raw = fetch_tools(deps, destination.url, token)  # resolves and checks every address first
    taken = snapshot.take(raw, now)
    endpoint_id = new_id(now)
    sealed = secrets.seal(deps.keys, EndpointSecret(url=destination.url, token=token),
                          secrets.context_of(user_id, endpoint_id))
    endpoint = HostedEndpoint(
        endpoint_id=endpoint_id, user_id=user_id, name=name, display_name=display_name, host=destination.host,
        url_masked=masked(destination.host), url_sha256=url_digest(destination.url), sealed_secret=sealed,
        status=EndpointStatus.ACTIVE, version=1, snapshot=taken, created_at=now, updated_at=now,
    )
    store.create(deps.db, endpoint, extra=[_audit(deps, endpoint, AuditAction.HOSTED_ENDPOINT_REGISTER, now)])
    return endpoint


def get(deps: HostedDeps, user_id: str, endpoint_id: str) -> HostedEndpoint:
    endpoint = store.get_endpoint(deps.db, user_id, endpoint_id)
    if endpoint is None:
        raise store.endpoint_not_found()
    return endpoint


def list_endpoints(deps: HostedDeps, user_id: str, *, limit: int,
                   cursor: str | None) -> tuple[list[HostedEndpoint], str | None]:
    return store.list_endpoints(deps.db, user_id, limit=limit, cursor=cursor)


def secret_of(deps: HostedDeps, endpoint: HostedEndpoint) -> EndpointSecret:
    return secrets.open_sealed(deps.keys, endpoint.sealed_secret,
                               secrets.context_of(endpoint.user_id, endpoint.endpoint_id))


class ToolChange(Struct, frozen=True, kw_only=True):
    name: str
    enabled: bool | None = None
    requires_approval: bool | None = None


def unknown_tool(name: str) -> UnknownTool:
    return UnknownTool("the endpoint's snapshot has no such tool", {"toolName": name})


def _status_for(wanted: EndpointStatus, pending: PendingSnapshot | None) -> EndpointStatus:
    """The status an owner's `wanted` status gives: disabled always wins; while a drift is pending, "active" is
    `drift_pending` (only an accept, or a refresh that sees the pinned list again, ends it; the unchanged tools
    work in the meantime). Only "active" and "disabled" are asked for (api/requests/hosted.py)."""
    if wanted is EndpointStatus.DISABLED:
        return EndpointStatus.DISABLED
    return EndpointStatus.DRIFT_PENDING if pending is not None else EndpointStatus.ACTIVE


def update(deps: HostedDeps, user_id: str, endpoint_id: str, *, expected_version: int, display_name: str | None,
           status: EndpointStatus | None, tools: Sequence[ToolChange], now: datetime) -> HostedEndpoint:
    endpoint = get(deps, user_id, endpoint_id)
    if endpoint.version != expected_version:
        raise store.version_conflict(endpoint.version)
    changes = {change.name: change for change in tools}
    for tool_name in changes:
        if endpoint.snapshot.tool(tool_name) is None:
            raise unknown_tool(tool_name)
    new_tools = []
    for tool in endpoint.snapshot.tools:
        change = changes.get(tool.name)
        if change is not None:
            tool = replace(tool, enabled=tool.enabled if change.enabled is None else change.enabled,
                           requires_approval=tool.requires_approval if change.requires_approval is None
                           else change.requires_approval)
        new_tools.append(tool)
    new_status = endpoint.status if status is None else _status_for(status, endpoint.pending)
    updated = replace(endpoint, display_name=display_name or endpoint.display_name, status=new_status,
                      version=endpoint.version + 1, snapshot=replace(endpoint.snapshot, tools=tuple(new_tools)),
                      updated_at=now)
    store.replace(deps.db, updated, expected_version=expected_version,
                  extra=[_audit(deps, updated, AuditAction.HOSTED_ENDPOINT_UPDATE, now)])
    return updated


def delete(deps: HostedDeps, user_id: str, endpoint_id: str, now: datetime) -> None:
    endpoint = get(deps, user_id, endpoint_id)
    store.delete(deps.db, endpoint, extra=[_audit(deps, endpoint, AuditAction.HOSTED_ENDPOINT_DELETE, now)])


# -- drift ------------------------------------------------------------------------------------------

class RefreshResult(Struct, frozen=True, kw_only=True):
    endpoint: HostedEndpoint  # as stored after the refresh
    diff: SnapshotDiff  # against the pinned snapshot; empty when nothing changed

    @property
    def changed(self) -> bool:
        return bool(self.diff)


def _lost_race() -> ConcurrentUpdate:
    return ConcurrentUpdate("the endpoint changed during the refresh; refresh again")


def refresh(deps: HostedDeps, user_id: str, endpoint_id: str, now: datetime) -> RefreshResult:
    """Check the URL again (domain and every address), connect, list the tools, take a snapshot under the same
    caps and compare it with the pinned one by name, description and input schema.

    - no difference: nothing is written but the audit event; a pending drift that went away (the server shows
      the pinned list again) is cleared, and `drift_pending` is `active` again;
    - a difference: never adopted here. The new list becomes the endpoint's pending snapshot with its diff
      (replacing an earlier pending one) and the status `drift_pending` (a disabled endpoint stays disabled);
      a refresh that sees the same pending list again writes only the audit event, so it does not move the
      version an owner is about to accept with.
    A write that loses to a concurrent change of the endpoint is 409 `concurrent_update`. A refresh that
    fails (the URL refused, the server unreachable or failing, a list over the caps) changes nothing and is
    audited as failed with the error's code."""
    from skillcore.egress.url_policy import check_url

    endpoint = get(deps, user_id, endpoint_id)
    secret = secret_of(deps, endpoint)
    try:
        with egress_errors():
            destination = check_url(secret.url, deps.egress.allowed_domains)
            raw = fetch_tools(deps, destination.url, secret.token)  # resolves and checks every address first
        seen = snapshot.take(raw, now)
    except DomainError as error:
        failed = replace(_event(deps, endpoint, AuditAction.HOSTED_ENDPOINT_REFRESH, now),
                         decision=Decision.FAILED, reason=error.code)
        audit_store.put_audit(deps.db, failed)
        raise
    diff = snapshot.diff(endpoint.snapshot, seen)
    metadata = _metadata(endpoint, pending_fingerprint=seen.fingerprint if diff else None)
    same_pending = endpoint.pending is not None and endpoint.pending.snapshot.fingerprint == seen.fingerprint
    if (not diff and endpoint.pending is None) or (diff and same_pending):
        audit_store.put_audit(deps.db, _event(deps, endpoint, AuditAction.HOSTED_ENDPOINT_REFRESH, now, metadata))
        return RefreshResult(endpoint=endpoint, diff=diff)
    pending = PendingSnapshot(snapshot=seen, diff=diff) if diff else None
    status = endpoint.status
    if status is not EndpointStatus.DISABLED:
        status = EndpointStatus.DRIFT_PENDING if pending is not None else EndpointStatus.ACTIVE
    updated = replace(endpoint, pending=pending, status=status, version=endpoint.version + 1, updated_at=now)
    try:
        store.replace(deps.db, updated, expected_version=endpoint.version, pending_changed=True,
                      extra=[_audit(deps, updated, AuditAction.HOSTED_ENDPOINT_REFRESH, now, metadata)])
    except VersionConflict:
        raise _lost_race() from None
    return RefreshResult(endpoint=updated, diff=diff)


def fingerprint_mismatch(endpoint: HostedEndpoint) -> VersionConflict:
    """A fingerprint that is not the pending one: 409 `version_conflict`, like a stale version. Both name what
    the owner reviewed, and the remedy is the same: read the endpoint again (its `pendingDiff` and version) and
    decide on what is pending now. `details.pendingFingerprint` is null when nothing is pending."""
    pending = endpoint.pending.snapshot.fingerprint if endpoint.pending is not None else None
    return VersionConflict("the pending tool list is not the one with that fingerprint",
                           {"currentVersion": endpoint.version, "pendingFingerprint": pending})


def accept(deps: HostedDeps, user_id: str, endpoint_id: str, *, expected_version: int, fingerprint: str,
           now: datetime) -> HostedEndpoint:
    """Adopt the pending tool list as the pinned snapshot (snapshot.adopt: unchanged tools keep their switches,
    changed ones require approval again, added ones start disabled), clear the drift, and make a
    `drift_pending` endpoint `active` (a disabled one stays disabled)."""
    endpoint = get(deps, user_id, endpoint_id)
    if endpoint.version != expected_version:
        raise store.version_conflict(endpoint.version)
    if endpoint.pending is None or endpoint.pending.snapshot.fingerprint != fingerprint:
        raise fingerprint_mismatch(endpoint)
    status = EndpointStatus.DISABLED if endpoint.status is EndpointStatus.DISABLED else EndpointStatus.ACTIVE
    updated = replace(endpoint, snapshot=snapshot.adopt(endpoint.snapshot, endpoint.pending), pending=None,
                      status=status, version=endpoint.version + 1, updated_at=now)
    metadata = _metadata(updated, previous_fingerprint=endpoint.snapshot.fingerprint)
    store.replace(deps.db, updated, expected_version=expected_version, pending_changed=True,
                  extra=[_audit(deps, updated, AuditAction.HOSTED_ENDPOINT_SNAPSHOT_ACCEPT, now, metadata)])
    return updated
