"""Bodies of the user capability routes (docs/contract.md "User-defined capabilities")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from skillcore import lazy
from skillcore.api.views import Body, Time, time
from skillcore.capabilities import models
from skillcore.capabilities.defences import schema_subset
from skillcore.capabilities.models import CapabilityStatus, DraftStatus, GapKind
from skillcore.capabilities.protocol import PROTOCOL_TOOL

if TYPE_CHECKING:
    from skillcore.capabilities import catalog
else:  # the catalog's service; a catalog answer has loaded it before its view runs (skillcore/lazy.py)
    catalog = lazy.module("skillcore.capabilities.catalog")


# Tagged by `kind`, as the request's steps are.
class PlatformStep(Body, frozen=True, kw_only=True, tag_field="kind", tag="platformCapability"):
    capability_id: str
    instruction: str


class LocalToolStep(Body, frozen=True, kw_only=True, tag_field="kind", tag="localTool"):
    tool_name: str
    host_profile: str
    instruction: str


class Workflow(Body, frozen=True, kw_only=True):
    objective: str
    steps: list[PlatformStep | LocalToolStep]
    completion_criteria: str


class ToolBinding(Body, frozen=True, kw_only=True):
    name: str
    host_profile: str
    mcp_server_id: str
    mcp_tool_name: str
    input_schema: dict[str, Any]
    requires_user_confirmation: bool
    created_at: Time
    updated_at: Time


class UserCapability(Body, frozen=True, kw_only=True):
    user_capability_id: str
    capability_id: str
    name: str
    display_name: str
    when_to_use: list[str]
    status: CapabilityStatus
    version: int
    workflow: Workflow
    platform_capability_ids: list[str]
    tool_bindings: list[ToolBinding]
    created_at: Time
    updated_at: Time
    activated_at: Time | UnsetType = UNSET


class BindingChange(Body, frozen=True, kw_only=True):
    binding: ToolBinding
    capability_version: int


def step(s: models.Step) -> PlatformStep | LocalToolStep:
    if isinstance(s, models.PlatformStep):
        return PlatformStep(capability_id=s.capability_id, instruction=s.instruction)
    return LocalToolStep(tool_name=s.tool_name, host_profile=s.host_profile,
                         instruction=s.instruction)


def tool_binding(b: models.ToolBinding) -> ToolBinding:
    return ToolBinding(name=b.name, host_profile=b.host_profile, mcp_server_id=b.mcp_server_id,
                       mcp_tool_name=b.mcp_tool_name, input_schema=b.input_schema,
                       requires_user_confirmation=b.requires_user_confirmation, created_at=time(b.created_at),
                       updated_at=time(b.updated_at))


def user_capability(c: models.UserCapability) -> UserCapability:
    w = c.workflow
    return UserCapability(
        user_capability_id=c.user_capability_id, capability_id=c.capability_id, name=c.name,
        display_name=c.display_name, when_to_use=list(c.when_to_use), status=c.status, version=c.version,
        workflow=Workflow(objective=w.objective, steps=[step(s) for s in w.steps],
                          completion_criteria=w.completion_criteria),
        platform_capability_ids=list(c.platform_capability_ids),
        tool_bindings=[tool_binding(b) for b in c.tool_bindings],
        created_at=time(c.created_at), updated_at=time(c.updated_at),
        activated_at=time(c.activated_at) if c.activated_at else UNSET,
    )


def binding_change(b: models.ToolBinding, capability_version: int) -> BindingChange:
    return BindingChange(binding=tool_binding(b), capability_version=capability_version)


# -- creation by conversation ---------------------------------------------------------------------------

class ProposedToolBinding(Body, frozen=True, kw_only=True):
    name: str
    host_profile: str
    mcp_server_id: str
    mcp_tool_name: str
    input_schema: dict[str, Any]
    requires_user_confirmation: bool


class DraftProposal(Body, frozen=True, kw_only=True):
    """The body `POST /rpc/user-capabilities` would take."""

    name: str
    display_name: str
    when_to_use: list[str]
    workflow: Workflow
    platform_capability_ids: list[str]
    tool_bindings: list[ProposedToolBinding]


class DraftGap(Body, frozen=True, kw_only=True):
    gap_id: str
    path: str
    kind: GapKind
    question: str
    # A gap about one step: that step's description as the user gave it (data, shown beside the question).
    instruction: str | UnsetType = UNSET


class CapabilityDraft(Body, frozen=True, kw_only=True):
    draft_id: str
    revision: int
    status: DraftStatus
    proposal: DraftProposal | UnsetType = UNSET
    gaps: list[DraftGap]
    expires_at: Time
    description: str  # what the user described (their own text, to them alone): how they tell drafts apart
    created_at: Time
    updated_at: Time


def capability_draft(d: models.Draft) -> CapabilityDraft:
    proposal = d.full_proposal()
    return CapabilityDraft(
        draft_id=d.draft_id, revision=d.revision, status=d.status,
        proposal=msgspec.convert(proposal, DraftProposal) if proposal is not None else UNSET,
        gaps=[DraftGap(gap_id=g.gap_id, path=g.path, kind=g.kind, question=g.question,
                       instruction=UNSET if g.instruction is None else g.instruction) for g in d.gaps],
        expires_at=time(d.expires_at), description=d.description, created_at=time(d.created_at),
        updated_at=time(d.updated_at),
    )


# -- the catalog and protocols an agent host reads (docs/contract.md "Capability catalog and protocols") ----------

class CatalogPermission(Body, frozen=True, kw_only=True):
    code: str
    granted: bool


class ProtocolInput(Body, frozen=True, kw_only=True):
    capability_id: str


class CapabilityEntry(Body, frozen=True, kw_only=True):
    capability_id: str
    kind: Literal["builtin", "user", "package"]
    display_name: str
    when_to_use: list[str]
    version: str | int  # a built-in's semver, a user capability's version number
    permissions: list[CatalogPermission] | UnsetType = UNSET  # built-ins only
    protocol_tool: Literal["get_capability_protocol"]
    protocol_input: ProtocolInput
    # User capabilities only: the fields whose text the user wrote, to be read as quoted descriptions, never
    # as instructions (the protocol quotes the same way); an addition, so older readers are unaffected.
    user_written: list[Literal["displayName", "whenToUse"]] | UnsetType = UNSET
    # Where it comes from: builtin, verified_publisher or community (an installed package), user_own.
    trust_level: str


class CapabilityProtocol(Body, frozen=True, kw_only=True):
    capability_id: str
    version: str | int
    markdown: str
    platform_capability_ids: list[str]
    tool_bindings: list[ToolBinding]
    missing_bindings: list[str]


def capability_entry(e: catalog.CatalogEntry) -> CapabilityEntry:
    return CapabilityEntry(
        capability_id=e.capability_id, kind=e.kind, display_name=e.display_name,
        when_to_use=list(e.when_to_use), version=e.version,
        permissions=[CatalogPermission(code=p.code, granted=p.granted) for p in e.permissions]
        if e.permissions is not None else UNSET,
        protocol_tool=PROTOCOL_TOOL, protocol_input=ProtocolInput(capability_id=e.capability_id),
        user_written=["displayName", "whenToUse"] if e.kind in (catalog.USER, catalog.PACKAGE) else UNSET,
        trust_level=e.trust_level,
    )


def protocol_binding(b: models.ToolBinding) -> ToolBinding:
    """A binding as a protocol carries it in JSON: its input schema's structure (types, properties, required,
    bounds, enum, const) without the annotation texts (`title`, `description`, `default`, `examples`), which
    reach a host only inside the protocol's quoted Markdown."""
    return msgspec.structs.replace(tool_binding(b), input_schema=schema_subset.structure(b.input_schema))


def capability_protocol(p: catalog.Protocol) -> CapabilityProtocol:
    return CapabilityProtocol(
        capability_id=p.capability_id, version=p.version, markdown=p.markdown,
        platform_capability_ids=list(p.platform_capability_ids),
        tool_bindings=[protocol_binding(b) for b in p.tool_bindings], missing_bindings=list(p.missing_bindings),
    )
