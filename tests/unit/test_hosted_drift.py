"""The drift of a hosted endpoint's snapshot: the diff (hosted/snapshot.py), what an accept adopts, the tools a
drift refuses (HostedEndpoint.drifted_tool_names), the status PATCH can set while a drift is pending, and the
size of the stored items (hosted/endpoint_store.py)."""

from __future__ import annotations

import string
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import rfc8785
from msgspec.structs import replace

from skillcore.db.codec import from_item
from skillcore.hosted import endpoint_store as store
from skillcore.hosted import snapshot
from skillcore.hosted.models import (
    MAX_SNAPSHOT_BYTES,
    MAX_TOOLS,
    EndpointStatus,
    HostedEndpoint,
    PendingSnapshot,
    SnapshotDiff,
)
from skillcore.hosted.service import _status_for

NOW = datetime(2026, 12, 3, tzinfo=UTC)
LATER = NOW + timedelta(hours=1)


def tool(name: str, description: str = "Does it.", schema: Any = None) -> dict[str, Any]:
    return {"name": name, "description": description,
            "inputSchema": schema if schema is not None else {"type": "object", "properties": {"q": {"type": "string"}}}}


def endpoint(pinned: snapshot.Snapshot, pending: PendingSnapshot | None = None) -> HostedEndpoint:
    return HostedEndpoint(endpoint_id="01EP", user_id="user-a", name="flow", display_name="Flow", host="api.mcp.test",
                          url_masked="https://api.mcp.test/…", url_sha256="a" * 64, sealed_secret="v1.x.y.z",
                          status=EndpointStatus.DRIFT_PENDING if pending else EndpointStatus.ACTIVE, version=3,
                          snapshot=pinned, created_at=NOW, updated_at=NOW, pending=pending)


def test_the_same_list_in_another_order_is_no_change() -> None:
    pinned = snapshot.take([tool("a"), tool("b")], NOW)
    seen = snapshot.take([tool("b"), tool("a")], LATER)
    diff = snapshot.diff(pinned, seen)
    assert diff == SnapshotDiff() and not diff
    assert seen.fingerprint == pinned.fingerprint


def test_added_removed_and_changed_tools_by_name_in_name_order() -> None:
    pinned = snapshot.take([tool("keep"), tool("gone"), tool("z_desc"), tool("m_schema")], NOW)
    seen = snapshot.take([tool("keep"), tool("new_b"), tool("new_a"), tool("z_desc", description="Now different."),
                          tool("m_schema", schema={"type": "object", "properties": {"q": {"type": "integer"}}})],
                         LATER)
    diff = snapshot.diff(pinned, seen)
    assert diff == SnapshotDiff(added=("new_a", "new_b"), removed=("gone",), changed=("m_schema", "z_desc"))
    assert diff


@pytest.mark.parametrize(("before", "after"), [
    ({"type": "object", "properties": {"n": {"default": 1}}}, {"type": "object", "properties": {"n": {"default": True}}}),
    ({"type": "object", "properties": {"n": {"const": 1}}}, {"type": "object", "properties": {"n": {"const": 1.5}}}),
    ({"type": "object", "required": ["a", "b"]}, {"type": "object", "required": ["b", "a"]}),
    ({"type": "object"}, {"type": "object", "additionalProperties": False}),
])
def test_a_schema_change_python_equality_would_miss_is_a_change(before: Any, after: Any) -> None:
    pinned = snapshot.take([tool("t", schema=before)], NOW)
    seen = snapshot.take([tool("t", schema=after)], LATER)
    assert snapshot.diff(pinned, seen).changed == ("t",)


def test_key_order_in_a_schema_is_no_change() -> None:
    pinned = snapshot.take([tool("t", schema={"type": "object", "properties": {"a": {}, "b": {}}})], NOW)
    seen = snapshot.take([tool("t", schema={"properties": {"b": {}, "a": {}}, "type": "object"})], LATER)
    assert not snapshot.diff(pinned, seen)


def test_accept_keeps_unchanged_switches_disables_added_and_asks_approval_for_changed() -> None:
    pinned = snapshot.take([tool("same"), tool("edited"), tool("removed")], NOW)
    switched = {"same": (False, False), "edited": (True, False), "removed": (True, False)}
    pinned = replace(pinned, tools=tuple(replace(t, enabled=switched[t.name][0], requires_approval=switched[t.name][1])
                                         for t in pinned.tools))
    seen = snapshot.take([tool("same"), tool("edited", description="Other."), tool("added")], LATER)
    pending = PendingSnapshot(snapshot=seen, diff=snapshot.diff(pinned, seen))
    adopted = snapshot.adopt(pinned, pending)
    assert adopted.fingerprint == seen.fingerprint and adopted.taken_at == LATER
    by_name = {t.name: (t.enabled, t.requires_approval, t.description) for t in adopted.tools}
    assert by_name == {"added": (False, True, "Does it."), "edited": (True, True, "Other."),
                       "same": (False, False, "Does it.")}
    assert [t.name for t in adopted.tools] == ["added", "edited", "same"]


def test_drifted_tools_are_the_added_changed_and_removed_ones() -> None:
    pinned = snapshot.take([tool("same"), tool("edited"), tool("removed")], NOW)
    assert endpoint(pinned).drifted_tool_names() == frozenset()
    seen = snapshot.take([tool("same"), tool("edited", description="Other."), tool("added")], LATER)
    drifted = endpoint(pinned, PendingSnapshot(snapshot=seen, diff=snapshot.diff(pinned, seen)))
    assert drifted.drifted_tool_names() == {"added", "edited", "removed"}
    assert "same" not in drifted.drifted_tool_names()


@pytest.mark.parametrize(("wanted", "pending", "expected"), [
    (EndpointStatus.ACTIVE, False, EndpointStatus.ACTIVE),
    (EndpointStatus.DISABLED, False, EndpointStatus.DISABLED),
    (EndpointStatus.ACTIVE, True, EndpointStatus.DRIFT_PENDING),  # PATCH cannot end a drift
    (EndpointStatus.DISABLED, True, EndpointStatus.DISABLED),
])
def test_the_status_patch_can_set(wanted: EndpointStatus, pending: bool, expected: EndpointStatus) -> None:
    held = PendingSnapshot(snapshot=snapshot.take([tool("b")], LATER), diff=SnapshotDiff(added=("b",), removed=("a",)))
    assert _status_for(wanted, held if pending else None) is expected


def _largest_list(prefix: str) -> list[dict[str, Any]]:
    """64 tools with 128-character names and text that does not compress, just under the 256 KiB cap."""
    alphabet = string.ascii_letters + string.digits
    per_tool = MAX_SNAPSHOT_BYTES // MAX_TOOLS - 260  # room for the name, the keys and the punctuation
    tools = []
    for index in range(MAX_TOOLS):
        name = (f"{prefix}{index:03d}" + "n" * 128)[:128]
        text = "".join(alphabet[(index * 7919 + i * 104729) % len(alphabet)] for i in range(per_tool))
        tools.append(tool(name, description=text[:2000], schema={"type": "object", "title": text[2000:]}))
    return tools


def test_the_largest_endpoint_and_pending_items_stay_well_under_400_kb() -> None:
    assert MAX_SNAPSHOT_BYTES - 4096 < len(rfc8785.dumps(_largest_list("old"))) <= MAX_SNAPSHOT_BYTES
    pinned = snapshot.take(_largest_list("old"), NOW)
    seen = snapshot.take(_largest_list("new"), LATER)
    diff = snapshot.diff(pinned, seen)
    assert len(diff.added) == MAX_TOOLS and len(diff.removed) == MAX_TOOLS  # the largest possible diff
    drifted = endpoint(pinned, PendingSnapshot(snapshot=seen, diff=diff))
    drifted = replace(drifted, sealed_secret="v1." + "x" * 8800)  # a 2048-char URL and a 4096-char token, sealed

    def size(item: dict[str, Any]) -> int:  # DynamoDB counts attribute names and values (UTF-8)
        plain = from_item(item) or {}
        return sum(len(k.encode()) + len(str(v).encode()) for k, v in plain.items())

    endpoint_item, pending_item = store.to_endpoint_item(drifted), store.to_pending_item(drifted)
    assert size(endpoint_item) < 300_000 and size(pending_item) < 280_000
    loaded = store.endpoint_from_item(from_item(endpoint_item) or {}, from_item(pending_item))
    assert loaded == drifted


def test_an_endpoint_item_does_not_load_with_another_pending_list() -> None:
    pinned = snapshot.take([tool("a")], NOW)
    first = snapshot.take([tool("a"), tool("b")], LATER)
    second = snapshot.take([tool("a"), tool("c")], LATER)
    held = endpoint(pinned, PendingSnapshot(snapshot=first, diff=snapshot.diff(pinned, first)))
    newer = endpoint(pinned, PendingSnapshot(snapshot=second, diff=snapshot.diff(pinned, second)))
    item = from_item(store.to_endpoint_item(held)) or {}
    assert store.pending_matches(item, from_item(store.to_pending_item(held)))
    assert not store.pending_matches(item, from_item(store.to_pending_item(newer)))
    assert not store.pending_matches(item, None)
    with pytest.raises(ValueError):
        store.endpoint_from_item(item, from_item(store.to_pending_item(newer)))
