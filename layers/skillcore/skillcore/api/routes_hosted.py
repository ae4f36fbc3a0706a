"""Routes: hosted endpoints (docs/contract.md "Hosted external workflows"). HostedFunction serves them; each handler calls
one function of hosted/service.py."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from msgspec import UNSET, Struct

from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models
from skillcore.api.requests import Paging
from skillcore.api.views import Page
from skillcore.api.views import hosted as views
from skillcore.hosted import calls, service
from skillcore.hosted.models import EndpointStatus
from skillcore.limits.models import RateClass

if TYPE_CHECKING:
    from skillcore.api.requests.hosted import AcceptSnapshot, CallTool, RegisterEndpoint, UpdateEndpoint

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.hosted")


UPSTREAM = (e.UrlNotAllowed, e.UpstreamError, e.UpstreamTimeout)
CALL_ERRORS = (e.SkillDisabled, e.PermissionRequired, e.GrantScopeMismatch, e.EndpointDisabled, e.UnknownTool, e.ToolDrifted,
               e.ApprovalRequired, e.IdempotencyKeyReused, *UPSTREAM, e.ConcurrentUpdate)


class HostedRouteDeps(Struct, frozen=True):
    hosted: service.HostedDeps
    clock: Callable[[], datetime]


def register(routes: Routes, deps: HostedRouteDeps) -> None:
    @routes.route("POST", "/rpc/hosted-endpoints", body=request("RegisterEndpoint"), response=views.HostedEndpoint, status=201,
                  errors=(e.EndpointNameTaken, e.QuotaExceeded, e.SnapshotInvalid, *UPSTREAM, e.ConcurrentUpdate),
                  decision="person")
    def register_hosted_endpoint(caller: Caller, body: RegisterEndpoint) -> views.HostedEndpoint:
        """Check the URL, connect, list the tools and pin them as the endpoint's snapshot."""
        return views.hosted_endpoint(service.register(
            deps.hosted, caller.user_id, name=body.name, display_name=body.display_name, url=body.url,
            token=body.auth_token, now=deps.clock()))

    @routes.route("GET", "/rpc/hosted-endpoints", query=Paging, response=Page[views.HostedEndpoint])
    def list_hosted_endpoints(caller: Caller, query: Paging) -> Page[views.HostedEndpoint]:
        """The caller's endpoints (at most 10), oldest first."""
        items, cursor = service.list_endpoints(deps.hosted, caller.user_id, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.hosted_endpoint(i) for i in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/hosted-endpoints/<endpointId>", response=views.HostedEndpoint)
    def get_hosted_endpoint(caller: Caller, endpointId: str) -> views.HostedEndpoint:  # noqa: N803
        """One of the caller's endpoints with its snapshot."""
        return views.hosted_endpoint(service.get(deps.hosted, caller.user_id, endpointId))

    @routes.route("PATCH", "/rpc/hosted-endpoints/<endpointId>", body=request("UpdateEndpoint"), response=views.HostedEndpoint,
                  errors=(e.VersionConflict, e.UnknownTool, e.ConcurrentUpdate), decision="person")
    def update_hosted_endpoint(caller: Caller, endpointId: str, body: UpdateEndpoint) -> views.HostedEndpoint:  # noqa: N803
        """Rename, enable or disable the endpoint, and switch its tools (enabled, requiresApproval)."""
        return views.hosted_endpoint(service.update(
            deps.hosted, caller.user_id, endpointId, expected_version=body.expected_version,
            display_name=body.display_name, status=EndpointStatus(body.status) if body.status else None,
            tools=[service.ToolChange(name=t.name, enabled=t.enabled, requires_approval=t.requires_approval)
                   for t in body.tools or []], now=deps.clock()))

    @routes.route("DELETE", "/rpc/hosted-endpoints/<endpointId>", response=None, status=204,
                  errors=(e.ConcurrentUpdate,))
    def delete_hosted_endpoint(caller: Caller, endpointId: str) -> None:  # noqa: N803
        """Delete the endpoint and its sealed secrets."""
        service.delete(deps.hosted, caller.user_id, endpointId, deps.clock())

    @routes.route("POST", "/rpc/hosted-endpoints/<endpointId>/calls", body=request("CallTool"), response=views.HostedCall,
                  errors=CALL_ERRORS, rate=RateClass.HOSTED_CALLS)
    def call_hosted_tool(caller: Caller, endpointId: str, body: CallTool) -> views.HostedCall:  # noqa: N803
        """Call one tool of the endpoint's snapshot: checked (grant, endpoint, tool, arguments, approval) and
        forwarded; the same clientCallId answers the same body and calls nothing."""
        return views.hosted_call(calls.call(
            deps.hosted, caller.user_id, endpointId, tool_name=body.tool_name, arguments=body.arguments,
            client_call_id=body.client_call_id, approval_id=body.approval_id, now=deps.clock()))

    @routes.route("POST", "/rpc/hosted-endpoints/<endpointId>/refresh", response=views.RefreshResult,
                  errors=(e.SnapshotInvalid, *UPSTREAM, e.ConcurrentUpdate), rate=RateClass.REFRESH)
    def refresh_hosted_endpoint(caller: Caller, endpointId: str) -> views.RefreshResult:  # noqa: N803
        """Check the URL again, list the tools and compare them with the pinned snapshot; a change is held as
        the endpoint's pending drift (`drift_pending`) until it is accepted, never adopted here."""
        result = service.refresh(deps.hosted, caller.user_id, endpointId, deps.clock())
        pending = result.endpoint.pending
        return views.RefreshResult(changed=result.changed, diff=views.snapshot_diff(pending)
                                   if result.changed and pending is not None else UNSET)

    @routes.route("POST", "/rpc/hosted-endpoints/<endpointId>/snapshot/accept", body=request("AcceptSnapshot"),
                  response=views.HostedEndpoint, errors=(e.VersionConflict, e.ConcurrentUpdate),
                  decision="person")
    def accept_hosted_snapshot(caller: Caller, endpointId: str, body: AcceptSnapshot) -> views.HostedEndpoint:  # noqa: N803
        """Adopt the pending tool list with that fingerprint: the tools it adds start disabled."""
        return views.hosted_endpoint(service.accept(
            deps.hosted, caller.user_id, endpointId, expected_version=body.expected_version,
            fingerprint=body.fingerprint, now=deps.clock()))
