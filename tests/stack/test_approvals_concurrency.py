"""Per-operation approvals under real races, against DynamoDB Local, and their routes over real HTTP.

- 20 decisions of one pending approval (half approve, half deny) over HTTP: exactly one wins, the others are
  409 approval_not_pending, and the stored status is the winner's;
- 20 uses of one approved approval, each in its own transaction with one client per thread: exactly one
  commits; the approval is used once;
- 20 asks for one call at once: one approval, the same id for all.
"""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, datetime

from skillcore.approvals import service, store
from skillcore.approvals.models import ApprovalStatus, EndpointBinding
from skillcore.db.dynamo import Db, make_db
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import transact
from skillcore.settings import Settings
from skillcore_local.ddb_local import client as ddb_client

from .conftest import LocalTables, StackClient
from .test_user_capabilities_concurrency import together

RACERS = 20
ARGS = {"query": "季度报告", "limit": 3}
BOUND = EndpointBinding(endpoint_version=1, snapshot_fingerprint="b" * 64)


def _db(stack: StackClient) -> Db:
    settings = Settings.from_env(stack.env)
    return Db(client=ddb_client(settings.dynamodb_endpoint or ""), tables=settings.tables)


def test_racing_decisions_over_http_have_one_winner(stack: StackClient) -> None:
    user = f"approver-{uuid.uuid4().hex[:10]}"
    token = stack.token(user)
    db = _db(stack)
    operation = service.operation_of("ep-race", "publish", ARGS)
    approval = service.ask(db, user, operation, ARGS, client_call_id="call-1", binding=BOUND, now=datetime.now(UTC))

    def decide(i: int) -> tuple[int, str]:
        status, body = stack.call("POST", f"/rpc/approvals/{approval.approval_id}",
                                  {"decision": "approve" if i % 2 else "deny"}, token=token)
        return status, (body.get("status") if status == 200 else body["error"]["code"])

    results = together(RACERS, decide)
    outcomes = Counter(status for status, _ in results)
    assert outcomes == {200: 1, 409: RACERS - 1}, results
    assert {code for status, code in results if status == 409} == {"approval_not_pending"}
    winner = next(state for status, state in results if status == 200)
    status, listing = stack.call("GET", "/rpc/approvals", token=token)
    assert status == 200
    assert [i["status"] for i in listing["items"]] == [winner]
    # Another user sees nothing and cannot decide it.
    other = stack.token(f"other-{uuid.uuid4().hex[:8]}")
    assert stack.call("GET", "/rpc/approvals", token=other)[1]["items"] == []
    assert stack.call("POST", f"/rpc/approvals/{approval.approval_id}", {"decision": "approve"}, token=other)[0] == 404


def test_racing_uses_of_one_approval_commit_once(ddb_local: LocalTables) -> None:
    settings = Settings.from_env(ddb_local.env)
    db = make_db(settings)
    user = f"user-{uuid.uuid4().hex[:10]}"
    operation = service.operation_of("ep-race", "publish", ARGS)
    now = datetime.now(UTC)
    approval = service.ask(db, user, operation, ARGS, client_call_id="call-1", binding=BOUND, now=now)
    service.decide(db, user, approval.approval_id, service.ApprovalDecision.APPROVE, skill_id="hosted-workflows",
                   skill_version="1.0.0", now=now)
    dbs = [Db(client=ddb_client(ddb_local.endpoint), tables=settings.tables) for _ in range(RACERS)]

    def use(i: int) -> bool:
        try:
            transact(dbs[i], [service.use_op(dbs[i], approval, operation, BOUND, datetime.now(UTC))])
        except TransactionFailed as lost:
            assert lost.names == ("approval",)
            return False
        return True

    assert Counter(together(RACERS, use)) == {True: 1, False: RACERS - 1}
    stored = store.get_approval(db, user, approval.approval_id)
    assert stored is not None and stored.status is ApprovalStatus.USED and stored.used_at is not None


def test_racing_asks_for_one_call_make_one_approval(ddb_local: LocalTables) -> None:
    settings = Settings.from_env(ddb_local.env)
    user = f"user-{uuid.uuid4().hex[:10]}"
    operation = service.operation_of("ep-race", "publish", ARGS)
    dbs = [Db(client=ddb_client(ddb_local.endpoint), tables=settings.tables) for _ in range(RACERS)]
    ids = together(RACERS, lambda i: service.ask(dbs[i], user, operation, ARGS, client_call_id="same", binding=BOUND,
                                                 now=datetime.now(UTC)).approval_id)
    assert len(set(ids)) == 1
    items, _ = store.list_approvals(dbs[0], user, status=None, now=datetime.now(UTC), limit=50, cursor=None)
    assert [a.approval_id for a in items] == ids[:1]
