"""Approvals through HostedFunction (moto): list with every status filter, approve and deny once, owner
isolation, the audit of each decision (ids, tool and digest, never the arguments), and the requests made."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from skillcore.approvals import service
from skillcore.approvals.models import ApprovalStatus, EndpointBinding
from skillcore.db.dynamo import make_db
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import transact
from skillcore.policy.audit_store import list_audit
from skillcore.settings import Settings
from tests.support import invoke, load_event, load_function

ARGS = {"city": "上海", "secret_note": "do-not-audit-this"}
BOUND = EndpointBinding(endpoint_version=2, snapshot_fingerprint="a" * 64)


@pytest.fixture
def hosted(aws):
    return load_function("HostedFunction")


@pytest.fixture
def db(aws):
    return make_db(Settings.from_env())


def ask(db, user: str = "user-alice", *, arguments: dict[str, Any] | None = None, call: str = "c1",
        at: datetime | None = None, tool: str = "weather"):
    arguments = arguments if arguments is not None else ARGS
    operation = service.operation_of("ep1", tool, arguments)
    return service.ask(db, user, operation, arguments, client_call_id=call, binding=BOUND,
                       now=at or datetime.now(UTC))


def listing(hosted, user: str = "user-alice", **query: str) -> tuple[int, Any]:
    return invoke(hosted, load_event("hosted_list_approvals.json", user=user, query=query or None))


def decide(hosted, approval_id: str, decision: str = "approve", user: str = "user-alice") -> tuple[int, Any]:
    return invoke(hosted, load_event("hosted_decide_approval.json", user=user, path_ids={"APPROVAL_ID": approval_id},
                                     body={"decision": decision}))


def test_a_pending_approval_is_listed_with_its_preview_and_binding(hosted, db) -> None:
    approval = ask(db)
    status, body = listing(hosted)
    assert status == 200
    (item,) = body["items"]
    assert item["approvalId"] == approval.approval_id
    assert item["endpointId"] == "ep1" and item["toolName"] == "weather"
    assert item["argumentsDigest"] == approval.operation.arguments_digest
    assert item["argumentsPreview"] == '{"city":"上海","secret_note":"do-not-audit-this"}'
    assert item["status"] == "pending" and item["decidedAt"] is None
    assert body["nextCursor"] is None


def test_asking_again_for_the_same_call_returns_the_same_approval(db) -> None:
    first = ask(db)
    assert ask(db).approval_id == first.approval_id
    assert ask(db, arguments={"city": "北京"}).approval_id != first.approval_id
    assert ask(db, call="c2").approval_id != first.approval_id


def test_approve_once_then_it_is_not_pending(hosted, db) -> None:
    approval = ask(db)
    status, body = decide(hosted, approval.approval_id)
    assert status == 200, body
    assert body["status"] == "approved" and body["decidedAt"]
    status, body = decide(hosted, approval.approval_id, "deny")
    assert status == 409
    assert body["error"]["code"] == "approval_not_pending"
    assert body["error"]["details"] == {"status": "approved"}


def test_deny_and_the_denied_call_may_ask_again(hosted, db) -> None:
    approval = ask(db)
    assert decide(hosted, approval.approval_id, "deny")[1]["status"] == "denied"
    again = ask(db)
    assert again.approval_id == approval.approval_id and again.status is ApprovalStatus.PENDING


def test_an_expired_approval_cannot_be_decided_and_is_listed_as_expired(hosted, db) -> None:
    old = ask(db, at=datetime.now(UTC) - timedelta(minutes=11))
    status, body = decide(hosted, old.approval_id)
    assert status == 409 and body["error"]["details"] == {"status": "expired"}
    assert [i["status"] for i in listing(hosted)[1]["items"]] == ["expired"]


def test_status_filters(hosted, db) -> None:
    pending = ask(db, call="p")
    approved = ask(db, call="a")
    denied = ask(db, call="d")
    expired = ask(db, call="x", at=datetime.now(UTC) - timedelta(minutes=30))
    decide(hosted, approved.approval_id)
    decide(hosted, denied.approval_id, "deny")
    used = ask(db, call="u")
    decide(hosted, used.approval_id)
    transact(db, [service.use_op(db, used, used.operation, BOUND, datetime.now(UTC))])
    expected = {"pending": pending, "approved": approved, "denied": denied, "expired": expired, "used": used}
    for name, approval in expected.items():
        status, body = listing(hosted, status=name)
        assert status == 200
        assert [i["approvalId"] for i in body["items"]] == [approval.approval_id], name
    assert len(listing(hosted)[1]["items"]) == 5
    status, body = listing(hosted, status="maybe")
    assert status == 422 and body["error"]["code"] == "validation_error"


def test_another_users_approval_is_not_found(hosted, db) -> None:
    approval = ask(db, user="user-bob")
    status, body = decide(hosted, approval.approval_id)
    assert status == 404 and body["error"]["code"] == "not_found"
    assert listing(hosted)[1]["items"] == []
    assert decide(hosted, "01JZZZZZZZZZZZZZZZZZZZZZZZ")[0] == 404


def test_an_approval_is_used_once_and_only_for_its_operation(hosted, db) -> None:
    approval = ask(db)
    decide(hosted, approval.approval_id)
    now = datetime.now(UTC)
    other = service.operation_of("ep1", "weather", {"city": "北京"})
    with pytest.raises(TransactionFailed) as lost:
        transact(db, [service.use_op(db, approval, other, BOUND, now)])
    assert lost.value.names == ("approval",)
    transact(db, [service.use_op(db, approval, approval.operation, BOUND, now)])
    with pytest.raises(TransactionFailed):
        transact(db, [service.use_op(db, approval, approval.operation, BOUND, now)])
    assert listing(hosted)[1]["items"][0]["status"] == "used"


def test_a_body_that_is_not_a_decision_is_refused(hosted, db) -> None:
    approval = ask(db)
    for body in ({"decision": "maybe"}, {}, {"decision": "approve", "extra": 1}):
        event = load_event("hosted_decide_approval.json", path_ids={"APPROVAL_ID": approval.approval_id}, body=body)
        status, answer = invoke(hosted, event)
        assert status == 422 and answer["error"]["code"] == "validation_error", body


def test_each_decision_is_audited_without_the_arguments(hosted, db) -> None:
    approve, deny = ask(db, call="1"), ask(db, call="2")
    decide(hosted, approve.approval_id)
    decide(hosted, deny.approval_id, "deny")
    events, _ = list_audit(db, "user-alice", limit=10, cursor=None)
    decisions = {e.target_id: e for e in events if e.action == "hosted_endpoint.approval"}
    assert {decisions[approve.approval_id].decision, decisions[deny.approval_id].decision} == {"allowed", "denied"}
    event = decisions[approve.approval_id]
    assert event.skill_id == "hosted-workflows" and event.reason == "approve"
    assert event.metadata.endpoint_id == "ep1" and event.metadata.tool_id == "weather"
    assert event.metadata.input_sha256 == approve.operation.arguments_digest
    assert "do-not-audit-this" not in repr(events) and "上海" not in repr(events)


def test_requests_per_operation(hosted, db, monkeypatch) -> None:
    """List: 1 Query. Decide: 1 GetItem + 1 TransactWriteItems, then 1 GetItem for a chat call waiting on the
    approval (the follow-up that posts its result). Ask: 1 PutItem."""
    calls: list[str] = []
    raw = hosted.db.client.raw
    for name in ("query", "get_item", "transact_write_items", "put_item"):
        original = getattr(raw, name)
        monkeypatch.setattr(raw, name, lambda _o=original, _n=name, **kw: (calls.append(_n), _o(**kw))[1])
    hosted.db.client._calls.clear()
    approval = ask(hosted.db)
    assert calls == ["put_item"]
    calls.clear()
    listing(hosted)
    assert calls == ["query"]
    calls.clear()
    decide(hosted, approval.approval_id)
    assert calls == ["get_item", "transact_write_items", "get_item"]


def test_the_list_shows_the_whole_arguments_and_cuts_its_page_by_their_size(hosted, db, monkeypatch) -> None:
    from skillcore.approvals import store

    monkeypatch.setattr(store, "PAGE_ARGUMENTS_BUDGET", 25_000)
    big = [ask(db, call=f"big-{i}", arguments={"pad": "x" * 10_000, "to": f"r{i}\u2066"}) for i in range(5)]
    seen: list[dict[str, Any]] = []
    cursor = None
    pages = 0
    while True:
        status, body = listing(hosted, **({"cursor": cursor} if cursor else {}))
        assert status == 200
        assert len(body["items"]) <= 2  # 2 x ~10 KB fit the budget, a third does not
        seen += body["items"]
        pages += 1
        cursor = body["nextCursor"]
        if cursor is None:
            break
    assert pages == 3
    assert [i["approvalId"] for i in seen] == [a.approval_id for a in reversed(big)]
    for item in seen:
        assert item["argumentsPreview"].startswith('{"pad":"' + "x" * 10_000 + '","to":"r')
        assert item["argumentsPreview"].endswith('\\u{2066}"}')
        assert (item["endpointVersion"], item["snapshotFingerprint"]) == (BOUND.endpoint_version,
                                                                          BOUND.snapshot_fingerprint)
