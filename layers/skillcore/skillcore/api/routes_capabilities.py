"""Routes: user-defined capabilities and their tool bindings (docs/contract.md "User-defined capabilities"), the catalog
and protocols an agent host reads (docs/contract.md "Capability catalog and protocols"), and creation by conversation
(docs/contract.md "Creating a capability by conversation").

Thin: each handler calls one function of capabilities/service.py, catalog.py or drafts.py, the same the MCP
face calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct

from skillcore import lazy
from skillcore.api import errors as e
from skillcore.api.app import Caller, ModelRef, Routes, request_models
from skillcore.api.requests import Paging
from skillcore.api.views import Page
from skillcore.api.views import capabilities as views
from skillcore.db import paging
from skillcore.limits.models import RateClass

if TYPE_CHECKING:
    from skillcore.api.requests.capabilities import (
        ConfirmDraft,
        DraftQuery,
        ExpectedVersion,
        ExpectedVersionQuery,
        GenerateDraft,
        ProtocolQuery,
        StartDraft,
        ToolBindingChange,
        UpdateUserCapability,
        UserCapabilityQuery,
    )
    from skillcore.capabilities import catalog, drafts, service
    from skillcore.capabilities.catalog import CatalogDeps
    from skillcore.capabilities.drafts import DraftDeps
    from skillcore.capabilities.service import CapabilityDeps
    from skillcore.capabilities.structure import CreateUserCapability
    from skillcore.clock import Clock
else:  # each loaded by the first request that calls it (skillcore/lazy.py)
    catalog = lazy.module("skillcore.capabilities.catalog")
    drafts = lazy.module("skillcore.capabilities.drafts")
    service = lazy.module("skillcore.capabilities.service")

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.capabilities")


DEFENCES = (e.UnsafeText, e.UnknownReference, e.SchemaNotAllowed)
EDIT = (e.CapabilityActive, e.VersionConflict, e.ConcurrentUpdate)
CREATE = (e.CapabilityNameTaken, e.BindingNameTaken, e.QuotaExceeded, *DEFENCES, e.ConcurrentUpdate)


class CapabilityRouteDeps(Struct, frozen=True):
    capabilities: CapabilityDeps
    catalog: CatalogDeps
    clock: Clock
    drafts: DraftDeps


def register(routes: Routes, deps: CapabilityRouteDeps) -> None:
    @routes.route("GET", "/rpc/capabilities", query=Paging, response=Page[views.CapabilityEntry])
    def list_capability_catalog(caller: Caller, query: Paging) -> Page[views.CapabilityEntry]:
        """The catalog the caller's agents see: enabled built-ins with a protocol and active user capabilities."""
        entries = catalog.list_catalog(deps.catalog, caller.user_id)
        items, cursor = paging.page(entries, lambda entry: entry.capability_id, limit=query.limit, cursor=query.cursor)
        return Page(items=[views.capability_entry(entry) for entry in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/capabilities/protocol", query=request("ProtocolQuery"), response=views.CapabilityProtocol,
                  errors=(e.NotFound, e.ProtocolNotActive, e.SkillDisabled),
                  headers={"Cache-Control": "no-store"})
    def get_capability_protocol(caller: Caller, query: ProtocolQuery) -> views.CapabilityProtocol:
        """The protocol of one catalog entry, rendered now for this session (never cached, never stored)."""
        return views.capability_protocol(catalog.get_protocol(
            deps.catalog, caller.user_id, query.capability_id, host_profile=query.host_profile, preview=query.preview))

    @routes.route("POST", "/rpc/user-capabilities", body=ModelRef("skillcore.capabilities.structure", "CreateUserCapability"), response=views.UserCapability,
                  status=201, errors=CREATE)
    def create_user_capability(caller: Caller, body: CreateUserCapability) -> views.UserCapability:
        """Create a capability (status draft, version 1) with its bindings, in one transaction."""
        return views.user_capability(service.create(deps.capabilities, caller.user_id, body, now=deps.clock()))

    @routes.route("GET", "/rpc/user-capabilities", query=request("UserCapabilityQuery"), response=Page[views.UserCapability])
    def list_user_capabilities(caller: Caller, query: UserCapabilityQuery) -> Page[views.UserCapability]:
        """The caller's capabilities, oldest first, optionally of one status."""
        items, cursor = service.list_capabilities(deps.capabilities, caller.user_id, status=query.status, limit=query.limit,
                                                  cursor=query.cursor)
        return Page(items=[views.user_capability(c) for c in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/user-capabilities/<userCapabilityId>", response=views.UserCapability)
    def get_user_capability(caller: Caller, userCapabilityId: str) -> views.UserCapability:  # noqa: N803
        """One of the caller's capabilities with its bindings."""
        return views.user_capability(service.get(deps.capabilities, caller.user_id, userCapabilityId))

    @routes.route("PUT", "/rpc/user-capabilities/<userCapabilityId>", body=request("UpdateUserCapability"),
                  response=views.UserCapability, errors=(*EDIT, *DEFENCES))
    def update_user_capability(
        caller: Caller, userCapabilityId: str, body: UpdateUserCapability  # noqa: N803
    ) -> views.UserCapability:
        """Replace a draft's texts, workflow and platform capabilities (version + 1)."""
        return views.user_capability(service.update(deps.capabilities, caller.user_id, userCapabilityId, body,
                                                   expected_version=body.expected_version, now=deps.clock()))

    @routes.route("DELETE", "/rpc/user-capabilities/<userCapabilityId>", response=None, status=204,
                  errors=(e.ConcurrentUpdate,))
    def delete_user_capability(caller: Caller, userCapabilityId: str) -> None:  # noqa: N803
        """Delete a capability with its bindings, its name and its quota unit, in one transaction."""
        service.delete(deps.capabilities, caller.user_id, userCapabilityId, now=deps.clock())

    @routes.route("POST", "/rpc/user-capabilities/<userCapabilityId>/activate", body=request("ExpectedVersion"),
                  response=views.UserCapability, errors=(*EDIT, *DEFENCES), decision="person")
    def activate_user_capability(
        caller: Caller, userCapabilityId: str, body: ExpectedVersion  # noqa: N803
    ) -> views.UserCapability:
        """Activate a draft after the defences ran again (version + 1)."""
        return views.user_capability(service.activate(deps.capabilities, caller.user_id, userCapabilityId,
                                                      expected_version=body.expected_version, now=deps.clock()))

    @routes.route("POST", "/rpc/user-capabilities/<userCapabilityId>/deactivate", body=request("ExpectedVersion"),
                  response=views.UserCapability,
                  errors=(e.CapabilityNotActive, e.VersionConflict, e.ConcurrentUpdate))
    def deactivate_user_capability(
        caller: Caller, userCapabilityId: str, body: ExpectedVersion  # noqa: N803
    ) -> views.UserCapability:
        """Back to draft, editable again (version + 1)."""
        return views.user_capability(service.deactivate(deps.capabilities, caller.user_id, userCapabilityId,
                                                        expected_version=body.expected_version, now=deps.clock()))

    @routes.route("POST", "/rpc/user-capabilities/<userCapabilityId>/tool-bindings", body=request("ToolBindingChange"),
                  response=views.BindingChange, status=201,
                  errors=(*EDIT, e.BindingNameTaken, e.QuotaExceeded, *DEFENCES))
    def create_tool_binding(
        caller: Caller, userCapabilityId: str, body: ToolBindingChange  # noqa: N803
    ) -> views.BindingChange:
        """Declare a tool of the user's agent host on a draft (stored only: never registered, proxied or run)."""
        binding, after = service.add_binding(deps.capabilities, caller.user_id, userCapabilityId, body,
                                             expected_version=body.expected_version, now=deps.clock())
        return views.binding_change(binding, after.version)

    @routes.route("PUT", "/rpc/user-capabilities/<userCapabilityId>/tool-bindings/<name>", body=request("ToolBindingChange"),
                  response=views.BindingChange, errors=(*EDIT, *DEFENCES))
    def update_tool_binding(
        caller: Caller, userCapabilityId: str, name: str, body: ToolBindingChange  # noqa: N803
    ) -> views.BindingChange:
        """Replace a binding of a draft (same name)."""
        binding, after = service.update_binding(deps.capabilities, caller.user_id, userCapabilityId, name, body,
                                                expected_version=body.expected_version, now=deps.clock())
        return views.binding_change(binding, after.version)

    @routes.route("DELETE", "/rpc/user-capabilities/<userCapabilityId>/tool-bindings/<name>",
                  query=request("ExpectedVersionQuery"), response=None, status=204, errors=(*EDIT, e.BindingInUse))
    def delete_tool_binding(
        caller: Caller, userCapabilityId: str, name: str, query: ExpectedVersionQuery  # noqa: N803
    ) -> None:
        """Remove a binding no step uses from a draft."""
        service.delete_binding(deps.capabilities, caller.user_id, userCapabilityId, name, expected_version=query.expected_version,
                               now=deps.clock())

    @routes.route("GET", "/rpc/user-capability-drafts", query=request("DraftQuery"), response=Page[views.CapabilityDraft])
    def list_capability_drafts(caller: Caller, query: DraftQuery) -> Page[views.CapabilityDraft]:
        """The caller's drafts, newest first; `status` filters (open: still open and unexpired), to resume one."""
        items, cursor = drafts.list_drafts(deps.drafts, caller.user_id, status=query.status, now=deps.clock(),
                                           limit=query.limit, cursor=query.cursor)
        return Page(items=[views.capability_draft(d) for d in items], next_cursor=cursor)

    @routes.route("GET", "/rpc/user-capability-drafts/<draftId>", response=views.CapabilityDraft)
    def get_capability_draft(caller: Caller, draftId: str) -> views.CapabilityDraft:  # noqa: N803
        """One of the caller's drafts, with its status as of now (another user's is 404)."""
        return views.capability_draft(drafts.get_draft(deps.drafts, caller.user_id, draftId, now=deps.clock()))

    @routes.route("POST", "/rpc/user-capability-drafts", body=request("StartDraft"), response=views.CapabilityDraft, status=201,
                  errors=(e.QuotaExceeded, e.UpstreamError), rate=RateClass.DRAFTING, model=True)
    def start_capability_draft(caller: Caller, body: StartDraft) -> views.CapabilityDraft:
        """start_create: a draft from a description, generated once (revision 1, kept 24 h)."""
        return views.capability_draft(drafts.start_create(deps.drafts, caller.user_id, body.description,
                                                          now=deps.clock()))

    @routes.route("POST", "/rpc/user-capability-drafts/<draftId>/generate", body=request("GenerateDraft"),
                  response=views.CapabilityDraft,
                  errors=(e.DraftRevisionConflict, e.SchemaNotAllowed, e.QuotaExceeded, e.UpstreamError),
                  rate=RateClass.DRAFTING, model=True)
    def generate_capability_draft(
        caller: Caller, draftId: str, body: GenerateDraft  # noqa: N803
    ) -> views.CapabilityDraft:
        """generate_draft: the answers added and the draft generated again (revision + 1)."""
        return views.capability_draft(drafts.generate_draft(deps.drafts, caller.user_id, draftId, body.answers,
                                                            now=deps.clock()))

    @routes.route("POST", "/rpc/user-capability-drafts/<draftId>/confirm", body=request("ConfirmDraft"),
                  response=views.UserCapability, status=201,
                  errors=(e.DraftRevisionConflict, e.DraftHasGaps, *CREATE))
    def confirm_capability_draft(caller: Caller, draftId: str, body: ConfirmDraft) -> views.UserCapability:  # noqa: N803
        """confirm_draft: the proposal becomes a capability (status draft), the draft confirmed, at once."""
        return views.user_capability(drafts.confirm_draft(deps.drafts, caller.user_id, draftId, body.revision,
                                                          now=deps.clock()))
