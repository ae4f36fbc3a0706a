"""The catalog's conditions under races, over real HTTP on DynamoDB Local: a skill id is one publisher's however
many submit it at once, a version is submitted once, and a release is decided once (approve or reject, never
both; the catalog shows it exactly when the approval won)."""

from __future__ import annotations

import uuid
from collections import Counter

from tests import package_support as ps
from tests.support import together

from .conftest import Caller, StackClient

RACERS = 6


def operator(stack: StackClient) -> Caller:
    caller = Caller(stack, "operator")
    caller.auth = stack.token(caller.user, admin=True)
    return caller


def publisher(stack: StackClient, admin: Caller) -> tuple[Caller, str, ps.KeyPair]:
    account, publisher_id, keys = Caller(stack, "publisher"), f"pub-{uuid.uuid4().hex[:10]}", ps.KeyPair()
    admin.ok("POST", "/rpc/admin/publishers", {"publisherId": publisher_id, "displayName": "P", "userId": account.user,
                                               "trustLevel": "community", "publicKey": keys.pem}, status=201)
    return account, publisher_id, keys


def submit(account: Caller, keys: ps.KeyPair, data: bytes) -> tuple[int, dict]:
    return account.call("POST", "/rpc/releases", {"package": ps.b64(data), "signature": keys.sign(data)})


def outcome(answer: tuple[int, dict]) -> str:
    status, body = answer
    return str(status) if status < 400 else f"{status} {body['error']['code']}"


def test_a_skill_id_is_one_publishers_and_a_version_is_submitted_once(stack: StackClient) -> None:
    admin = operator(stack)
    racers = [publisher(stack, admin) for _ in range(RACERS)]
    skill = f"race-{uuid.uuid4().hex[:8]}"
    answers = together(RACERS, lambda i: submit(racers[i][0], racers[i][2],
                                                ps.package_zip(skill, publisher=racers[i][1])))
    assert Counter(outcome(a) for a in answers) == {"201": 1, "409 skill_id_taken": RACERS - 1}

    account, publisher_id, keys = publisher(stack, admin)
    other = f"race-{uuid.uuid4().hex[:8]}"
    data = ps.package_zip(other, publisher=publisher_id)
    answers = together(RACERS, lambda _: submit(account, keys, data))
    assert Counter(outcome(a) for a in answers) == {"201": 1, "409 already_exists": RACERS - 1}


def test_a_release_is_decided_once(stack: StackClient) -> None:
    admins = [operator(stack) for _ in range(RACERS)]
    account, publisher_id, keys = publisher(stack, admins[0])
    skill = f"race-{uuid.uuid4().hex[:8]}"
    status, release = submit(account, keys, ps.package_zip(skill, publisher=publisher_id))
    assert status == 201
    path = f"/rpc/admin/releases/{release['releaseId']}/decision"
    answers = together(RACERS, lambda i: admins[i].call("POST", path, {
        "decision": "approve" if i % 2 else "reject", "reason": f"operator {i}"}))
    assert Counter(outcome(a) for a in answers) == {"200": 1, "409 release_not_pending": RACERS - 1}
    winner = next(body for status, body in answers if status == 200)
    stored = admins[0].ok("GET", f"/rpc/admin/releases/{release['releaseId']}")
    assert (stored["state"], stored["reason"]) == (winner["state"], winner["reason"])
    status, _ = account.call("GET", f"/rpc/catalog/{skill}")
    assert status == (200 if winner["state"] == "published" else 404)
