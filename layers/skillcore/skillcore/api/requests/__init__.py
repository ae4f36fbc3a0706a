"""API request models: strict (unknown fields are rejected), camelCase on the wire.

This package holds the shared pieces; each route module imports only its own request models
(`requests.core`, `.chat`, `.skills`, `.background`, `.automation`), so a function defines no more
pydantic classes at cold start than its routes use. No `from __future__ import annotations` in these
modules: with string annotations pydantic compiles each one when the class is defined.
"""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel


class Strict(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", alias_generator=to_camel, populate_by_name=False, frozen=True)


def not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


Id = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class Paging(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    limit: int = Field(default=50, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=2048)
