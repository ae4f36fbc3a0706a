"""Two kinds of caller (docs/contract.md): how a token's kind is read (a host app client, or the skillcore/host
scope; everything else a person's), and the router refusing an agent host's token on a decision route, and a
stale sign-in on an L3 one, before the handler runs; the decision routes of the route table."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from msgspec import Struct

from skillcore.api import errors as documented
from skillcore.api import http
from skillcore.api.app import RECENT_SIGN_IN_SECONDS, Caller, Routes, require_person
from skillcore.errors import PersonRequired
from skillcore_local.openapi import function_routes


class Done(Struct, frozen=True):
    kind: str


def event(claims: dict[str, Any], method: str = "POST", path: str = "/rpc/thing") -> dict[str, Any]:
    return {"rawPath": path, "requestContext": {"http": {"method": method, "path": path},
                                                "authorizer": {"jwt": {"claims": claims}}}}


def router(calls: list[Caller]) -> Routes:
    routes = Routes()

    def read(caller: Caller) -> Done:
        calls.append(caller)
        return Done(kind=caller.kind)

    def decide(caller: Caller) -> Done:
        calls.append(caller)
        return Done(kind=caller.kind)

    def decide_l3(caller: Caller) -> Done:
        calls.append(caller)
        return Done(kind=caller.kind)

    routes.route("GET", "/rpc/thing", response=Done)(read)
    routes.route("POST", "/rpc/thing", response=Done, decision="person")(decide)
    routes.route("POST", "/rpc/risky", response=Done, decision="L3")(decide_l3)
    return routes


def answer(routes: Routes, claims: dict[str, Any], method: str = "POST", path: str = "/rpc/thing") -> tuple[int, Any]:
    response = routes.resolve(event(claims, method, path))
    return response["statusCode"], json.loads(response["body"])


NOW = int(time.time())
PERSON = {"sub": "u-1", "token_use": "id", "aud": "web-client", "auth_time": str(NOW)}
HOST_BY_SCOPE = {"sub": "u-1", "token_use": "access", "client_id": "some-client", "scope": "openid skillcore/host",
                 "auth_time": str(NOW)}
HOST_BY_CLIENT = {"sub": "u-1", "token_use": "access", "client_id": "host-client", "auth_time": str(NOW)}
HOST_BY_AUD = {"sub": "u-1", "token_use": "id", "aud": "host-client", "auth_time": str(NOW)}


@pytest.fixture(autouse=True)
def host_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(http.HOST_CLIENT_IDS_ENV, "other-host, host-client")


# -- how the kind is read ----------------------------------------------------------------------------------

@pytest.mark.parametrize("claims", [HOST_BY_SCOPE, HOST_BY_CLIENT, HOST_BY_AUD,
                                    {**PERSON, "scope": "[skillcore/host]"}, {**PERSON, "aud": "[web-client host-client]"}])
def test_a_host_token_is_the_host_clients_or_carries_the_host_scope(claims: dict[str, Any]) -> None:
    assert http.caller_kind(event(claims)) == "host"


@pytest.mark.parametrize("claims", [PERSON, {"sub": "u-1"}, {**PERSON, "scope": "openid skillcore/hostile"},
                                    {**PERSON, "client_id": "host-client-2"}])
def test_every_other_token_is_a_persons(claims: dict[str, Any]) -> None:
    assert http.caller_kind(event(claims)) == "person"


def test_without_host_clients_configured_only_the_scope_makes_a_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(http.HOST_CLIENT_IDS_ENV)
    assert http.caller_kind(event(HOST_BY_CLIENT)) == "person"
    assert http.caller_kind(event(HOST_BY_SCOPE)) == "host"


@pytest.mark.parametrize(("raw", "expected"), [("1767225600", 1767225600), (1767225600, 1767225600),
                                               ("1767225600.0", 1767225600), (None, None), ("soon", None),
                                               ("1e999", None), (True, None)])
def test_auth_time(raw: Any, expected: int | None) -> None:
    claims = {"sub": "u-1"} if raw is None else {"sub": "u-1", "auth_time": raw}
    assert http.auth_time(event(claims)) == expected


# -- the router ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("claims", [HOST_BY_SCOPE, HOST_BY_CLIENT, HOST_BY_AUD])
def test_a_decision_route_refuses_a_host_before_the_handler(claims: dict[str, Any]) -> None:
    calls: list[Caller] = []
    routes = router(calls)
    for path in ("/rpc/thing", "/rpc/risky"):
        status, body = answer(routes, claims, path=path)
        assert status == 403
        assert body["error"]["code"] == "person_required"
        assert body["error"]["details"] == {"reason": "host_token"}
    assert calls == []
    # The routes a host needs serve it, with its kind.
    assert answer(routes, claims, "GET") == (200, {"kind": "host"})


def test_a_decision_route_serves_a_person() -> None:
    calls: list[Caller] = []
    assert answer(router(calls), PERSON) == (200, {"kind": "person"})
    assert calls[0].kind == "person" and calls[0].auth_time == NOW


@pytest.mark.parametrize(("age", "status"), [
    (0, 200), (RECENT_SIGN_IN_SECONDS - 30, 200), (RECENT_SIGN_IN_SECONDS + 30, 403), (86400, 403), (None, 403),
])
def test_an_l3_decision_needs_a_sign_in_in_the_last_15_minutes(age: int | None, status: int) -> None:
    # The sign-in's age is taken from now, when the test runs (not when the module was collected).
    auth_time = None if age is None else int(time.time()) - age
    calls: list[Caller] = []
    claims = {**PERSON, "auth_time": str(auth_time)} if auth_time is not None else {"sub": "u-1"}
    got, body = answer(router(calls), claims, path="/rpc/risky")
    assert got == status
    if status == 403:
        assert body["error"]["code"] == "person_required"
        assert body["error"]["details"] == {"reason": "stale_sign_in"}
        assert calls == []
    # A decision below L3 needs no recent sign-in.
    assert answer(router([]), claims)[0] == 200


def test_require_person() -> None:
    require_person(Caller("u", False, "person", 100), recent=True, now=100 + RECENT_SIGN_IN_SECONDS)
    with pytest.raises(PersonRequired) as stale:
        require_person(Caller("u", False, "person", 100), recent=True, now=101 + RECENT_SIGN_IN_SECONDS)
    assert stale.value.details == {"reason": "stale_sign_in"} and stale.value.status == 403
    with pytest.raises(PersonRequired) as host:
        require_person(Caller("u", True, "host", 100), now=100)
    assert host.value.details == {"reason": "host_token"}


def test_a_decision_route_documents_person_required() -> None:
    routes = router([])
    documented_by = {r.operation_id: r.documented_errors() for r in routes.operations}
    assert documented.PersonRequired in documented_by["decide"]
    assert documented.PersonRequired in documented_by["decideL3"]
    assert documented.PersonRequired not in documented_by["read"]


# -- which routes are decisions --------------------------------------------------------------------------------

DECISIONS = {
    ("POST", "/rpc/approvals/{approvalId}"): "L3",
    ("PATCH", "/rpc/skills/permissions"): "person",
    ("PATCH", "/rpc/skills/{skillId}"): "person",
    ("POST", "/rpc/hosted-endpoints"): "person",
    ("PATCH", "/rpc/hosted-endpoints/{endpointId}"): "person",
    ("POST", "/rpc/hosted-endpoints/{endpointId}/snapshot/accept"): "person",
    ("POST", "/rpc/user-capabilities/{userCapabilityId}/activate"): "person",
    # operators' decisions on publishers and releases (docs/packages.md)
    ("POST", "/rpc/admin/publishers"): "person",
    ("POST", "/rpc/admin/publishers/{publisherId}/keys"): "person",
    ("POST", "/rpc/admin/publishers/{publisherId}/keys/{keyId}/revoke"): "person",
    ("POST", "/rpc/admin/releases/{releaseId}/decision"): "person",
    # a person's installs of catalog skills and their consent to an upgrade (docs/packages.md)
    ("POST", "/rpc/installs"): "person",
    ("POST", "/rpc/installs/{skillId}/accept"): "person",
    ("DELETE", "/rpc/installs/{skillId}"): "person",
}


def test_the_decision_routes_are_these_and_no_others() -> None:
    found = {(r.method, r.path): r.decision for routes in function_routes().values() for r in routes.operations
             if r.decision is not None}
    assert found == DECISIONS
