"""The local stack for the tests that drive it (tests/stack, tests/browser, tests/harness/stack): DynamoDB Local
(one per session, in memory) and the local gateway, over real HTTP. tests/conftest.py registers this module as a
plugin, so its fixtures are the same objects in every lane (one DynamoDB Local and one stack per session).

Fixtures:
- `stack`: a running LocalStack (gateway on a free port, no scan schedule) wrapped in StackClient,
  which adds `token()` and `call()`. The stack's environment is applied around each test that uses it,
  so the rest of the session never sees its table names.
- `hosted`, `hosted_stack` (per module): a real MCP test server (tests/hosted_server.py) and a stack of its own
  whose HostedFunction reaches it through the local-only hosted settings (docs/contract.md "The local stack").
- `ddb_local`: DynamoDB Local with the template's tables under their own prefix (for concurrency tests
  that drive the stores directly); it is the same server the stack uses.
"""

from __future__ import annotations

import http.client
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest

from skillcore_local.ddb_local import DynamoDBLocal, client
from skillcore_local.invoke import Handler
from skillcore_local.jwt_local import issue_token
from skillcore_local.stack import LocalStack
from skillcore_local.template import ensure_tables
from tests.hosted_server import HostedServer

JWT_SECRET = "stack-tests-secret-of-at-least-32-bytes"
DIRECT_TABLE_PREFIX = "ddb-"


@dataclass
class RawResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def header_values(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class StackClient:
    """A running LocalStack and a small HTTP client for it (stdlib only)."""

    local: LocalStack
    secret: str = JWT_SECRET

    @property
    def url(self) -> str:
        return self.local.url

    @property
    def env(self) -> dict[str, str]:
        return self.local.env

    def token(self, user: str, admin: bool = False, **kwargs: Any) -> str:
        return issue_token(user, admin=admin, secret=kwargs.pop("secret", self.secret), **kwargs)

    def connection(self, timeout: float = 30.0) -> http.client.HTTPConnection:
        target = urlsplit(self.url)
        return http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=timeout)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        token: str | None = None,
        raw_body: bytes | None = None,
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
        timeout: float = 30.0,
    ) -> RawResponse:
        """One request on a fresh connection; `headers` as a list may repeat a name."""
        pairs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        payload = raw_body
        if payload is None and body is not None:
            payload = json.dumps(body).encode("utf-8")
            if not any(name.lower() == "content-type" for name, _ in pairs):
                pairs.append(("Content-Type", "application/json; charset=utf-8"))
        if token is not None:
            pairs.append(("Authorization", f"Bearer {token}"))
        connection = self.connection(timeout)
        try:
            connection.putrequest(method, path)
            for name, value in pairs:
                connection.putheader(name, value)
            if payload is not None:
                connection.putheader("Content-Length", str(len(payload)))
            connection.endheaders(payload)
            response = connection.getresponse()
            return RawResponse(response.status, response.getheaders(), response.read())
        finally:
            connection.close()

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        raw_body: bytes | None = None,
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
    ) -> tuple[int, Any]:
        """(status, parsed JSON body or None)."""
        response = self.request(method, path, body=body, token=token, raw_body=raw_body, headers=headers)
        return response.status, response.json()

    def override(self, function: str, handler: Handler) -> AbstractContextManager[None]:
        """Swaps a function's handler for the duration of a `with` block."""
        return self.local.registry.override(function, handler)


class Caller:
    """One user over real HTTP: a fresh user id and token; `ok` asserts the status. Test modules subclass it
    with the calls they make."""

    prefix = "user"

    def __init__(self, stack: StackClient, prefix: str | None = None) -> None:
        self.stack = stack
        self.user = f"{prefix or self.prefix}-{uuid.uuid4().hex[:12]}"
        self.auth = stack.token(self.user)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return self.stack.call(method, path, body=body, token=self.auth)

    def ok(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        got, payload = self.call(method, path, body)
        assert got == status, (method, path, got, payload)
        return payload

    def agent(self, name: str = "Mika") -> dict[str, Any]:
        return self.ok("POST", "/rpc/agents", {"name": name}, status=201)


class PersonAndHost(Caller):
    """A person (the page's token) and their agent host (its own token, the same user)."""

    def __init__(self, stack: StackClient, prefix: str | None = None) -> None:
        super().__init__(stack, prefix)
        self.host_token = stack.token(self.user, kind="host")

    def as_host(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return self.stack.call(method, path, body=body, token=self.host_token)


@dataclass
class LocalTables:
    """DynamoDB Local with the template's tables: `env` feeds Settings.from_env(env) without touching os.environ."""

    endpoint: str
    client: Any
    tables: dict[str, str]
    env: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="session")
def _dynamodb() -> Iterator[DynamoDBLocal]:
    with DynamoDBLocal(port=0, data_dir=None) as server:
        yield server


@pytest.fixture(scope="session")
def _dummy_credentials() -> Iterator[None]:
    """boto3 refuses to sign without credentials; DynamoDB Local (-sharedDb) ignores which ones."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (("AWS_ACCESS_KEY_ID", "local"), ("AWS_SECRET_ACCESS_KEY", "local")):
            if not os.environ.get(name):
                patch.setenv(name, value)
        yield


# The stack tests race one user's requests far past a person's pace (60 capability creates at once, drafts raced
# on one revision, hosted calls in bursts, 24 chat turns of a latency test in seconds), to test those features' own
# conditions; the per-user rates are raised for them here. tests/stack/test_limits_concurrency.py reads every limit
# from this environment and races the chat turns' over HTTP (40: 50 turns at once, exactly 40 through).
RACING_LIMITS = {
    "SKILLS_RATE_CHAT_PER_MINUTE": "60",  # above the 52 turns a browser test posts to build a two-page history
    "SKILLS_RATE_DRAFTING_PER_MINUTE": "1000",
    "SKILLS_RATE_HOSTED_CALLS_PER_MINUTE": "1000",
    "SKILLS_RATE_REFRESH_PER_MINUTE": "1000",
    "SKILLS_RATE_WRITES_PER_MINUTE": "1000",
}


@pytest.fixture(scope="session")
def _local_stack(_dynamodb: DynamoDBLocal, _dummy_credentials: None) -> Iterator[StackClient]:
    local = LocalStack(
        port=0, ddb_endpoint=_dynamodb.endpoint, data_dir=None, scan_interval=0, jwt_secret=JWT_SECRET
    )
    local.start()
    local.restore_env()  # applied per test by `stack`, below
    local.env.update(RACING_LIMITS)
    try:
        yield StackClient(local)
    finally:
        local.stop()


@pytest.fixture
def stack(_local_stack: StackClient, monkeypatch: pytest.MonkeyPatch) -> StackClient:
    for name, value in _local_stack.env.items():
        monkeypatch.setenv(name, value)
    return _local_stack


@pytest.fixture(scope="session")
def ddb_local(_dynamodb: DynamoDBLocal, _dummy_credentials: None) -> LocalTables:
    ddb = client(_dynamodb.endpoint)
    tables = ensure_tables(ddb, prefix=DIRECT_TABLE_PREFIX)
    env = {
        **tables,
        "SKILLS_DYNAMODB_ENDPOINT": _dynamodb.endpoint,
        "AWS_REGION": "us-east-1",
        "SKILLS_LOCAL": "1",
    }
    return LocalTables(endpoint=_dynamodb.endpoint, client=ddb, tables=tables, env=env)


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedServer]:
    """The real MCP server over HTTPS on a 127/8 address other than 127.0.0.1, port 443 (needs root)."""
    server = HostedServer(tmp_path_factory.mktemp("hosted")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hosted_stack(_dynamodb: DynamoDBLocal, _dummy_credentials: None, hosted: HostedServer,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackClient]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {**hosted.settings_env(), **RACING_LIMITS}.items():
            patch.setenv(name, value)
        local = LocalStack(port=0, ddb_endpoint=_dynamodb.endpoint, data_dir=tmp_path_factory.mktemp("data"),
                           scan_interval=0, jwt_secret=JWT_SECRET, table_prefix="hosted-")
        local.start()
        try:
            yield StackClient(local)
        finally:
            local.stop()
