"""Creating a capability by conversation over real HTTP (the local gateway, the RpcFunction's handler,
DynamoDB Local, the offline drafter): the whole flow start → generate → confirm → activate, and the drafts'
revision lock under real races (threads behind a barrier):
- N confirms of one revision: exactly one capability is created, the others are draft_revision_conflict, and
  the user's partition holds one capability, one name and a quota counter of 1;
- N generates of one revision: exactly one wins (revision + 1), the others are draft_revision_conflict.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from skillcore.db.dynamo import Db, make_db
from skillcore.settings import Settings

from .conftest import Caller, StackClient
from .test_user_capabilities_concurrency import kinds, stored, together

BASE = "/rpc/user-capability-drafts"
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
DESCRIPTION = "\n".join([
    "name: evening_notes", "display name: Evening notes", "when to use: end of day, wrap up",
    "goal: Write down what was done today",
    "steps: 1. memory-recall: Recall what the user worked on 2. use tool journal on laptop: Append the summary",
    "done when: The summary is in the journal",
])
RACERS = 8


@pytest.fixture
def db(stack: StackClient) -> Db:
    return make_db(Settings.from_env(stack.env))


def journal() -> dict[str, Any]:
    return {"name": "journal", "hostProfile": "laptop", "mcpServerId": "notes", "mcpToolName": "append",
            "inputSchema": SCHEMA}


def ready_draft(user: Caller) -> dict[str, Any]:
    """A draft with no gap left: started, then the binding it asks for given."""
    draft = user.ok("POST", BASE, {"description": DESCRIPTION}, status=201)
    (gap,) = draft["gaps"]
    assert gap["kind"] == "missing_binding" and gap["path"] == "/workflow/steps/1"
    return user.ok("POST", f"{BASE}/{draft['draftId']}/generate",
                   {"answers": [{"gapId": gap["gapId"], "binding": journal()}]})


def test_the_whole_flow_over_http_ends_in_an_active_capability(stack: StackClient) -> None:
    alice = Caller(stack, "drafts")
    draft = ready_draft(alice)
    assert draft["revision"] == 2 and draft["gaps"] == [] and draft["status"] == "open"
    capability = alice.ok("POST", f"{BASE}/{draft['draftId']}/confirm", {"revision": 2}, status=201)
    assert capability["status"] == "draft" and capability["name"] == "evening_notes"
    assert capability["toolBindings"][0]["name"] == "journal"
    active = alice.ok("POST", f"/rpc/user-capabilities/{capability['userCapabilityId']}/activate",
                      {"expectedVersion": 1})
    assert active["status"] == "active"
    bob = Caller(stack, "drafts")
    status, hidden = bob.call("POST", f"{BASE}/{draft['draftId']}/generate", {})
    assert status == 404 and hidden["error"]["code"] == "not_found"
    actions = Counter(e["action"] for e in alice.ok("GET", "/rpc/skills/audit-events?limit=100")["items"])
    assert actions["user_capability.draft.start"] == 1 and actions["user_capability.draft.generate"] == 1
    assert actions["user_capability.draft.confirm"] == 1 and actions["user_capability.create"] == 1


def test_concurrent_confirms_of_one_revision_create_exactly_one_capability(stack: StackClient, db: Db) -> None:
    alice = Caller(stack, "confirms")
    draft = ready_draft(alice)
    path = f"{BASE}/{draft['draftId']}/confirm"
    answers = together(RACERS, lambda _: alice.call("POST", path, {"revision": draft["revision"]}))
    outcomes = Counter((status, body["error"]["code"] if status >= 400 else "created") for status, body in answers)
    assert outcomes == {(201, "created"): 1, (409, "draft_revision_conflict"): RACERS - 1}, outcomes
    created = next(body for status, body in answers if status == 201)
    for status, body in answers:
        if status == 409:
            assert body["error"]["details"]["status"] == "confirmed"
            assert body["error"]["details"]["userCapabilityId"] == created["userCapabilityId"]
    counter, items = stored(db, alice.user)
    assert counter == 1 and kinds(items) == {"capability": 1, "binding": 1, "name": 1, "quota": 1}
    listed = alice.ok("GET", "/rpc/user-capabilities")["items"]
    assert [c["userCapabilityId"] for c in listed] == [created["userCapabilityId"]]


def test_concurrent_generates_of_one_revision_have_exactly_one_winner(stack: StackClient) -> None:
    alice = Caller(stack, "generates")
    draft = alice.ok("POST", BASE, {"description": DESCRIPTION}, status=201)
    (gap,) = draft["gaps"]
    path = f"{BASE}/{draft['draftId']}/generate"
    answers = together(RACERS, lambda _: alice.call("POST", path, {"answers": [{"gapId": gap["gapId"],
                                                                                "binding": journal()}]}))
    outcomes = Counter((status, body["error"]["code"] if status >= 400 else body["revision"]) for status, body in answers)
    assert outcomes == {(200, 2): 1, (409, "draft_revision_conflict"): RACERS - 1}, outcomes
    status, now = alice.call("POST", path, {})
    assert status == 200 and now["revision"] == 3
