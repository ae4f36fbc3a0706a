"""The local gateway's request acceptance over real HTTP (skillcore_local/acceptance.py): a Host that is not the
gateway's is refused (DNS rebinding), and so is another origin's POST to /_local/*; the page's own sign-in, and
curl-like clients without an Origin, still work."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.local_stack import StackClient

pytestmark = pytest.mark.stack


def exchange(stack: StackClient, method: str, path: str, headers: list[tuple[str, str]],
             body: Any = None) -> tuple[int, Any]:
    """One request whose Host header is the test's own (http.client would add its own otherwise)."""
    target = urlsplit(stack.url)
    connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
    payload = json.dumps(body).encode() if body is not None else None
    try:
        connection.putrequest(method, path, skip_host=True)
        for name, value in headers:
            connection.putheader(name, value)
        if payload is not None:
            connection.putheader("Content-Type", "application/json")
            connection.putheader("Content-Length", str(len(payload)))
        connection.endheaders(payload)
        response = connection.getresponse()
        data = response.read()
        is_json = (response.getheader("content-type") or "").startswith("application/json")
        return response.status, json.loads(data) if is_json else data
    finally:
        connection.close()


def own_host(stack: StackClient) -> str:
    return urlsplit(stack.url).netloc


def test_a_foreign_host_is_refused_whatever_the_path(stack: StackClient) -> None:
    for method, path, body in (("GET", "/rpc/health", None), ("GET", "/_local/login", None),
                               ("POST", "/_local/token", {"user": "mallory", "admin": True}),
                               ("GET", "/skills/", None)):
        status, answer = exchange(stack, method, path, [("Host", f"evil.example:{stack.local.gateway.port}")], body)
        assert status == 421, (method, path)
        assert answer["error"]["code"] == "misdirected_request"
        assert "token" not in answer


def test_a_missing_or_doubled_host_is_refused(stack: StackClient) -> None:
    assert exchange(stack, "GET", "/rpc/health", [])[0] == 421
    assert exchange(stack, "GET", "/rpc/health", [("Host", own_host(stack)), ("Host", "evil.example")])[0] == 421


def test_the_loopback_names_on_the_serving_port_are_accepted(stack: StackClient) -> None:
    port = stack.local.gateway.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        assert exchange(stack, "GET", "/rpc/health", [("Host", host)])[0] == 200, host
    assert exchange(stack, "GET", "/rpc/health", [("Host", f"localhost:{port + 1}")])[0] == 421
    assert exchange(stack, "GET", "/rpc/health", [("Host", "localhost")])[0] == 421


def test_a_configured_host_is_accepted(stack: StackClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillcore_local import acceptance

    gateway = stack.local.gateway
    monkeypatch.setattr(gateway, "hosts", acceptance.allowed_hosts(gateway.port, ["skills.test"]))
    assert exchange(stack, "GET", "/rpc/health", [("Host", f"skills.test:{gateway.port}")])[0] == 200
    status, answer = exchange(stack, "POST", "/_local/token", [("Host", f"skills.test:{gateway.port}"),
                                                                 ("Origin", f"http://skills.test:{gateway.port}")],
                              {"user": "carol"})
    assert status == 200 and answer["token"]


def test_a_cross_origin_post_to_local_routes_is_refused(stack: StackClient) -> None:
    host = own_host(stack)
    for headers in ([("Origin", "http://evil.example")], [("Origin", "null")],
                    [("Origin", f"http://localhost:{stack.local.gateway.port + 1}")],
                    [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Site", "same-site")],
                    [("Origin", f"http://{host}"), ("Sec-Fetch-Site", "cross-site")]):
        status, answer = exchange(stack, "POST", "/_local/token", [("Host", host), *headers],
                                  {"user": "mallory", "admin": True})
        assert status == 403, headers
        assert answer["error"]["code"] == "forbidden" and "token" not in answer
    status, _ = exchange(stack, "POST", "/_local/scan", [("Host", host), ("Origin", "http://evil.example")], {})
    assert status == 403


def test_same_origin_and_origin_less_posts_mint_a_token(stack: StackClient) -> None:
    host = own_host(stack)
    for headers in ([], [("Origin", f"http://{host}"), ("Sec-Fetch-Site", "same-origin")],
                    [("Origin", f"http://{host.upper()}")]):
        status, answer = exchange(stack, "POST", "/_local/token", [("Host", host), *headers], {"user": "carol"})
        assert status == 200, headers
        assert answer["token"]


def test_a_cross_origin_get_of_the_login_page_and_api_calls_are_not_origin_checked(stack: StackClient) -> None:
    host = own_host(stack)
    assert exchange(stack, "GET", "/_local/login", [("Host", host), ("Origin", "http://evil.example")])[0] == 200
    assert exchange(stack, "GET", "/rpc/health", [("Host", host), ("Sec-Fetch-Site", "cross-site")])[0] == 200
