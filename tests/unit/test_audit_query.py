"""The audit query's parts: the time range as a key condition on sk (ULIDs), the other filters as a
FilterExpression through ExpressionAttributeNames; the query parameters' checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from skillcore import ids
from skillcore.api import http
from skillcore.api.requests.skills import AdminAuditQuery, AuditQuery
from skillcore.errors import ValidationFailed
from skillcore.policy.audit import Decision
from skillcore.policy.audit_store import AUDIT_PAGE_READS, AuditFilter, build_query, empty_range

T0 = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)


def test_no_filter_is_a_plain_partition_query() -> None:
    parts = build_query(AuditFilter())
    assert parts.sort_condition is None and parts.filter_expression is None
    assert parts.names == {} and parts.values == {}


def test_the_time_range_is_a_key_condition_on_the_event_ids() -> None:
    parts = build_query(AuditFilter(since=T0, until=T0 + timedelta(hours=1)))
    assert parts.sort_condition == "#sk BETWEEN :from AND :to" and parts.filter_expression is None
    low, high = parts.values[":from"], parts.values[":to"]
    # ids minted in the range fall between; ids of the millisecond of `to` and before `from` do not
    assert low <= ids.new_id(T0) <= high
    assert low <= ids.new_id(T0 + timedelta(minutes=59, seconds=59, milliseconds=999)) <= high
    assert ids.new_id(T0 + timedelta(hours=1)) > high
    assert ids.new_id(T0 - timedelta(milliseconds=1)) < low
    assert len(low) == len(high) == 26


def test_an_open_end_of_the_range() -> None:
    since = build_query(AuditFilter(since=T0))
    assert since.values[":from"] <= ids.new_id(T0) and since.values[":to"] == "7" + "Z" * 25
    until = build_query(AuditFilter(until=T0))
    assert until.values[":from"] == "0" * 26 and ids.new_id(T0) > until.values[":to"]


def test_an_empty_range_reads_nothing() -> None:
    assert empty_range(AuditFilter(since=T0, until=T0 + timedelta(microseconds=500)))
    assert empty_range(AuditFilter(until=datetime(1969, 1, 1, tzinfo=UTC)))
    assert not empty_range(AuditFilter(since=T0, until=T0 + timedelta(milliseconds=1)))


def test_the_other_fields_are_a_filter_expression_with_names() -> None:
    parts = build_query(AuditFilter(skill_id="hosted-workflows", action="hosted_endpoint.call",
                                    decision=Decision.DENIED, endpoint_id="ep-1"))
    assert parts.sort_condition is None
    assert parts.filter_expression == ("#skillId = :skillId AND #action = :action AND #decision = :decision"
                                       " AND #metadata.#endpointId = :endpointId")
    assert parts.names == {"#skillId": "skillId", "#action": "action", "#decision": "decision",
                           "#metadata": "metadata", "#endpointId": "endpoint_id"}
    assert parts.values == {":skillId": "hosted-workflows", ":action": "hosted_endpoint.call",
                            ":decision": "denied", ":endpointId": "ep-1"}


def test_an_action_family_is_a_prefix() -> None:
    parts = build_query(AuditFilter(action="hosted_endpoint."))
    assert parts.filter_expression == "begins_with(#action, :action)"


def test_a_page_reads_a_bounded_number_of_times() -> None:
    assert AUDIT_PAGE_READS == 5


def _errors(query: dict[str, str], model: type[AuditQuery] = AuditQuery) -> list[tuple[str, str]]:
    with pytest.raises(ValidationFailed) as raised:
        http.parse(model, query)
    return [(e["path"], e["type"]) for e in raised.value.details["errors"]]


def test_the_query_parameters() -> None:
    query = http.parse(AuditQuery, {"skillId": "memory-recall", "action": "user_capability.binding.",
                                    "decision": "failed", "endpointId": "01JX", "from": "2026-12-04T11:00:00+01:00",
                                    "to": "2026-12-04T11:00:01Z", "limit": "5"})
    assert (query.skill_id, query.action, query.decision, query.endpoint_id) == (
        "memory-recall", "user_capability.binding.", Decision.FAILED, "01JX")
    assert query.since == T0 and query.limit == 5
    admin = http.parse(AdminAuditQuery, {"userId": "u-1", "decision": "denied"})
    assert admin.user_id == "u-1" and admin.decision is Decision.DENIED


@pytest.mark.parametrize(("query", "errors"), [
    ({"from": "2026-12-04T10:00:00"}, [("from", "timezone_aware")]),
    ({"to": "2026-12-04"}, [("to", "timezone_aware")]),
    ({"from": "yesterday"}, [("from", "datetime_from_date_parsing")]),
    ({"to": "0.5"}, [("to", "value_error")]),
    ({"from": "1733300000"}, [("from", "value_error")]),
    ({"action": "tool.exec"}, [("action", "value_error")]),
    ({"action": "hosted_endpoint"}, [("action", "value_error")]),
    ({"action": "Tool Execute"}, [("action", "string_pattern_mismatch")]),
    ({"decision": "approved"}, [("decision", "enum")]),
    ({"skillId": "a b"}, [("skillId", "string_pattern_mismatch")]),
    ({"endpointId": ""}, [("endpointId", "string_too_short")]),
])
def test_bad_filter_values_name_their_field(query: dict[str, str], errors: list[tuple[str, str]]) -> None:
    assert _errors(query) == errors
