"""The snapshot of an endpoint's tool list, and the rules it must meet before it is stored.

Caps (docs/contract.md): at most 64 tools and 256 KiB of canonical JSON; a tool name of MCP's shape
(`[A-Za-z0-9_.-]{1,128}`, unique), a description of at most 4096 characters, an input schema that is a
JSON object of type object, valid under Draft 2020-12, nested at most 32 deep.

The schema is later used to validate call arguments, so it must not be able to reach out, stall or recurse:
it must stay inside hosted/schema_bounds.py's allow-list and caps (no regular expression, `$ref` only to the
root's `$defs`, acyclic, depth, size, enum and fan-out caps), checked here and again before each call.
Refusals name the rule, the JSON Pointer inside the schema (`details.path`) and the keyword where there is one
(`regex_keyword` and `remote_ref` keep the names they had).

Each refusal is `snapshot_invalid` with `details.rule` (and the tool's name where there is one).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

import rfc8785
from msgspec.structs import replace

from skillcore.hosted import schema_bounds
from skillcore.hosted.errors import SnapshotInvalid, SnapshotInvalidDetails
from skillcore.hosted.models import (
    MAX_SNAPSHOT_BYTES,
    MAX_TOOLS,
    PendingSnapshot,
    Snapshot,
    SnapshotDiff,
    SnapshotTool,
)

TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
MAX_DESCRIPTION = 4096


def snapshot_invalid(rule: str, tool: str | None = None) -> SnapshotInvalid:
    details = SnapshotInvalidDetails(rule=rule)
    if tool is not None:
        details["tool"] = tool
    return SnapshotInvalid(f"the endpoint's tool list is not acceptable: {rule}", details)


def check_schema(schema: Any, tool: str) -> dict[str, Any]:
    """`schema` when it is an object schema inside the bounds (hosted/schema_bounds.py) and valid under Draft
    2020-12; otherwise `snapshot_invalid`."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise snapshot_invalid("input_schema_not_object", tool)
    try:
        schema_bounds.check(schema)
    except schema_bounds.SchemaRefused as refused:
        raise schema_bounds.schema_refused(refused, tool) from None
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        raise snapshot_invalid("schema_invalid", tool) from None
    return schema


def fingerprint_of(tools: list[dict[str, Any]]) -> str:
    return hashlib.sha256(rfc8785.dumps(tools)).hexdigest()


def _canonical_tools(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(raw) > MAX_TOOLS:
        raise snapshot_invalid("too_many_tools")
    seen: set[str] = set()
    tools: list[dict[str, Any]] = []
    for item in raw:
        name = item.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            raise snapshot_invalid("tool_name")
        if name in seen:
            raise snapshot_invalid("duplicate_tool", name)
        seen.add(name)
        description = item.get("description") or ""
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
            raise snapshot_invalid("description", name)
        tools.append({"name": name, "description": description,
                      "inputSchema": check_schema(item.get("inputSchema"), name)})
    try:
        size = len(rfc8785.dumps(tools))
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        raise snapshot_invalid("not_canonical_json") from None
    if size > MAX_SNAPSHOT_BYTES:
        raise snapshot_invalid("too_large")
    return sorted(tools, key=lambda t: t["name"])


def take(raw: list[dict[str, Any]], now: datetime) -> Snapshot:
    """The snapshot of a tools/list answer (tools in name order), or `snapshot_invalid`. New tools are enabled
    and require approval."""
    tools = _canonical_tools(raw)
    return Snapshot(fingerprint=fingerprint_of(tools), taken_at=now, tools=tuple(
        SnapshotTool(name=t["name"], description=t["description"], input_schema=t["inputSchema"]) for t in tools))


def _canonical(tool: SnapshotTool) -> bytes:
    # Canonical JSON, not ==: in Python 1 == 1.0 == True, while a schema's `1` and `true` are not the same.
    return rfc8785.dumps({"description": tool.description, "inputSchema": tool.input_schema})


def diff(pinned: Snapshot, seen: Snapshot) -> SnapshotDiff:
    """The tools `seen` adds, removes and changes (description or input schema) against `pinned`, by name."""
    before = {t.name: t for t in pinned.tools}
    after = {t.name: t for t in seen.tools}
    return SnapshotDiff(
        added=tuple(sorted(after.keys() - before.keys())),
        removed=tuple(sorted(before.keys() - after.keys())),
        changed=tuple(sorted(name for name in before.keys() & after.keys()
                             if _canonical(before[name]) != _canonical(after[name]))),
    )


def adopt(pinned: Snapshot, pending: PendingSnapshot) -> Snapshot:
    """The pending list as the new pinned snapshot, with the owner's switches carried over:
    - an unchanged tool keeps its switches;
    - a changed tool keeps `enabled` and requires approval again (its description or schema is not the one the
      owner waived approval for);
    - an added tool starts disabled and requiring approval (the owner turns it on);
    - a removed tool is gone."""
    before = {t.name: t for t in pinned.tools}
    added, changed = set(pending.diff.added), set(pending.diff.changed)
    tools = []
    for tool in pending.snapshot.tools:
        old = before.get(tool.name)
        if tool.name in added or old is None:
            tools.append(replace(tool, enabled=False, requires_approval=True))
        elif tool.name in changed:
            tools.append(replace(tool, enabled=old.enabled, requires_approval=True))
        else:
            tools.append(replace(tool, enabled=old.enabled, requires_approval=old.requires_approval))
    return replace(pending.snapshot, tools=tuple(tools))
