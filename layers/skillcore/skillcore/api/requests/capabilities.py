"""Request models of the user capability routes: the structure itself (capabilities/structure.py) with the
version a change expects, the queries, and the drafting bodies.
"""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic.alias_generators import to_camel

from skillcore.api.requests import Paging
from skillcore.capabilities.models import CapabilityStatus, DraftStatus
from skillcore.capabilities.structure import (
    MAX_ANSWERS,
    CapabilityFields,
    DraftAnswerInput,
    HostProfile,
    ToolBindingInput,
    Version,
)
from skillcore.shapes import NOT_BLANK, Strict, not_blank


class UpdateUserCapability(CapabilityFields):
    expected_version: Version


class ExpectedVersion(Strict):
    expected_version: Version


class ToolBindingChange(ToolBindingInput):
    expected_version: Version


class ExpectedVersionQuery(BaseModel):
    # A query string carries text: "3" is the version 3 here (lax int), unlike in a JSON body.
    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    expected_version: int = Field(alias="expectedVersion", ge=1)


class UserCapabilityQuery(Paging):
    status: CapabilityStatus | None = None


# -- creation by conversation (docs/contract.md "Creating a capability by conversation") -------------------------

DESCRIPTION_MAX = 2000


class StartDraft(Strict):
    description: str = Field(min_length=1, max_length=DESCRIPTION_MAX, json_schema_extra=NOT_BLANK)

    _text = field_validator("description")(not_blank)


class GenerateDraft(Strict):
    answers: list[DraftAnswerInput] = Field(default_factory=list, max_length=MAX_ANSWERS)


class DraftQuery(Paging):
    status: DraftStatus | None = None


class ConfirmDraft(Strict):
    revision: Version


# A catalog entry's id: a built-in skill id or `user:<name>`.
CAPABILITY_ID = r"^(?:user:[a-z][a-z0-9_]{2,39}|[a-z][a-z0-9-]{1,62}[a-z0-9])$"


class ProtocolQuery(BaseModel):
    """`GET /rpc/capabilities/protocol`: a built-in skill id or `user:<name>`, the host profile asking."""

    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True, alias_generator=to_camel,
                              populate_by_name=False)

    capability_id: Annotated[str, StringConstraints(pattern=CAPABILITY_ID)]
    host_profile: HostProfile | None = None
    preview: bool = False
