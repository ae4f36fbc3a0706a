"""Argument models of the MCP tools (docs/contract.md "The MCP face"): strict, camelCase, like the route bodies."""

from typing import Annotated

from pydantic import AwareDatetime, Field, StringConstraints

from skillcore.api.requests.capabilities import (
    CAPABILITY_ID,
    ConfirmDraft,
    GenerateDraft,
    HostProfile,
    StartDraft,
)
from skillcore.shapes import Id, Strict


class NoArguments(Strict):
    """A tool without input (an empty object; any property is refused)."""


# start_create's arguments are the route's body as it is.
StartCreateArguments = StartDraft


class MemoryRecallArguments(Strict):
    agent_id: Id
    # Empty: no topic, the agent's most important memories (the tool skill's own input allows the same).
    question: str = Field(max_length=500)


class ScheduleGoalCheckInArguments(Strict):
    agent_id: Id
    run_at: AwareDatetime
    note: str = Field(default="", max_length=500)


class CapabilityProtocolArguments(Strict):
    """`get_capability_protocol`: the route's query without `preview` (an MCP host reads active capabilities
    only; previewing a draft is its owner's, on the page)."""

    capability_id: Annotated[str, StringConstraints(pattern=CAPABILITY_ID)]
    host_profile: HostProfile | None = None


class GenerateDraftArguments(GenerateDraft):
    """`generate_draft`: the route's body with the draft's id from its path."""

    draft_id: Id


class ConfirmDraftArguments(ConfirmDraft):
    """`confirm_draft`: the route's body with the draft's id from its path."""

    draft_id: Id
