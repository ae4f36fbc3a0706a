"""Hosted endpoints: register (check the URL, connect, snapshot, seal), list, get, update, delete.

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

from skillcore.db import audit as audit_store
from skillcore.db import hosted_endpoints as store
from skillcore.db.dynamo import Db
from skillcore.db.transact import Op
from skillcore.egress.errors import EgressError, Refused, UpstreamTimeout
from skillcore.egress.settings import EgressSettings
from skillcore.errors import DomainError, RuleViolation, UpstreamError
from skillcore.errors import UpstreamTimeout as UpstreamTimeoutError
from skillcore.hosted import secrets, snapshot
from skillcore.hosted.models import MAX_TOOLS, EndpointSecret, EndpointStatus, HostedEndpoint
from skillcore.ids import new_id
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


def url_not_allowed(reason: str) -> RuleViolation:
    return RuleViolation("the URL is not allowed", code="url_not_allowed", details={"reason": reason})


def domain_error(error: EgressError) -> DomainError:
    if isinstance(error, Refused):
        return url_not_allowed(error.reason)
    if isinstance(error, UpstreamTimeout):
        return UpstreamTimeoutError("the endpoint did not answer in time")
    return UpstreamError("the endpoint answered badly", code="upstream_error", details={"reason": error.reason})


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


def _metadata(endpoint: HostedEndpoint) -> AuditMetadata:
    return AuditMetadata(endpoint_id=endpoint.endpoint_id, host=endpoint.host, url_sha256=endpoint.url_sha256,
                         fingerprint=endpoint.snapshot.fingerprint)


def _audit(deps: HostedDeps, endpoint: HostedEndpoint, action: AuditAction, now: datetime) -> Op:
    event = AuditEvent(event_id=new_id(now), user_id=endpoint.user_id, at=now, skill_id=deps.skill.skill_id,
                       skill_version=deps.skill.version, action=action, decision=Decision.SUCCEEDED,
                       target_id=endpoint.endpoint_id, metadata=_metadata(endpoint))
    return Op("audit", audit_store.put_audit_op(deps.db, event))


def fetch_tools(deps: HostedDeps, url: str, token: str | None) -> list[dict[str, Any]]:
    if deps.list_tools is not None:
        return deps.list_tools(url, token, deps.egress)
    from skillcore.egress import mcp_session

    return mcp_session.list_tools(url, token, deps.egress, max_tools=MAX_TOOLS)


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


def list_endpoints(deps: HostedDeps, user_id: str) -> list[HostedEndpoint]:
    return store.list_endpoints(deps.db, user_id)


def secret_of(deps: HostedDeps, endpoint: HostedEndpoint) -> EndpointSecret:
    return secrets.open_sealed(deps.keys, endpoint.sealed_secret,
                               secrets.context_of(endpoint.user_id, endpoint.endpoint_id))


class ToolChange(Struct, frozen=True, kw_only=True):
    name: str
    enabled: bool | None = None
    requires_approval: bool | None = None


def unknown_tool(name: str) -> RuleViolation:
    return RuleViolation("the endpoint's snapshot has no such tool", code="unknown_tool", details={"toolName": name})


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
    new_status = endpoint.status
    if status is not None and endpoint.status is not EndpointStatus.DRIFT_PENDING or status is EndpointStatus.DISABLED:
        new_status = status
    updated = replace(endpoint, display_name=display_name or endpoint.display_name, status=new_status,
                      version=endpoint.version + 1, snapshot=replace(endpoint.snapshot, tools=tuple(new_tools)),
                      updated_at=now)
    store.replace(deps.db, updated, expected_version=expected_version,
                  extra=[_audit(deps, updated, AuditAction.HOSTED_ENDPOINT_UPDATE, now)])
    return updated


def delete(deps: HostedDeps, user_id: str, endpoint_id: str, now: datetime) -> None:
    endpoint = get(deps, user_id, endpoint_id)
    store.delete(deps.db, endpoint, extra=[_audit(deps, endpoint, AuditAction.HOSTED_ENDPOINT_DELETE, now)])
