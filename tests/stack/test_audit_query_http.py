"""The audit query over real HTTP: the owner filters their events by skill, action, outcome, endpoint and
time range, paged with the cursor contract; an operator does the same for one user; another user's events
never appear; bad values are 422 with their field."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest

from skillcore.db.dynamo import make_db
from skillcore.ids import new_id
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.audit_store import put_audit
from skillcore.settings import Settings

from .conftest import Caller, StackClient

pytestmark = pytest.mark.stack

T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
PATH = "/rpc/skills/audit-events"

# (skill, action, decision, endpoint): a spread in which each filter keeps a known subset
KINDS = [
    ("memory-recall", AuditAction.TOOL_EXECUTE, Decision.ALLOWED, None),
    ("memory-recall", AuditAction.TOOL_EXECUTE, Decision.SUCCEEDED, None),
    ("memory-recall", AuditAction.TOOL_EXECUTE, Decision.DENIED, None),
    ("hosted-workflows", AuditAction.HOSTED_ENDPOINT_CALL, Decision.DENIED, "ep-a"),
    ("hosted-workflows", AuditAction.HOSTED_ENDPOINT_CALL, Decision.FAILED, "ep-b"),
    ("hosted-workflows", AuditAction.HOSTED_ENDPOINT_REGISTER, Decision.SUCCEEDED, "ep-a"),
    ("goal-check-in-reminder", AuditAction.BACKGROUND_CANCEL, Decision.CANCELLED, None),
]


def seed(stack: StackClient, user: str, count: int) -> list[AuditEvent]:
    """`count` events, one a minute from T0, cycling through KINDS."""
    db = make_db(Settings.from_env(stack.env))
    events = []
    for i, (skill, action, decision, endpoint) in zip(range(count), itertools.cycle(KINDS), strict=False):
        at = T0 + timedelta(minutes=i)
        event = AuditEvent(event_id=new_id(at), user_id=user, at=at, skill_id=skill, skill_version="1.0.0",
                           action=action, decision=decision,
                           metadata=AuditMetadata(endpoint_id=endpoint, caller_kind="person" if i % 2 else None))
        put_audit(db, event)
        events.append(event)
    return events


def every_page(get: Any, query: dict[str, str]) -> tuple[list[str], int]:
    """Follows the cursors to the end: the event ids in order and the number of pages."""
    seen: list[str] = []
    cursor = None
    for pages in itertools.count(1):
        page = get({**query, **({"cursor": cursor} if cursor else {})})
        seen += [e["eventId"] for e in page["items"]]
        cursor = page.get("nextCursor")
        if not cursor:
            return seen, pages
        assert pages < 50


def newest_first(events: list[AuditEvent]) -> list[str]:
    return [e.event_id for e in sorted(events, key=lambda e: e.event_id, reverse=True)]


@pytest.fixture
def owner(stack: StackClient) -> tuple[Caller, list[AuditEvent]]:
    caller = Caller(stack, "audit")
    return caller, seed(stack, caller.user, 35)


def test_the_owner_filters_by_each_field(stack: StackClient, owner: tuple[Caller, list[AuditEvent]]) -> None:
    caller, events = owner
    other = Caller(stack, "audit-other")
    seed(stack, other.user, 14)

    def get(query: dict[str, str]) -> Any:
        return caller.ok("GET", f"{PATH}?{urlencode(query)}")

    cases: list[tuple[dict[str, str], list[AuditEvent]]] = [
        ({}, events),
        ({"skillId": "memory-recall"}, [e for e in events if e.skill_id == "memory-recall"]),
        ({"action": "tool.execute"}, [e for e in events if e.action is AuditAction.TOOL_EXECUTE]),
        ({"action": "hosted_endpoint."}, [e for e in events if e.action.value.startswith("hosted_endpoint.")]),
        ({"decision": "denied"}, [e for e in events if e.decision is Decision.DENIED]),
        ({"decision": "cancelled"}, [e for e in events if e.decision is Decision.CANCELLED]),
        ({"endpointId": "ep-a"}, [e for e in events if e.metadata.endpoint_id == "ep-a"]),
        ({"from": "2026-11-01T09:10:00+01:00", "to": "2026-11-01T08:20:00Z"},  # 08:10 inclusive to 08:20 exclusive
         [e for e in events if T0 + timedelta(minutes=10) <= e.at < T0 + timedelta(minutes=20)]),
        ({"decision": "denied", "skillId": "hosted-workflows", "from": "2026-11-01T08:05:00Z"},
         [e for e in events if e.decision is Decision.DENIED and e.skill_id == "hosted-workflows"
          and e.at >= T0 + timedelta(minutes=5)]),
        ({"endpointId": "nowhere"}, []),
    ]
    for query, expected in cases:
        for limit in ("100", "3"):
            seen, _ = every_page(get, {**query, "limit": limit})
            assert seen == newest_first(expected), (query, limit)  # each exactly once, newest first
    assert all(e["metadata"].get("callerKind") in (None, "person") for e in get({"limit": "100"})["items"])


def test_paging_with_a_filter_returns_every_match_exactly_once(owner: tuple[Caller, list[AuditEvent]]) -> None:
    caller, events = owner
    denied = newest_first([e for e in events if e.decision is Decision.DENIED])
    assert len(denied) == 10
    seen, pages = every_page(lambda q: caller.ok("GET", f"{PATH}?{urlencode(q)}"), {"decision": "denied",
                                                                                      "limit": "4"})
    assert seen == denied and pages == 3


def test_a_sparse_filter_pages_within_its_read_bound(stack: StackClient) -> None:
    """One match in 600 events: a page reads at most 5 x limit events, so the pages before it may be empty
    but carry a cursor, and following them finds the match once."""
    caller = Caller(stack, "audit-sparse")
    events = seed(stack, caller.user, 6)
    db = make_db(Settings.from_env(stack.env))
    at = T0 + timedelta(hours=2)
    noise = [AuditEvent(event_id=new_id(at + timedelta(seconds=i)), user_id=caller.user,
                        at=at + timedelta(seconds=i), skill_id="memory-recall", skill_version="1.0.0",
                        action=AuditAction.TOOL_EXECUTE, decision=Decision.SUCCEEDED) for i in range(60)]
    for event in noise:
        put_audit(db, event)
    seen, pages = every_page(lambda q: caller.ok("GET", f"{PATH}?{urlencode(q)}"),
                             {"decision": "cancelled", "limit": "2"})
    assert seen == newest_first([e for e in events if e.decision is Decision.CANCELLED])
    assert pages >= 6  # 60 + 6 events, at most 10 read per page


def test_an_operator_filters_one_users_events(stack: StackClient, owner: tuple[Caller, list[AuditEvent]]) -> None:
    caller, events = owner
    admin = stack.token("operator", admin=True)
    query = urlencode({"userId": caller.user, "decision": "failed", "limit": "2"})
    status, page = stack.call("GET", f"/rpc/admin/audit-events?{query}", token=admin)
    assert status == 200
    seen, _ = every_page(lambda q: stack.call("GET", f"/rpc/admin/audit-events?{urlencode(q)}", token=admin)[1],
                         {"userId": caller.user, "decision": "failed", "limit": "2"})
    assert seen == newest_first([e for e in events if e.decision is Decision.FAILED])
    assert page["items"] and all(e["decision"] == "failed" for e in page["items"])
    # not for a person without the operator's group
    status, body = caller.call("GET", f"/rpc/admin/audit-events?{query}")
    assert status == 403, body


def test_a_range_that_ends_before_it_starts_is_empty(stack: StackClient) -> None:
    caller = Caller(stack, "audit-bad")
    query = {"from": "2026-11-01T08:00:00Z", "to": "2026-11-01T07:00:00Z"}
    status, body = caller.call("GET", f"{PATH}?{urlencode(query)}")
    assert (status, body) == (200, {"items": [], "nextCursor": None})


@pytest.mark.parametrize(("query", "path"), [
    ({"from": "2026-11-01T08:00:00"}, "from"),
    ({"to": "2026-11-01T08:00:00"}, "to"),
    ({"to": "0.5"}, "to"),
    ({"decision": "maybe"}, "decision"),
    ({"action": "tool."[:-1]}, "action"),
    ({"skillId": "two words"}, "skillId"),
])
def test_bad_filter_values_are_422_with_their_field(stack: StackClient, query: dict[str, str], path: str) -> None:
    caller = Caller(stack, "audit-bad")
    status, body = caller.call("GET", f"{PATH}?{urlencode(query)}")
    assert status == 422 and body["error"]["code"] == "validation_error", body
    assert [e["path"] for e in body["error"]["details"]["errors"]] == [path]


def test_a_cursor_outside_the_range_is_422_on_cursor(owner: tuple[Caller, list[AuditEvent]]) -> None:
    caller, _ = owner
    cursor = caller.ok("GET", f"{PATH}?limit=2")["nextCursor"]  # at the newest events (08:34)
    status, body = caller.call("GET", f"{PATH}?{urlencode({'cursor': cursor, 'to': '2026-11-01T08:10:00Z'})}")
    assert status == 422 and [e["path"] for e in body["error"]["details"]["errors"]] == ["cursor"], body
