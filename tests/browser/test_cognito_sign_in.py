"""The AWS sign-in (web/lib/auth.js: the authorization code flow with PKCE) against a fake authorization server.

The server stands in for the Cognito managed login on 127.0.0.1: `/oauth2/authorize` checks the request the
page makes and shows a small sign-in form, which redirects back with a code and the state; `/oauth2/token`
redeems the code only with the verifier whose SHA-256 (base64url) is the challenge, and answers with a token
the local gateway accepts (the stack's secret) and the CORS header a browser needs to read it; `/logout`
checks client_id and logout_uri and redirects there. The running gateway's page is pointed at it through
PageFiles' `auth_config` and `connect` (its CSP then lets the page call the token endpoint).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect

from skillcore_local.page import PageFiles
from tests.browser.conftest import new_user, screenshot
from tests.local_stack import StackClient

CLIENT_ID = "fake-page-client"


def challenge_of(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def redeems(grant: dict[str, str], form: dict[str, str]) -> bool:
    """The same redirect URI as the authorize request, and the verifier the challenge was made from."""
    verifier = form.get("code_verifier", "")
    return form.get("redirect_uri") == grant["redirect_uri"] and challenge_of(verifier) == grant["challenge"]


@dataclass
class FakeAuthServer:
    """The managed login's three endpoints; every request and every refusal is recorded for the asserts."""

    redirect_uri: str
    mint: Any  # user -> access token
    authorize_requests: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    logout_requests: list[dict[str, str]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    origin: str = ""

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self.authorize_requests.append(query)
        expected = {
            "response_type": "code",
            "client_id": CLIENT_ID,
            "redirect_uri": self.redirect_uri,
            "code_challenge_method": "S256",
        }
        wrong = [key for key, value in expected.items() if query.get(key) != value]
        if "openid" not in query.get("scope", "").split():
            wrong.append("scope")
        if not re.fullmatch(r"[A-Za-z0-9_-]{43}", query.get("code_challenge", "")):
            wrong.append("code_challenge")  # a SHA-256 in base64url, no padding
        if not query.get("state"):
            wrong.append("state")
        if wrong:
            self.refusals.append("authorize: " + ", ".join(wrong))
            return 400, {"content-type": "text/plain"}, ("bad " + ", ".join(wrong)).encode()
        hidden = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in query.items()
        )
        form = (
            '<!DOCTYPE html><html lang="en"><title>Fake managed login</title><h1>Fake managed login</h1>'
            f'<form action="/login" method="get">{hidden}<label for="user">User name</label>'
            '<input id="user" name="user"><button type="submit">Sign in</button></form></html>'
        )
        return 200, {"content-type": "text/html; charset=utf-8"}, form.encode()

    def login(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        code = secrets.token_urlsafe(16)
        with self.lock:
            self.codes[code] = {
                "challenge": query["code_challenge"],
                "redirect_uri": query["redirect_uri"],
                "user": query["user"],
            }
        location = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query["state"]})
        return 302, {"location": location}, b""

    def token(self, form: dict[str, str], origin: str | None) -> tuple[int, dict[str, str], bytes]:
        self.token_requests.append(form)
        # Cognito's token endpoint answers a browser's cross-origin request with its origin allowed.
        headers = {"content-type": "application/json", "access-control-allow-origin": origin or "*"}
        with self.lock:
            grant = self.codes.pop(form.get("code", ""), None)  # a code is redeemed once
        problem = None
        if form.get("grant_type") != "authorization_code" or form.get("client_id") != CLIENT_ID:
            problem = "invalid_request"
        elif grant is None or not redeems(grant, form):
            problem = "invalid_grant"
        if problem or grant is None:
            self.refusals.append(f"token: {problem}")
            return 400, headers, json.dumps({"error": problem}).encode()
        access = self.mint(grant["user"])
        body = {"access_token": access, "id_token": access, "token_type": "Bearer", "expires_in": 3600}
        return 200, headers, json.dumps(body).encode()

    def logout(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self.logout_requests.append(query)
        if query.get("client_id") != CLIENT_ID or query.get("logout_uri") != self.redirect_uri:
            self.refusals.append("logout")
            return 400, {"content-type": "text/plain"}, b"bad logout"
        return 302, {"location": query["logout_uri"]}, b""


def serve(fake: FakeAuthServer) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _query(self) -> dict[str, str]:
            return {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}

        def _answer(self, answer: tuple[int, dict[str, str], bytes]) -> None:
            status, headers, body = answer
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = urlsplit(self.path).path
            if path == "/oauth2/authorize":
                self._answer(fake.authorize(self._query()))
            elif path == "/login":
                self._answer(fake.login(self._query()))
            elif path == "/logout":
                self._answer(fake.logout(self._query()))
            else:
                self._answer((404, {"content-type": "text/plain"}, b"not found"))

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode("utf-8")
            if urlsplit(self.path).path != "/oauth2/token":
                self._answer((404, {"content-type": "text/plain"}, b"not found"))
                return
            if not (self.headers.get("content-type") or "").startswith("application/x-www-form-urlencoded"):
                fake.refusals.append("token: not a form")
            form = {k: v[0] for k, v in parse_qs(raw).items()}
            self._answer(fake.token(form, self.headers.get("origin")))

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def fake_auth(stack: StackClient) -> Iterator[FakeAuthServer]:
    fake = FakeAuthServer(redirect_uri=f"{stack.url}/skills/", mint=stack.token)
    server = serve(fake)
    fake.origin = f"http://127.0.0.1:{server.server_address[1]}"
    gateway = stack.local.gateway
    assert gateway is not None
    local_page = gateway.page
    gateway.page = PageFiles(
        web_root=local_page.web_root,
        node_modules=local_page.node_modules,
        jwt_secret=local_page.jwt_secret,
        auth_config={
            "type": "cognito",
            "domain": fake.origin,
            "clientId": CLIENT_ID,
            "redirectUri": fake.redirect_uri,
            "logoutUri": fake.redirect_uri,
        },
        connect=(fake.origin,),
    )
    try:
        yield fake
    finally:
        gateway.page = local_page
        server.shutdown()
        server.server_close()


def sign_in_through(page: Page, fake: FakeAuthServer, user: str) -> None:
    page.wait_for_url(re.compile(re.escape(fake.origin) + r"/oauth2/authorize\?"))
    expect(page.get_by_role("heading", name="Fake managed login")).to_be_visible()
    page.get_by_label("User name").fill(user)
    page.get_by_role("button", name="Sign in").click()


def test_the_code_flow_with_pkce_signs_in_and_cleans_the_url(
    page: Page, stack: StackClient, fake_auth: FakeAuthServer
) -> None:
    page.goto("/skills/#/skills")
    page.wait_for_url(re.compile(re.escape(fake_auth.origin) + r"/oauth2/authorize\?"))
    request = fake_auth.authorize_requests[-1]
    assert request["response_type"] == "code"
    assert request["client_id"] == CLIENT_ID
    assert request["redirect_uri"] == f"{stack.url}/skills/"
    assert request["code_challenge_method"] == "S256"
    assert request["scope"].split() == ["openid", "email"]
    assert "code_verifier" not in request  # only its hash leaves the tab before the exchange

    user = new_user("cognito")
    sign_in_through(page, fake_auth, user)

    expect(page.get_by_test_id("user")).to_have_text(user)
    # The code and state are gone from the address; the section the sign-in started on is back.
    assert page.url == f"{stack.url}/skills/#/skills"
    assert fake_auth.refusals == []
    [exchange] = fake_auth.token_requests
    assert exchange["grant_type"] == "authorization_code"
    assert exchange["redirect_uri"] == f"{stack.url}/skills/"
    assert challenge_of(exchange["code_verifier"]) == request["code_challenge"]
    assert 43 <= len(exchange["code_verifier"]) <= 128
    pending = page.evaluate("sessionStorage.getItem('skillcore.pkce')")
    assert pending is None  # the verifier is forgotten once used
    stored = page.evaluate("sessionStorage.getItem('skillcore.token')")
    status, profile = stack.call("GET", "/rpc/me", token=stored)
    assert status == 200 and profile["userId"] == user
    assert page.context.cookies(stack.url) == []
    expect(page.get_by_role("heading", level=1)).to_have_text("技能")
    screenshot(page, "cognito-signed-in")


def test_a_forged_state_is_refused_and_nothing_is_exchanged(
    page: Page, stack: StackClient, fake_auth: FakeAuthServer
) -> None:
    page.goto("/skills/")
    page.wait_for_url(re.compile(re.escape(fake_auth.origin) + r"/oauth2/authorize\?"))
    # Someone else's redirect: a code with a state this tab never sent.
    page.goto("/skills/?code=stolen&state=forged")
    expect(page.get_by_role("alert")).to_contain_text("sign-in state mismatch")
    assert page.url == f"{stack.url}/skills/"
    assert fake_auth.token_requests == []
    assert page.evaluate("sessionStorage.getItem('skillcore.token')") is None


def test_a_refused_exchange_shows_the_oauth_error(
    page: Page, stack: StackClient, fake_auth: FakeAuthServer
) -> None:
    page.goto("/skills/")
    user = new_user("cognito")
    page.wait_for_url(re.compile(re.escape(fake_auth.origin) + r"/oauth2/authorize\?"))
    # The exchange carries a verifier other than the one the challenge was made from.
    page.route(
        re.compile(re.escape(fake_auth.origin) + r"/oauth2/token"),
        lambda route: route.continue_(
            post_data=re.sub(
                r"code_verifier=[^&]+", "code_verifier=" + "x" * 43, route.request.post_data or ""
            )
        ),
    )
    sign_in_through(page, fake_auth, user)
    expect(page.get_by_role("alert")).to_contain_text("token exchange: invalid_grant")
    assert fake_auth.refusals == ["token: invalid_grant"]
    assert page.evaluate("sessionStorage.getItem('skillcore.token')") is None


def test_sign_out_goes_to_the_logout_endpoint_and_back_to_sign_in(
    page: Page, stack: StackClient, fake_auth: FakeAuthServer
) -> None:
    page.goto("/skills/")
    user = new_user("cognito")
    sign_in_through(page, fake_auth, user)
    expect(page.get_by_test_id("user")).to_have_text(user)

    page.get_by_role("button", name="退出登录").click()

    # /logout, then back to the page, which has no token and so starts a new sign-in.
    expect(page.get_by_role("heading", name="Fake managed login")).to_be_visible()
    assert fake_auth.logout_requests == [{"client_id": CLIENT_ID, "logout_uri": f"{stack.url}/skills/"}]
    assert len(fake_auth.authorize_requests) == 2
    assert fake_auth.refusals == []


def test_a_stale_sign_in_asks_the_managed_login_for_a_fresh_one(
    page: Page, stack: StackClient, fake_auth: FakeAuthServer
) -> None:
    """A 403 `person_required` with `stale_sign_in` (an L3 grant, a sign-in over 15 minutes ago) goes back to the
    managed login with `prompt=login`, so a session the login still holds cannot stand in for a new sign-in."""
    page.goto("/skills/#/permissions")
    user = new_user("stale")
    sign_in_through(page, fake_auth, user)
    expect(page.get_by_role("heading", level=1)).to_have_text("执行权限")
    assert "prompt" not in fake_auth.authorize_requests[-1]
    stale = stack.token(user, extra_claims={"auth_time": int(time.time()) - 20 * 60})
    page.evaluate("token => sessionStorage.setItem('skillcore.token', token)", stale)
    grant = page.locator('[data-skill="hosted-workflows"] [role="switch"][data-permission="hosted_workflow:invoke"]')
    grant.click()
    page.wait_for_url(re.compile(re.escape(fake_auth.origin) + r"/oauth2/authorize\?"))
    assert fake_auth.authorize_requests[-1]["prompt"] == "login"
    sign_in_through(page, fake_auth, user)
    expect(page.get_by_role("heading", level=1)).to_have_text("执行权限")
    grant.click()
    expect(grant).to_have_attribute("aria-checked", "true")
    assert fake_auth.refusals == []
