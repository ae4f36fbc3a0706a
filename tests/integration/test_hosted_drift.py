"""Refresh and accept of a hosted endpoint against moto: a URL that now resolves to a refused address is
refused before anything is sent, and the DynamoDB requests each operation makes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from skillcore.db.dynamo import make_db
from skillcore.egress.settings import EgressSettings
from skillcore.errors import RuleViolation
from skillcore.hosted import secrets, service
from skillcore.settings import Settings
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS

NOW = datetime(2026, 12, 3, 12, tzinfo=UTC)
URL = "https://api.mcp.test/mcp/secret-path"


def tools(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "description": n, "inputSchema": {"type": "object"}} for n in names]


@pytest.fixture
def deps(aws: Any, tmp_path: Path) -> service.HostedDeps:
    listed = {"tools": tools("echo")}
    return service.HostedDeps(
        db=make_db(Settings.from_env()), keys=secrets.LocalKeyFile(tmp_path / "key"), skill=HOSTED_WORKFLOWS,
        egress=EgressSettings(allowed_domains=("mcp.test",), local_resolve={"api.mcp.test": ("203.0.113.7",)}),
        list_tools=lambda url, token, egress: listed["tools"])


def test_a_refresh_to_a_url_that_now_resolves_to_a_private_address_is_refused(deps: service.HostedDeps) -> None:
    endpoint = service.register(deps, "user-a", name="flow", display_name="Flow", url=URL, token=None, now=NOW)
    # The real egress path (no injected list_tools): the name now answers a private address.
    moved = service.HostedDeps(db=deps.db, keys=deps.keys, skill=deps.skill, egress=EgressSettings(
        allowed_domains=("mcp.test",), local_resolve={"api.mcp.test": ("203.0.113.7", "10.1.2.3")}))
    with pytest.raises(RuleViolation) as refused:
        service.refresh(moved, "user-a", endpoint.endpoint_id, NOW + timedelta(minutes=1))
    assert refused.value.code == "url_not_allowed" and refused.value.details["reason"].startswith("address_")
    assert service.get(deps, "user-a", endpoint.endpoint_id) == endpoint  # untouched
    # the allow-list changed: refused before any lookup
    narrowed = service.HostedDeps(db=deps.db, keys=deps.keys, skill=deps.skill,
                                  egress=EgressSettings(allowed_domains=("other.test",)))
    with pytest.raises(RuleViolation) as refused:
        service.refresh(narrowed, "user-a", endpoint.endpoint_id, NOW + timedelta(minutes=2))
    assert refused.value.details == {"reason": "domain_not_allowed"}


def test_requests_per_refresh_and_accept(deps: service.HostedDeps, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refresh, no change: GetItem + PutItem (audit). Refresh, drift: GetItem + TransactWriteItems (endpoint,
    pending item, audit). Refresh while drifted: 2 GetItem + one write. Accept: 2 GetItem + TransactWriteItems."""
    endpoint = service.register(deps, "user-a", name="flow", display_name="Flow", url=URL, token=None, now=NOW)
    calls: list[str] = []
    raw = deps.db.client.raw
    for name in ("query", "get_item", "transact_write_items", "put_item", "batch_get_item"):
        original = getattr(raw, name)
        monkeypatch.setattr(raw, name, lambda _o=original, _n=name, **kw: (calls.append(_n), _o(**kw))[1])
    deps.db.client._calls.clear()  # the wrappers bound before the patch
    assert not service.refresh(deps, "user-a", endpoint.endpoint_id, NOW).changed
    assert calls == ["get_item", "put_item"]

    calls.clear()
    drifted = service.HostedDeps(db=deps.db, keys=deps.keys, skill=deps.skill, egress=deps.egress,
                                 list_tools=lambda url, token, egress: tools("echo", "added"))
    result = service.refresh(drifted, "user-a", endpoint.endpoint_id, NOW)
    assert result.changed and calls == ["get_item", "transact_write_items"]

    calls.clear()
    assert service.refresh(drifted, "user-a", endpoint.endpoint_id, NOW).changed  # the same drift again
    assert calls == ["get_item", "get_item", "put_item"]

    calls.clear()
    assert service.list_endpoints(deps, "user-a", limit=10, cursor=None)[0][0].pending is not None
    assert calls == ["query", "batch_get_item"]

    calls.clear()
    assert result.endpoint.pending is not None
    accepted = service.accept(deps, "user-a", endpoint.endpoint_id, expected_version=2,
                              fingerprint=result.endpoint.pending.snapshot.fingerprint, now=NOW)
    assert accepted.pending is None and calls == ["get_item", "get_item", "transact_write_items"]
