"""API request models: strict (unknown fields are rejected), camelCase on the wire (skillcore/shapes.py).

The route modules name their models (`request_models(...)("PutProfile")`, api/app.py ModelRef) instead of
importing them: a module here is imported, and its classes defined, by the first request that needs one. No
`from __future__ import annotations` in these modules: with string annotations pydantic compiles each one when
the class is defined.
"""

from pydantic import BaseModel, ConfigDict, Field


class Paging(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    limit: int = Field(default=50, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=2048)
