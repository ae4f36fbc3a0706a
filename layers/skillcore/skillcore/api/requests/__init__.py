"""API request models: strict (unknown fields are rejected), camelCase on the wire (skillcore/shapes.py).

Each route module imports only its own request models (`requests.core`, `.chat`, `.skills`, `.background`,
`.automation`), so a function defines no more pydantic classes at cold start than its routes use. No
`from __future__ import annotations` in these modules: with string annotations pydantic compiles each one when
the class is defined.
"""

from pydantic import BaseModel, ConfigDict, Field


class Paging(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    limit: int = Field(default=50, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=2048)
