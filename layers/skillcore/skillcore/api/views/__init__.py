"""API response bodies: msgspec Structs, camelCase on the wire, UTC times with `Z`.

The router encodes these (msgspec.json) and the OpenAPI generator derives the response schemas from the same
classes, so the document and the wire cannot drift. One module per route group, so a function defines only
the bodies its routes answer. Two kinds of optional field, on purpose and as the contract has them:
`X | None` is always present and may be `null`; `X | UnsetType = UNSET` is absent when it has no value.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Generic, TypeVar

from msgspec import Meta, Struct

from skillcore.clock import to_api_time

# A time on the wire: the schema says so; to_api_time writes UTC seconds with `Z`.
Time = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]

T = TypeVar("T")


class Body(Struct, frozen=True, kw_only=True, rename="camel"):
    """Base of every response body."""


class Page(Body, Generic[T], frozen=True, kw_only=True):
    items: list[T]
    next_cursor: str | None


def time(value: datetime) -> str:
    return to_api_time(value)


def maybe_time(value: datetime | None) -> str | None:
    return to_api_time(value) if value is not None else None
