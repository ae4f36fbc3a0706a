"""The snapshot of an endpoint's tool list, and the rules it must meet before it is stored.

Caps (API.md): at most 64 tools and 256 KiB of canonical JSON; a tool name of MCP's shape
(`[A-Za-z0-9_.-]{1,128}`, unique), a description of at most 4096 characters, an input schema that is a
JSON object of type object, valid under Draft 2020-12, nested at most 32 deep.

The schema is later used to validate call arguments (jsonschema with an empty `referencing.Registry`), so it
must not be able to reach out or stall:
- `$ref` / `$dynamicRef` only to the same document (`#...`): a remote reference is refused here, and the empty
  registry would refuse it again at call time;
- no regular expressions: the keywords `pattern` and `patternProperties` are refused (decision: Python's `re`
  has no time limit and a catastrophic pattern stalls validation; refusing them at snapshot time is simpler and
  checkable than a time-limited engine). `format` is not asserted (no format checker), so it runs no regex.
Keywords are found by position (a property *named* "pattern" is fine): the walk knows which keywords hold a
schema, a list of schemas, or a map of them.

Each refusal is `snapshot_invalid` with `details.rule` (and the tool's name where there is one).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

import rfc8785
from msgspec.structs import replace

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
MAX_DEPTH = 32
SCHEMA = ("additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems",
          "unevaluatedProperties", "additionalItems", "items", "contentSchema")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
SCHEMA_MAPS = ("properties", "$defs", "definitions", "dependentSchemas")
REGEX_KEYWORDS = ("pattern", "patternProperties")
REFS = ("$ref", "$dynamicRef")


def snapshot_invalid(rule: str, tool: str | None = None) -> SnapshotInvalid:
    details = SnapshotInvalidDetails(rule=rule)
    if tool is not None:
        details["tool"] = tool
    return SnapshotInvalid(f"the endpoint's tool list is not acceptable: {rule}", details)


def _walk(schema: Any, tool: str, depth: int) -> None:
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise snapshot_invalid("schema_not_object", tool)
    if depth > MAX_DEPTH:
        raise snapshot_invalid("schema_too_deep", tool)
    for keyword in REGEX_KEYWORDS:
        if keyword in schema:
            raise snapshot_invalid("regex_keyword", tool)
    for keyword in REFS:
        if keyword in schema and not (isinstance(schema[keyword], str) and schema[keyword].startswith("#")):
            raise snapshot_invalid("remote_ref", tool)
    if isinstance(schema.get("$id"), str) and not schema["$id"].startswith("#"):
        raise snapshot_invalid("remote_ref", tool)  # an $id would rebase the references below it
    for keyword in SCHEMA:
        if keyword in schema and not isinstance(schema[keyword], list):
            _walk(schema[keyword], tool, depth + 1)
    for keyword in SCHEMA_LISTS:
        if isinstance(schema.get(keyword), list):
            for sub in schema[keyword]:
                _walk(sub, tool, depth + 1)
    for keyword in SCHEMA_MAPS:
        value = schema.get(keyword)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise snapshot_invalid("schema_invalid", tool)
        for sub in value.values():
            _walk(sub, tool, depth + 1)


def check_schema(schema: Any, tool: str) -> dict[str, Any]:
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise snapshot_invalid("input_schema_not_object", tool)
    _walk(schema, tool, 0)
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
