"""The hosted workflow tools a single chat offers the model (hosted/chat.py), and their way back.

Offered: with the `hosted_workflow:invoke` grant active (PolicyGate, the grant alone: each call's approval is
decided by hosted/calls.py) and the hosted workflows skill enabled, the enabled, non-drifted tools of the user's
endpoints that are not disabled. Without the grant nothing is offered and nothing is read beyond the grants.

Tool names on the wire (`wire_name`): Bedrock wants `[a-zA-Z0-9_-]{1,64}`; an MCP tool name may hold dots,
slashes and 128 characters, and an endpoint name is up to 40. The wire name is `h_<endpoint>__<tool>` when that
fits the rule, else a cut, sanitised form with a hash of the real pair; `ToolMap` resolves a wire name back to
exactly the (endpoint, tool) it was made from, and refuses any name it did not offer.

Descriptions: a remote server's tool descriptions (and the `description`/`title`/`examples`/`$comment`
annotations inside its schemas) never reach the model. They are the classic tool-poisoning channel (text the
model reads as guidance, changed by whoever runs the server); the snapshot pins them but a pinned hostile text
is still hostile, and quoting them would still put them where the model looks for how to use a tool. The model
gets a description written here from structure (endpoint, display name, tool name) and the schema's structure;
validation still runs against the full pinned schema (hosted/calls.py).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from msgspec import Struct

from skillcore.hosted.models import EndpointStatus, HostedEndpoint, SnapshotTool
from skillcore.model.port import ToolSpec
from skillcore.observability import logger

WIRE_MAX = 64
_WIRE_OK = re.compile(r"[A-Za-z0-9_-]{1,64}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

# Schema keywords whose values are prose, not structure: never shown to the model (module docstring).
ANNOTATIONS = frozenset({"description", "title", "examples", "$comment"})
NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
LITERALS = frozenset({"enum", "const", "default"})


def wire_name(endpoint_name: str, tool_name: str) -> str:
    plain = f"h_{endpoint_name}__{tool_name}"
    if _WIRE_OK.fullmatch(plain):
        return plain
    digest = hashlib.sha256(f"{endpoint_name}\x1f{tool_name}".encode()).hexdigest()[:12]
    return f"h_{endpoint_name[:20]}__{_UNSAFE.sub('_', tool_name)[:26]}_{digest}"


class OfferedTool(Struct, frozen=True, kw_only=True):
    endpoint: HostedEndpoint
    tool: SnapshotTool

    @property
    def label(self) -> str:
        return f"{self.endpoint.name}.{self.tool.name}"


def offered_tools(endpoints: Sequence[HostedEndpoint]) -> list[OfferedTool]:
    """The tools a call may reach now: endpoint not disabled, tool enabled and not drifted."""
    offered: list[OfferedTool] = []
    for endpoint in endpoints:
        if endpoint.status is EndpointStatus.DISABLED:
            continue
        drifted = endpoint.drifted_tool_names()
        offered.extend(OfferedTool(endpoint=endpoint, tool=t) for t in endpoint.snapshot.tools
                       if t.enabled and t.name not in drifted)
    return offered


def model_schema(schema: Any) -> Any:
    """The schema as the model sees it: its structure without the prose annotations."""
    if isinstance(schema, list):
        return [model_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for name, value in schema.items():
        if name in ANNOTATIONS:
            continue
        if name in LITERALS:
            out[name] = value
        elif name in NAMED_SCHEMAS and isinstance(value, dict):
            out[name] = {key: model_schema(sub) for key, sub in value.items()}
        else:
            out[name] = model_schema(value)
    return out


def tool_description(offered: OfferedTool) -> str:
    return (f"Tool `{offered.tool.name}` of the user's connected workflow `{offered.endpoint.name}`. It runs on an "
            "external service; calls may need the user's approval. Use it only when the user asks for it.")


class ToolMap:
    """Wire names of the offered tools, and back: exactly the names offered, nothing else."""

    def __init__(self, offered: Sequence[OfferedTool]):
        self._by_wire: dict[str, OfferedTool] = {}
        for item in offered:
            name = wire_name(item.endpoint.name, item.tool.name)
            if name in self._by_wire:  # a collision is refused rather than guessed (the first keeps the name)
                logger.warning("hosted tool wire name collision", extra={"endpoint_id": item.endpoint.endpoint_id})
                continue
            self._by_wire[name] = item

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(ToolSpec(name=name, description=tool_description(item),
                              input_schema=model_schema(item.tool.input_schema))
                     for name, item in self._by_wire.items())

    def resolve(self, name: str) -> OfferedTool | None:
        return self._by_wire.get(name)

    def find(self, endpoint_name: str, tool_name: str) -> OfferedTool | None:
        return self._by_wire.get(wire_name(endpoint_name, tool_name))

    def __len__(self) -> int:
        return len(self._by_wire)
