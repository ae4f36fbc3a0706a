"""User capability quotas and the version lock under real races, against DynamoDB Local.

Threads start together behind a barrier. Over real HTTP (the local gateway, the RpcFunction's handler, one
shared boto3 client, as in a warm Lambda) and through the service with one client per thread (to count the
DynamoDB requests each create made, retries included):
- 60 creates for one user: exactly 50 succeed, the rest are quota_exceeded, and the counter equals the items;
- 25 bindings on one capability, each client retrying on version_conflict: exactly 20, the rest quota_exceeded;
- N updates with one expectedVersion: exactly one wins, the others are version_conflict;
- creates with one name: exactly one wins, the others are capability_name_taken.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest

from skillcore.capabilities import items as capability_items
from skillcore.capabilities import service, store
from skillcore.capabilities.models import MAX_BINDINGS_PER_CAPABILITY, MAX_CAPABILITIES_PER_USER
from skillcore.capabilities.structure import CreateUserCapability
from skillcore.db.dynamo import Db, make_db
from skillcore.errors import DomainError
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS
from skillcore_local.ddb_local import client as ddb_client
from tests.support import together

from .conftest import Caller, LocalTables, StackClient

BASE = "/rpc/user-capabilities"
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def create_body(name: str, *, bindings: int = 0) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [
        {"kind": "platformCapability", "capabilityId": "memory-recall", "instruction": "回想用户最近提到的目标"},
    ]
    return {
        "name": name, "displayName": "早间回顾", "whenToUse": ["早上好"],
        "workflow": {"objective": "回顾昨天的目标", "steps": steps, "completionCriteria": "用户确认了计划"},
        "platformCapabilityIds": ["memory-recall"],
        "toolBindings": [{"name": f"b{i:02d}", "hostProfile": "laptop", "mcpServerId": "notes",
                          "mcpToolName": "append", "inputSchema": SCHEMA} for i in range(bindings)],
    }


def binding_body(name: str, version: int) -> dict[str, Any]:
    return {"expectedVersion": version, "name": name, "hostProfile": "laptop", "mcpServerId": "notes",
            "mcpToolName": "append", "inputSchema": SCHEMA}


def stored(db: Db, user: str) -> tuple[int, list[dict[str, Any]]]:
    """The quota counter and every item of the user's partition."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"TableName": db.tables.user_capabilities, "ConsistentRead": True,
                              "KeyConditionExpression": "pk = :pk", "ExpressionAttributeValues": {":pk": {"S": user}}}
    while True:
        response = db.client.query(**params)
        items += response["Items"]
        if not response.get("LastEvaluatedKey"):
            break
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    return store.quota_used(db, user), items


def kinds(items: list[dict[str, Any]]) -> Counter[str]:
    def kind(sk: str) -> str:
        if sk == capability_items.QUOTA_SK:
            return "quota"
        if sk.startswith(capability_items.NAME):
            return "name"
        return "binding" if capability_items.BINDING in sk else "capability"

    return Counter(kind(i["sk"]["S"]) for i in items)


@pytest.fixture
def db(stack: StackClient) -> Db:
    return make_db(Settings.from_env(stack.env))


def test_sixty_concurrent_creates_over_http_make_exactly_fifty(stack: StackClient, db: Db) -> None:
    alice = Caller(stack, "quota")
    racers = MAX_CAPABILITIES_PER_USER + 12
    answers = together(racers, lambda i: alice.call("POST", BASE, create_body(f"routine_{i:02d}")))
    statuses = Counter((status, body["error"]["code"] if status >= 400 else "created") for status, body in answers)
    assert statuses == {(201, "created"): MAX_CAPABILITIES_PER_USER,
                        (422, "quota_exceeded"): racers - MAX_CAPABILITIES_PER_USER}, statuses
    refused = next(body for status, body in answers if status == 422)
    assert refused["error"]["details"] == {"quota": "capabilities", "limit": MAX_CAPABILITIES_PER_USER}
    counter, items = stored(db, alice.user)
    assert counter == MAX_CAPABILITIES_PER_USER
    assert kinds(items) == {"capability": MAX_CAPABILITIES_PER_USER, "name": MAX_CAPABILITIES_PER_USER, "quota": 1}
    listed, cursor = [], None
    while True:
        page = alice.ok("GET", BASE + (f"?cursor={cursor}" if cursor else ""))
        listed += page["items"]
        if not (cursor := page["nextCursor"]):
            break
    assert sorted(c["userCapabilityId"] for c in listed) == sorted(b["userCapabilityId"] for s, b in answers if s == 201)


def test_concurrent_creates_and_deletes_keep_the_counter_equal_to_the_items(stack: StackClient, db: Db) -> None:
    alice = Caller(stack, "churn")
    first = [alice.ok("POST", BASE, create_body(f"first_{i:02d}"), status=201) for i in range(30)]

    def work(i: int) -> tuple[int, Any]:
        if i < 30:
            return alice.call("DELETE", f"{BASE}/{first[i]['userCapabilityId']}")
        return alice.call("POST", BASE, create_body(f"second_{i:02d}"))

    answers = together(70, work)
    assert all(status == 204 for status, _ in answers[:30])
    created = sum(1 for status, _ in answers[30:] if status == 201)
    assert created <= MAX_CAPABILITIES_PER_USER and created >= MAX_CAPABILITIES_PER_USER - 30
    assert {body["error"]["code"] for status, body in answers[30:] if status != 201} <= {"quota_exceeded"}
    counter, items = stored(db, alice.user)
    assert counter == created == kinds(items)["capability"] == kinds(items)["name"]


def test_twenty_five_concurrent_bindings_make_exactly_twenty(stack: StackClient, db: Db) -> None:
    alice = Caller(stack, "bindings")
    capability = alice.ok("POST", BASE, create_body("many_bindings"), status=201)
    path = f"{BASE}/{capability['userCapabilityId']}"
    conflicts = Counter[str]()
    lock = threading.Lock()

    def add(i: int) -> tuple[int, str]:
        # A client that met version_conflict reads the version the answer names and tries again.
        version = capability["version"]
        while True:
            status, body = alice.call("POST", f"{path}/tool-bindings", binding_body(f"t{i:02d}", version))
            if status == 409 and body["error"]["code"] == "version_conflict":
                with lock:
                    conflicts["version_conflict"] += 1
                version = body["error"]["details"]["currentVersion"]
                continue
            if status == 409 and body["error"]["code"] == "concurrent_update":
                continue
            return status, body["error"]["code"] if status >= 400 else "created"

    racers = MAX_BINDINGS_PER_CAPABILITY + 5
    outcomes = Counter(together(racers, add))
    assert outcomes == {(201, "created"): MAX_BINDINGS_PER_CAPABILITY,
                        (422, "quota_exceeded"): racers - MAX_BINDINGS_PER_CAPABILITY}, outcomes
    final = alice.ok("GET", path)
    assert len(final["toolBindings"]) == MAX_BINDINGS_PER_CAPABILITY
    assert final["version"] == 1 + MAX_BINDINGS_PER_CAPABILITY  # every accepted binding bumped it once
    _, items = stored(db, alice.user)
    head = next(i for i in items if i["sk"]["S"] == capability_items.capability_sk(capability["userCapabilityId"]))
    assert int(head["bindingCount"]["N"]) == MAX_BINDINGS_PER_CAPABILITY == kinds(items)["binding"]
    assert len(head["bindingNames"]["SS"]) == MAX_BINDINGS_PER_CAPABILITY
    assert conflicts["version_conflict"] > 0  # the race did happen


def test_updates_with_one_expected_version_have_exactly_one_winner(stack: StackClient) -> None:
    alice = Caller(stack, "lock")
    capability = alice.ok("POST", BASE, create_body("locked"), status=201)
    path = f"{BASE}/{capability['userCapabilityId']}"
    fields = {k: capability[k] for k in ("whenToUse", "workflow", "platformCapabilityIds")}

    def update(i: int) -> tuple[int, Any]:
        return alice.call("PUT", path, {**fields, "expectedVersion": 1, "displayName": f"版本 {i}"})

    answers = together(20, update)
    winners = [body for status, body in answers if status == 200]
    losers = [body["error"] for status, body in answers if status != 200]
    assert len(winners) == 1 and winners[0]["version"] == 2
    assert {(e["code"], e["details"]["currentVersion"]) for e in losers} == {("version_conflict", 2)}
    assert alice.ok("GET", path)["displayName"] == winners[0]["displayName"]


def test_activations_with_one_expected_version_have_exactly_one_winner(stack: StackClient) -> None:
    alice = Caller(stack, "activate")
    capability = alice.ok("POST", BASE, create_body("activated"), status=201)
    path = f"{BASE}/{capability['userCapabilityId']}"
    answers = together(12, lambda i: alice.call("POST", f"{path}/activate", {"expectedVersion": 1}))
    assert sorted(status for status, _ in answers) == [200] + [409] * 11
    assert {body["error"]["code"] for status, body in answers if status == 409} <= {"version_conflict",
                                                                                  "capability_active"}


def test_concurrent_creates_with_one_name_have_exactly_one_winner(stack: StackClient, db: Db) -> None:
    alice = Caller(stack, "names")
    answers = together(20, lambda i: alice.call("POST", BASE, create_body("same_name")))
    assert sorted(status for status, _ in answers) == [201] + [409] * 19
    assert {body["error"]["code"] for status, body in answers if status == 409} == {"capability_name_taken"}
    counter, items = stored(db, alice.user)
    assert counter == 1 and kinds(items) == {"capability": 1, "name": 1, "quota": 1}


class Requests:
    """Counts one client's DynamoDB requests by operation."""

    def __init__(self, client: Any) -> None:
        self.calls: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb", self)

    def __call__(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1


def test_dynamodb_requests_per_create_alone_and_in_a_burst(ddb_local: LocalTables, capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings.from_env(ddb_local.env)
    deps = lambda db: service.CapabilityDeps(db=db, registered=frozenset(m.skill_id for m in SKILLS.manifests()))  # noqa: E731
    user = f"count-{uuid.uuid4().hex[:8]}"
    raw = ddb_client(ddb_local.endpoint)
    alone = Requests(raw)
    body = CreateUserCapability.model_validate(create_body("alone", bindings=3))
    service.create(deps(Db(client=raw, tables=settings.tables)), user, body, now=datetime.now(UTC))
    assert dict(alone.calls) == {"TransactWriteItems": 1}

    racers = 60
    clients = [ddb_client(ddb_local.endpoint) for _ in range(racers)]  # created before the threads start
    counters = [Requests(c) for c in clients]
    burst_user = f"burst-{uuid.uuid4().hex[:8]}"

    def create(i: int) -> str:
        try:
            service.create(deps(Db(client=clients[i], tables=settings.tables)), burst_user,
                           CreateUserCapability.model_validate(create_body(f"burst_{i:02d}")), now=datetime.now(UTC))
            return "created"
        except DomainError as error:
            return error.code

    outcomes = Counter(together(racers, create))
    assert outcomes == {"created": MAX_CAPABILITIES_PER_USER, "quota_exceeded": racers - MAX_CAPABILITIES_PER_USER}
    attempts = [c.calls["TransactWriteItems"] for c in counters]
    assert all(set(c.calls) == {"TransactWriteItems"} for c in counters)
    with capsys.disabled():
        print(f"\nDynamoDB requests per create: alone {sum(alone.calls.values())}; in a burst of {racers} for one "
              f"user: mean {sum(attempts) / racers:.2f}, max {max(attempts)} TransactWriteItems "
              f"(retries after TransactionConflict on the shared quota counter)")
