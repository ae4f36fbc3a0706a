"""The local gateway over real HTTP: routing, the JWT authorizer, the 2.0 event and response, the local routes,
and the lifecycle of the stack (no Java process survives it)."""

from __future__ import annotations

import base64
import gc
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jwt
import pytest

from skillcore_local import ddb_local
from skillcore_local.ddb_local import DynamoDBLocal, client
from skillcore_local.invoke import FunctionRegistry
from skillcore_local.jwt_local import issue_token
from skillcore_local.payload import http_event
from skillcore_local.routing import Route, http_routes, match_route, table_routes
from skillcore_local.template import ROOT, ensure_tables
from tests.local_stack import StackClient

pytestmark = [
    pytest.mark.stack,
    # Tokens signed on purpose with short or odd keys; PyJWT's key-length advice is noise here.
    pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning"),
]

CHAT_PATH = "/rpc/conversations/{conversationId}/messages"
SUMMARY_KEYS = {"recovered", "claimed", "succeeded", "retried", "failed", "cancelled", "automationRuns"}


class Recorder:
    """A stand-in handler: remembers every (event, context) and answers what `reply` returns."""

    def __init__(self, reply: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self.calls: list[tuple[dict[str, Any], Any]] = []
        self.reply = reply or (lambda event: {"statusCode": 200, "body": json.dumps({"ok": True})})

    def __call__(self, event: dict[str, Any], context: Any) -> Any:
        self.calls.append((event, context))
        return self.reply(event)

    @property
    def event(self) -> dict[str, Any]:
        assert len(self.calls) == 1, f"expected one call, got {len(self.calls)}"
        return self.calls[0][0]


@pytest.fixture
def rpc(stack: StackClient) -> Iterator[Recorder]:
    recorder = Recorder()
    with stack.override("RpcFunction", recorder):
        yield recorder


@pytest.fixture
def chat(stack: StackClient) -> Iterator[Recorder]:
    recorder = Recorder()
    with stack.override("ChatTurnFunction", recorder):
        yield recorder


def assert_envelope(body: Any, code: str) -> None:
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert body["error"]["details"] == {}


# ---------------------------------------------------------------------------------------------- real handlers


def test_health_needs_no_token(stack: StackClient) -> None:
    status, body = stack.call("GET", "/rpc/health")
    assert status == 200
    assert body["status"] == "ok"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", body["version"])


def test_real_rpc_handler_sees_the_caller_from_the_token(stack: StackClient) -> None:
    status, body = stack.call("GET", "/rpc/me", token=stack.token("gateway-user-1"))
    # Past the gateway, the handler found a caller in the claims it got (401 would mean it did not).
    assert status in (200, 404), body


def test_real_scan_handler_answers_its_summary(stack: StackClient) -> None:
    status, body = stack.call("POST", "/_local/scan", body={"time": "2026-12-02T02:00:00Z"})
    assert status == 200, body
    assert set(body) >= SUMMARY_KEYS


# ---------------------------------------------------------------------------------------------- the authorizer


def _b64url_json(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _bad_tokens(secret: str) -> dict[str, dict[str, str]]:
    """Authorization headers the authorizer must refuse, by case name."""
    now = int(time.time())
    good = {"iss": "skillcore-local", "aud": "skillcore", "sub": "alice", "iat": now, "exp": now + 600}

    def sign(claims: dict[str, Any], key: str = secret, alg: str = "HS256") -> str:
        return "Bearer " + jwt.encode(claims, key, algorithm=alg)

    def without(name: str) -> dict[str, Any]:
        return {k: v for k, v in good.items() if k != name}

    return {
        "no header": {},
        "empty header": {"Authorization": ""},
        "basic scheme": {"Authorization": "Basic YWxpY2U6cHc="},
        "bare token": {"Authorization": sign(good).removeprefix("Bearer ")},
        "expired": {"Authorization": sign({**good, "iat": now - 7200, "exp": now - 3600})},
        "not yet valid": {"Authorization": sign({**good, "nbf": now + 3600})},
        "issued in the future": {"Authorization": sign({**good, "iat": now + 3600})},
        "bad signature": {"Authorization": sign(good, key="another-secret-another-secret-xx")},
        "alg none": {
            "Authorization": f"Bearer {_b64url_json({'alg': 'none', 'typ': 'JWT'})}.{_b64url_json(good)}."
        },
        "HS512": {"Authorization": sign(good, alg="HS512")},
        "wrong issuer": {"Authorization": sign({**good, "iss": "https://example.com"})},
        "wrong audience": {"Authorization": sign({**good, "aud": "other"})},
        "no exp": {"Authorization": sign(without("exp"))},
        "no sub": {"Authorization": sign(without("sub"))},
        "garbage": {"Authorization": "Bearer abc.def.ghi"},
    }


BAD_TOKEN_CASES = [
    "no header",
    "empty header",
    "basic scheme",
    "bare token",
    "expired",
    "not yet valid",
    "issued in the future",
    "bad signature",
    "alg none",
    "HS512",
    "wrong issuer",
    "wrong audience",
    "no exp",
    "no sub",
    "garbage",
]


@pytest.mark.parametrize("case", BAD_TOKEN_CASES)
def test_bad_token_is_401_and_the_handler_never_runs(stack: StackClient, rpc: Recorder, case: str) -> None:
    headers = _bad_tokens(stack.secret)[case]
    response = stack.request("GET", "/rpc/me", headers=headers)

    assert response.status == 401
    assert_envelope(response.json(), "unauthenticated")
    assert (response.header("www-authenticate") or "").startswith("Bearer")
    assert rpc.calls == []


@pytest.mark.parametrize("case", ["no header", "expired", "alg none"])
def test_chat_route_is_guarded_too(stack: StackClient, chat: Recorder, case: str) -> None:
    response = stack.request(
        "POST", "/rpc/conversations/c1/messages", body={"text": "hi"}, headers=_bad_tokens(stack.secret)[case]
    )
    assert response.status == 401
    assert chat.calls == []


def test_good_token_reaches_the_handler_with_claims_as_aws_renders_them(
    stack: StackClient, rpc: Recorder
) -> None:
    token = stack.token("alice", admin=True)
    status, _ = stack.call("GET", "/rpc/admin/audit", token=token)

    assert status == 200
    authorizer = rpc.event["requestContext"]["authorizer"]
    claims = authorizer["jwt"]["claims"]
    assert authorizer["jwt"]["scopes"] is None
    assert claims["sub"] == "alice"
    assert claims["cognito:groups"] == "[admin]"
    assert claims["iss"] == "skillcore-local" and claims["aud"] == "skillcore"
    assert all(isinstance(value, str) for value in claims.values())
    assert re.fullmatch(r"\d+", claims["exp"]) and re.fullmatch(r"\d+", claims["iat"])


def test_token_without_admin_has_no_groups_claim(stack: StackClient, rpc: Recorder) -> None:
    stack.call("GET", "/rpc/me", token=stack.token("bob"))
    assert "cognito:groups" not in rpc.event["requestContext"]["authorizer"]["jwt"]["claims"]


def test_token_signed_with_the_default_secret_is_refused_when_the_stack_has_another(
    stack: StackClient, rpc: Recorder
) -> None:
    status, body = stack.call("GET", "/rpc/me", token=issue_token("alice", secret="skillcore-local-secret"))
    assert status == 401
    assert rpc.calls == []


# ---------------------------------------------------------------------------------------------- routing


def test_unknown_route_is_404_in_the_error_envelope(stack: StackClient) -> None:
    for method, path in [
        ("GET", "/nope"),
        ("GET", "/favicon.png"),  # `/` redirects to the page and `/favicon.ico` is its icon (test_demo.py)
        ("POST", "/rpc"),
        ("GET", "/rpc/"),
        ("GET", "/rpcx/health"),
    ]:
        response = stack.request(method, path)
        assert response.status == 404, (method, path)
        assert_envelope(response.json(), "not_found")
        assert (response.header("content-type") or "").startswith("application/json")


def test_exact_route_beats_greedy_route(stack: StackClient, rpc: Recorder) -> None:
    assert stack.call("GET", "/rpc/health")[0] == 200
    assert rpc.event["routeKey"] == "GET /rpc/health"
    assert "authorizer" not in rpc.event["requestContext"]


def test_other_methods_on_the_health_path_go_to_the_guarded_proxy_route(
    stack: StackClient, rpc: Recorder
) -> None:
    assert stack.call("POST", "/rpc/health", body={})[0] == 401
    assert stack.call("POST", "/rpc/health", body={}, token=stack.token("alice"))[0] == 200
    assert rpc.event["routeKey"] == "ANY /rpc/{proxy+}"
    assert rpc.event["pathParameters"] == {"proxy": "health"}


def test_parameter_route_beats_greedy_route_for_its_method_only(
    stack: StackClient, rpc: Recorder, chat: Recorder
) -> None:
    token = stack.token("alice")
    stack.call("POST", "/rpc/conversations/conv%2D1/messages", body={"text": "hi"}, token=token)
    stack.call("GET", "/rpc/conversations/conv-1/messages", token=token)

    assert chat.event["routeKey"] == f"POST {CHAT_PATH}"
    assert chat.event["pathParameters"] == {"conversationId": "conv-1"}
    assert chat.event["rawPath"] == "/rpc/conversations/conv%2D1/messages"
    assert rpc.event["routeKey"] == "ANY /rpc/{proxy+}"
    assert rpc.event["pathParameters"] == {"proxy": "conversations/conv-1/messages"}


def test_routes_come_from_the_route_table_and_are_the_templates() -> None:
    routes = {route.key: route for route in table_routes()}
    assert set(routes.values()) == set(http_routes())
    assert routes["GET /rpc/health"].function == "RpcFunction" and not routes["GET /rpc/health"].auth
    assert routes["ANY /rpc/{proxy+}"].function == "RpcFunction" and routes["ANY /rpc/{proxy+}"].auth
    assert routes[f"POST {CHAT_PATH}"].function == "ChatTurnFunction" and routes[f"POST {CHAT_PATH}"].auth


def test_route_specificity_follows_api_gateway() -> None:
    routes = [
        Route("ANY", "/a/{proxy+}", "Greedy", True),
        Route("ANY", "/a/{x}/c", "ParamAny", True),
        Route("GET", "/a/{x}/c", "ParamGet", True),
        Route("GET", "/a/b/c", "Exact", True),
        Route("GET", "/a/b/{y}", "LaterParam", True),
    ]

    def target(method: str, path: str) -> str | None:
        found = match_route(routes, method, path)
        return found[0].function if found else None

    assert target("GET", "/a/b/c") == "Exact"
    assert target("GET", "/a/z/c") == "ParamGet"
    assert target("PUT", "/a/z/c") == "ParamAny"
    assert target("GET", "/a/b/d") == "LaterParam"
    assert target("GET", "/a/z/c/d") == "Greedy"
    assert target("GET", "/a") is None
    assert target("GET", "/b/c") is None


# ---------------------------------------------------------------------------------------------- the 2.0 event


def test_event_is_payload_format_2_0(stack: StackClient, chat: Recorder) -> None:
    token = stack.token("alice", admin=True)
    before = time.time()
    response = stack.request(
        "POST",
        "/rpc/conversations/c-42/messages?b=2&a=1&a=x%20y&empty=",
        body={"text": "héllo"},
        token=token,
        headers=[
            ("X-Custom", "one"),
            ("x-custom", "two"),
            ("Cookie", "session=abc; theme=dark"),
            ("Cookie", "third=3"),
            ("User-Agent", "stack-tests/1.0"),
        ],
    )
    after = time.time()
    assert response.status == 200
    event, context = chat.calls[0]

    assert event["version"] == "2.0"
    assert event["routeKey"] == f"POST {CHAT_PATH}"
    assert event["rawPath"] == "/rpc/conversations/c-42/messages"
    assert event["rawQueryString"] == "b=2&a=1&a=x%20y&empty="
    assert event["cookies"] == ["session=abc", "theme=dark", "third=3"]
    assert event["queryStringParameters"] == {"b": "2", "a": "1,x y", "empty": ""}
    assert event["pathParameters"] == {"conversationId": "c-42"}
    assert json.loads(event["body"]) == {"text": "héllo"}
    assert event["isBase64Encoded"] is False
    assert "stageVariables" not in event

    headers = event["headers"]
    assert all(name == name.lower() for name in headers)
    assert "cookie" not in headers
    assert headers["x-custom"] == "one,two"
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert headers["authorization"] == f"Bearer {token}"
    assert headers["user-agent"] == "stack-tests/1.0"
    assert headers["x-forwarded-for"] == "127.0.0.1"
    assert headers["x-forwarded-proto"] == "http"
    assert headers["x-forwarded-port"] == str(stack.url.rsplit(":", 1)[1])
    assert headers["x-amzn-trace-id"].startswith("Root=1-")

    ctx = event["requestContext"]
    assert ctx["accountId"] == "123456789012"
    assert ctx["apiId"]
    assert ctx["domainName"] == "127.0.0.1"
    assert ctx["domainPrefix"] == "127"
    assert ctx["http"] == {
        "method": "POST",
        "path": "/rpc/conversations/c-42/messages",
        "protocol": "HTTP/1.1",
        "sourceIp": "127.0.0.1",
        "userAgent": "stack-tests/1.0",
    }
    assert ctx["routeKey"] == event["routeKey"]
    assert ctx["stage"] == "$default"
    assert re.fullmatch(r"[A-Za-z0-9+/]{14}[A-Za-z0-9+/=]{2}", ctx["requestId"])
    assert response.header("apigw-requestid") == ctx["requestId"]
    assert int(before * 1000) - 1 <= ctx["timeEpoch"] <= int(after * 1000) + 1
    stamp = datetime.fromtimestamp(ctx["timeEpoch"] / 1000, UTC)
    assert ctx["time"] == stamp.strftime("%d/%b/%Y:%H:%M:%S +0000")
    assert ctx["authorizer"]["jwt"]["claims"]["cognito:groups"] == "[admin]"

    assert context.function_name.endswith("ChatTurnFunction")


def test_public_route_event_leaves_out_what_it_does_not_have(stack: StackClient, rpc: Recorder) -> None:
    stack.call("GET", "/rpc/health")
    event = rpc.event
    for absent in ("body", "cookies", "queryStringParameters", "pathParameters", "stageVariables"):
        assert absent not in event, absent
    assert "authorizer" not in event["requestContext"]
    assert event["isBase64Encoded"] is False
    assert event["rawQueryString"] == ""


@pytest.mark.parametrize(
    ("content_type", "payload", "base64_expected"),
    [
        ("application/json", b'{"a": 1}', False),
        ("text/plain; charset=utf-8", "žluť".encode(), False),
        ("application/xml", b"<a/>", False),
        ("application/octet-stream", b"\x00\x01\xff", True),
        ("image/png", b"\x89PNG\r\n", True),
        ("application/x-www-form-urlencoded", b"a=1&b=2", True),
        (None, b'{"a": 1}', True),
        ("application/json", b"\xff\xfe not utf-8", True),
    ],
)
def test_body_is_base64_encoded_unless_it_is_text(
    stack: StackClient, rpc: Recorder, content_type: str | None, payload: bytes, base64_expected: bool
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    stack.request("POST", "/rpc/things", raw_body=payload, headers=headers, token=stack.token("alice"))
    event = rpc.event
    assert event["isBase64Encoded"] is base64_expected
    received = base64.b64decode(event["body"]) if base64_expected else event["body"].encode("utf-8")
    assert received == payload


def test_bodies_over_64_kib_reach_the_handler(stack: StackClient, rpc: Recorder) -> None:
    payload = json.dumps({"text": "x" * (100 * 1024)}).encode()
    stack.request(
        "POST",
        "/rpc/things",
        raw_body=payload,
        headers={"Content-Type": "application/json"},
        token=stack.token("a"),
    )
    assert len(rpc.event["body"].encode()) == len(payload)


def test_bodies_over_10_mib_are_413_without_calling_the_handler(stack: StackClient, rpc: Recorder) -> None:
    connection = stack.connection(timeout=10)
    try:
        # Announce the size but send nothing: the gateway must answer from the header alone.
        connection.putrequest("POST", "/rpc/things")
        connection.putheader("Authorization", f"Bearer {stack.token('alice')}")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(10 * 1024 * 1024 + 1))
        connection.endheaders()
        response = connection.getresponse()
        status, body = response.status, json.loads(response.read())
    finally:
        connection.close()
    assert status == 413
    assert_envelope(body, "payload_too_large")
    assert rpc.calls == []


def test_chunked_bodies_are_read(stack: StackClient, rpc: Recorder) -> None:
    connection = stack.connection(timeout=10)
    try:
        connection.request(
            "POST",
            "/rpc/things",
            body=iter([b'{"a": ', b"1}"]),
            headers={"Authorization": f"Bearer {stack.token('alice')}", "Content-Type": "application/json"},
            encode_chunked=True,
        )
        assert connection.getresponse().status == 200
    finally:
        connection.close()
    assert json.loads(rpc.event["body"]) == {"a": 1}


def test_handler_gets_a_lambda_context(stack: StackClient, rpc: Recorder) -> None:
    stack.call("GET", "/rpc/health")
    context = rpc.calls[0][1]
    assert context.function_name == "skillcore-local-RpcFunction"
    assert context.function_version == "$LATEST"
    assert context.memory_limit_in_mb == "512"  # a string, as the Python runtime gives it
    assert (
        context.invoked_function_arn
        == "arn:aws:lambda:us-east-1:123456789012:function:skillcore-local-RpcFunction"
    )
    assert re.fullmatch(r"[0-9a-f-]{36}", context.aws_request_id)
    assert 27_000 < context.get_remaining_time_in_millis() <= 29_000


def test_requests_run_concurrently(stack: StackClient) -> None:
    """Five requests must all be inside the handler at once, or the barrier breaks (5 s timeout)."""
    barrier = threading.Barrier(5, timeout=5)

    def wait_for_all(event: dict[str, Any]) -> dict[str, Any]:
        barrier.wait()
        return {"statusCode": 200, "body": "{}"}

    statuses: list[int] = []
    with stack.override("RpcFunction", Recorder(wait_for_all)):
        threads = [
            threading.Thread(target=lambda: statuses.append(stack.call("GET", "/rpc/health")[0]))
            for _ in range(5)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert statuses == [200] * 5


# ---------------------------------------------------------------------------------------------- the 2.0 response


def _respond(stack: StackClient, result: Any, method: str = "GET", path: str = "/rpc/health") -> Any:
    with stack.override("RpcFunction", Recorder(lambda event: result)):
        return stack.request(method, path, token=stack.token("alice"))


def test_structured_response_is_sent_as_is(stack: StackClient) -> None:
    response = _respond(
        stack,
        {
            "statusCode": 201,
            "headers": {"Content-Type": "application/json", "X-Thing": "a,b"},
            "cookies": ["a=1; Path=/", "b=2; HttpOnly"],
            "body": '{"created": true}',
        },
    )
    assert response.status == 201
    assert response.header("x-thing") == "a,b"
    assert response.header_values("set-cookie") == ["a=1; Path=/", "b=2; HttpOnly"]
    assert response.json() == {"created": True}


def test_base64_response_body_is_decoded(stack: StackClient) -> None:
    data = bytes(range(256))
    response = _respond(
        stack,
        {
            "statusCode": 200,
            "headers": {"content-type": "application/octet-stream"},
            "isBase64Encoded": True,
            "body": base64.b64encode(data).decode(),
        },
    )
    assert response.body == data


def test_response_without_body_is_empty(stack: StackClient) -> None:
    response = _respond(stack, {"statusCode": 204})
    assert response.status == 204 and response.body == b""


@pytest.mark.parametrize("result", [{"status": "ok", "n": 1}, "plain text", [1, 2], None])
def test_shortcut_response_is_200_json(stack: StackClient, result: Any) -> None:
    response = _respond(stack, result)
    assert response.status == 200
    assert response.header("content-type") == "application/json"
    assert response.json() == result


@pytest.mark.parametrize(
    "result",
    [
        {"statusCode": "200", "body": "{}"},
        {"statusCode": 200, "body": {"not": "a string"}},
        {"statusCode": 200, "isBase64Encoded": True, "body": "***"},
        {"statusCode": 200, "cookies": "a=1"},
    ],
)
def test_malformed_response_is_a_500_like_api_gateway(stack: StackClient, result: Any) -> None:
    response = _respond(stack, result)
    assert response.status == 500
    assert response.json() == {"message": "Internal Server Error"}


def test_handler_exception_is_a_500_like_api_gateway(stack: StackClient) -> None:
    def boom(event: dict[str, Any]) -> Any:
        raise RuntimeError("boom")

    with stack.override("RpcFunction", Recorder(boom)):
        response = stack.request("GET", "/rpc/health")
    assert response.status == 500
    assert response.json() == {"message": "Internal Server Error"}


def test_head_request_has_no_body(stack: StackClient) -> None:
    response = _respond(stack, {"statusCode": 200, "body": "hello"}, method="HEAD", path="/rpc/things")
    assert response.status == 200
    assert response.header("content-length") == "5"
    assert response.body == b""


# ---------------------------------------------------------------------------------------------- local routes


def test_local_scan_invokes_the_scan_handler_with_a_scheduled_event(stack: StackClient) -> None:
    scan = Recorder(lambda event: {**dict.fromkeys(SUMMARY_KEYS, 0), "claimed": 3})
    with stack.override("ScanFunction", scan):
        status, body = stack.call("POST", "/_local/scan", body={"time": "2026-12-02T10:00:00.123+08:00"})

    assert status == 200
    assert body == {**dict.fromkeys(SUMMARY_KEYS, 0), "claimed": 3}
    event, context = scan.calls[0]
    assert set(event) == {
        "version",
        "id",
        "detail-type",
        "source",
        "account",
        "time",
        "region",
        "resources",
        "detail",
    }
    assert event["version"] == "0"
    assert event["detail-type"] == "Scheduled Event"
    assert event["source"] == "aws.events"
    assert event["account"] == "123456789012"
    assert event["region"] == "us-east-1"
    assert event["time"] == "2026-12-02T02:00:00Z"
    assert event["detail"] == {}
    assert re.fullmatch(r"arn:aws:events:us-east-1:123456789012:rule/.*ScanFunction.*", event["resources"][0])
    assert re.fullmatch(r"[0-9a-f-]{36}", event["id"])
    assert context.function_name == "skillcore-local-ScanFunction"
    assert 58_000 < context.get_remaining_time_in_millis() <= 60_000  # the dispatcher: template Timeout 60


def test_local_scan_defaults_to_now(stack: StackClient) -> None:
    scan = Recorder(lambda event: {})
    with stack.override("ScanFunction", scan):
        before = datetime.now(UTC).replace(microsecond=0)
        assert stack.call("POST", "/_local/scan")[0] == 200
        after = datetime.now(UTC)
    sent = datetime.strptime(scan.event["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= sent <= after


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"time": "2026-12-02T10:00:00"}, 422, "validation_error"),
        ({"time": "yesterday"}, 422, "validation_error"),
        ({"time": 1764640800}, 422, "validation_error"),
        ({"when": "2026-12-02T10:00:00Z"}, 422, "validation_error"),
        (b"not json", 400, "bad_request"),
    ],
)
def test_local_scan_rejects_bad_input(stack: StackClient, body: Any, status: int, code: str) -> None:
    scan = Recorder(lambda event: {})
    with stack.override("ScanFunction", scan):
        if isinstance(body, bytes):
            got, answer = stack.call(
                "POST", "/_local/scan", raw_body=body, headers={"Content-Type": "application/json"}
            )
        else:
            got, answer = stack.call("POST", "/_local/scan", body=body)
    assert got == status
    assert answer["error"]["code"] == code
    assert scan.calls == []


def test_local_scan_failure_is_a_500_that_leaks_nothing(
    stack: StackClient, capfd: pytest.CaptureFixture[str]
) -> None:
    canary = "canary-9f3e stored text"

    def boom(event: dict[str, Any]) -> Any:
        raise KeyError(canary)  # as a record missing its title made the scan fail: KeyError('title')

    capfd.readouterr()
    with stack.override("ScanFunction", Recorder(boom)):
        status, body = stack.call("POST", "/_local/scan")
    logged = capfd.readouterr().err

    assert status == 500
    assert_envelope(body, "internal")
    assert canary not in json.dumps(body) and "KeyError" not in json.dumps(body)
    # The log names the type and where it was raised, never the message.
    assert re.search(r"ERROR: the scan handler failed: KeyError at .*test_gateway\.py:\d+ in boom", logged)
    assert canary not in logged


HOSTILE_BODIES = {
    "nested arrays": b"[" * 100_000 + b"]" * 100_000,
    "nested objects": b'{"time": ' * 50_000 + b"null" + b"}" * 50_000,
    "integer over the digit limit": b'{"time": ' + b"7" * 5000 + b"}",
    "not UTF-8": b'{"time": "\xff\xfe"}',
    "not JSON": b"{",
}


@pytest.mark.parametrize("path", ["/_local/scan", "/_local/faults"])
@pytest.mark.parametrize("case", list(HOSTILE_BODIES))
def test_local_routes_answer_a_hostile_body_with_400(stack: StackClient, path: str, case: str) -> None:
    scan = Recorder(lambda event: {})
    with stack.override("ScanFunction", scan):
        response = stack.request(
            "POST", path, raw_body=HOSTILE_BODIES[case], headers={"Content-Type": "application/json"}
        )
    assert response.status == 400, response.body[:200]
    assert_envelope(response.json(), "bad_request")
    assert scan.calls == []


UNKNOWN_METHODS = ["TRACE", "PROPFIND", "MKCOL", "PURGE", "BREW"]


@pytest.mark.parametrize("method", UNKNOWN_METHODS)
def test_unknown_methods_reach_the_router_and_get_the_envelope(stack: StackClient, method: str) -> None:
    response = stack.request(method, "/rpc/skills/background-jobs", token=stack.token("methods-user"))
    assert response.status == 405, response.body[:200]
    assert (response.header("content-type") or "").startswith("application/json")
    body = response.json()
    assert body["error"]["code"] == "method_not_allowed"
    allowed = {m.strip() for m in (response.header("allow") or "").split(",")}
    assert {"GET", "POST"} <= allowed
    assert set(body["error"]["details"]["allowed"]) == allowed


@pytest.mark.parametrize("method", UNKNOWN_METHODS)
def test_unknown_methods_on_local_and_unknown_paths_get_the_envelope(stack: StackClient, method: str) -> None:
    local = stack.request(method, "/_local/scan")
    assert local.status == 405
    assert local.json()["error"]["code"] == "method_not_allowed"
    assert local.header("allow") == "POST"
    missing = stack.request(method, "/nowhere")
    assert missing.status == 404
    assert_envelope(missing.json(), "not_found")


def test_unknown_method_needs_a_token_like_any_other(stack: StackClient, rpc: Recorder) -> None:
    response = stack.request("PROPFIND", "/rpc/me")
    assert response.status == 401
    assert_envelope(response.json(), "unauthenticated")
    assert rpc.calls == []


def test_a_method_that_is_not_an_http_token_is_a_400(stack: StackClient, rpc: Recorder) -> None:
    response = stack.request("G@T", "/rpc/me", token=stack.token("alice"))
    assert response.status == 400
    assert_envelope(response.json(), "bad_request")
    assert rpc.calls == []


def _raw_exchange(stack: StackClient, request: bytes) -> tuple[int, dict[str, str], Any]:
    """Sends bytes as they are (http.client would refuse to) and reads one response."""
    import http.client
    import socket

    target = stack.url.rsplit(":", 1)
    with socket.create_connection((target[0].removeprefix("http://"), int(target[1])), timeout=10) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, dict(response.getheaders()), json.loads(response.read())


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (b"GET /rpc/health HTTP/1.1 extra\r\n\r\n", 400, "bad_request"),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, "uri_too_long"),
        (b"GET /rpc/health HTTP/1.1\r\n" + b"X-A: 1\r\n" * 120 + b"\r\n", 431, "header_fields_too_large"),
        (b"GET /rpc/health HTTP/2.0\r\n\r\n", 505, "http_version_not_supported"),
    ],
)
def test_what_http_server_refuses_itself_is_in_the_envelope(
    stack: StackClient, request_bytes: bytes, status: int, code: str
) -> None:
    got, headers, body = _raw_exchange(stack, request_bytes)
    assert got == status
    assert headers["content-type"].startswith("application/json")
    assert headers.get("connection") == "close"
    assert_envelope(body, code)


def test_the_gateway_answers_its_own_failure_instead_of_dropping_the_connection(
    stack: StackClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the gateway itself")

    monkeypatch.setattr(stack.local.gateway, "dispatch", broken)
    response = stack.request("GET", "/rpc/health")
    assert response.status == 500
    assert_envelope(response.json(), "internal")
    assert b"a bug" not in response.body


def test_local_routes_need_no_token_and_check_the_method(stack: StackClient) -> None:
    assert stack.call("GET", "/_local/scan")[0] == 405
    faults = stack.request("GET", "/_local/faults")
    assert faults.json()["error"]["code"] == "method_not_allowed"
    assert faults.header("allow") == "DELETE, POST"
    assert stack.call("POST", "/_local/other")[0] == 404


def test_local_faults_arm_the_fault_points(stack: StackClient) -> None:
    from skillcore import faults

    faults.clear()
    try:
        status, body = stack.call(
            "POST", "/_local/faults", body={"point": "tool.handler", "times": 2, "kind": "timeout"}
        )
        assert status == 200
        assert body == {"armed": {"point": "tool.handler", "times": 2, "kind": "timeout"}}
        assert faults.take(faults.FaultPoint.TOOL_HANDLER) is faults.FaultKind.TIMEOUT
        assert faults.take(faults.FaultPoint.TOOL_HANDLER) is faults.FaultKind.TIMEOUT
        assert faults.take(faults.FaultPoint.TOOL_HANDLER) is None

        stack.call(
            "POST", "/_local/faults", body={"point": "background.after_message", "times": 1, "kind": "crash"}
        )
        assert stack.call("DELETE", "/_local/faults") == (200, {"cleared": True})
        assert faults.take(faults.FaultPoint.BACKGROUND_AFTER_MESSAGE) is None
    finally:
        faults.clear()


@pytest.mark.parametrize(
    ("body", "bad_path"),
    [
        ({"point": "tool.handler", "times": 0, "kind": "crash"}, "times"),
        ({"point": "tool.handler", "times": 11, "kind": "crash"}, "times"),
        ({"point": "tool.handler", "times": "1", "kind": "crash"}, "times"),
        ({"point": "tool.handler", "times": True, "kind": "crash"}, "times"),
        ({"point": "tool.handler", "kind": "crash"}, "times"),
        ({"point": "nowhere", "times": 1, "kind": "crash"}, "point"),
        ({"point": "tool.handler", "times": 1, "kind": "explode"}, "kind"),
        ({"point": "tool.handler", "times": 1, "kind": "crash", "extra": 1}, "extra"),
    ],
)
def test_local_faults_reject_bad_input(stack: StackClient, body: dict[str, Any], bad_path: str) -> None:
    from skillcore import faults

    faults.clear()
    status, answer = stack.call("POST", "/_local/faults", body=body)
    assert status == 422
    assert answer["error"]["code"] == "validation_error"
    assert bad_path in {error["path"] for error in answer["error"]["details"]["errors"]}
    assert faults.take(faults.FaultPoint.TOOL_HANDLER) is None


def test_local_faults_need_a_json_object(stack: StackClient) -> None:
    assert stack.call("POST", "/_local/faults", body=[1])[0] == 400
    assert (
        stack.call("POST", "/_local/faults", raw_body=b"{", headers={"Content-Type": "application/json"})[0]
        == 400
    )


# ---------------------------------------------------------------------------------------------- handler loading


def test_a_handler_that_fails_to_import_fails_its_requests_only(tmp_path: Path) -> None:
    from skillcore_local.invoke import FunctionLoadError, FunctionSpec

    # Written like the real handlers: the collector is paused before init and init fails before resuming it.
    (tmp_path / "app.py").write_text("import gc\ngc.disable()\nraise ImportError('half written')\n")
    registry = FunctionRegistry({"Broken": FunctionSpec("Broken", tmp_path, "app.lambda_handler", 3, 128)})
    with pytest.raises(FunctionLoadError, match="half written"):
        registry.invoke("Broken", {})
    assert gc.isenabled()  # the local stack lives on after a failed init: the collector is back on
    (tmp_path / "app.py").write_text(
        "import gateway_test_helper\ndef lambda_handler(event, context):\n    return gateway_test_helper.answer(event)\n"
    )
    (tmp_path / "gateway_test_helper.py").write_text("def answer(event):\n    return {'seen': event['x']}\n")
    assert registry.invoke("Broken", {"x": 1}) == {"seen": 1}  # fixed on disk: the next call loads it


def test_invoke_cli_runs_a_handler_once_against_dynamodb_local(stack: StackClient, tmp_path: Path) -> None:
    from skillcore_local.routing import Route

    event = http_event(
        method="GET",
        target="/rpc/health",
        headers=[("Host", "localhost")],
        body=b"",
        route=Route("GET", "/rpc/health", "RpcFunction", False),
        path_params={},
        claims=None,
        source_ip="127.0.0.1",
    )
    event_file = tmp_path / "health.json"
    event_file.write_text(json.dumps(event))
    env = {**os.environ, "SKILLS_DYNAMODB_ENDPOINT": stack.local.ddb_endpoint}
    result = subprocess.run(
        [sys.executable, "-m", "skillcore_local.invoke", "RpcFunction", str(event_file)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    response = json.loads(result.stdout)
    assert response["statusCode"] == 200
    assert json.loads(response["body"])["status"] == "ok"


# ---------------------------------------------------------------------------------------------- lifecycle


def _process_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is dead, just not reaped
    except FileNotFoundError:
        return True


def _wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _process_gone(pid):
            return True
        time.sleep(0.05)
    return False


class StackProcess:
    """`python -m skillcore_local.stack` as `make dev` runs it, with ports chosen by the OS."""

    def __init__(self, data_dir: Path) -> None:
        env = {
            **os.environ,
            "SKILLS_LOCAL_PORT": "0",
            "SKILLS_LOCAL_DDB_PORT": "0",
            "SKILLS_LOCAL_DATA_DIR": str(data_dir),
            "SKILLS_LOCAL_SCAN_INTERVAL": "0",
            "PYTHONUNBUFFERED": "1",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "skillcore_local.stack"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output: list[str] = []
        self.url = self.ddb_endpoint = ""
        self.java_pid = 0

    def ready(self) -> StackProcess:
        """Waits for the banner (several stacks may boot side by side before anyone waits)."""
        self.url, self.ddb_endpoint, self.java_pid = self._read_banner()
        return self

    def _read_banner(self) -> tuple[str, str, int]:
        assert self.process.stdout is not None
        api = ddb = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.output.append(line)
            if match := re.search(r"API\s+(http://\S+)", line):
                api = match.group(1)
            if match := re.search(r"DynamoDB\s+(http://\S+)\s+\(DynamoDB Local, pid (\d+)", line):
                ddb = (match.group(1), int(match.group(2)))
            if "Ctrl-C" in line and api and ddb:
                return api, ddb[0], ddb[1]
        self.process.kill()
        raise AssertionError("the stack did not print its banner:\n" + "".join(self.output))

    def finish(self, timeout: float = 20) -> str:
        out, _ = self.process.communicate(timeout=timeout)
        return "".join(self.output) + (out or "")


def test_no_java_outlives_the_stack_and_the_data_survives_a_restart(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) and SIGTERM stop the stack and Java with it; after SIGKILL, where Python has no chance
    to clean up, the kernel's parent-death signal stops Java. Data written before Ctrl-C is there after."""
    first, killed = StackProcess(tmp_path / "kept"), StackProcess(tmp_path / "killed")  # boot side by side
    try:
        first.ready()
        killed.ready()
        ddb = client(first.ddb_endpoint)
        tables = ensure_tables(ddb)
        ddb.put_item(TableName=tables["SKILLS_TABLE_USERS"], Item={"pk": {"S": "persist"}, "sk": {"S": "me"}})
        assert not _process_gone(first.java_pid) and not _process_gone(killed.java_pid)
    finally:
        killed.process.kill()
        first.process.send_signal(signal.SIGINT)  # what Ctrl-C sends to `make dev`
        output = first.finish()
        killed.finish()
    assert first.process.returncode == 0, output
    assert "local stack stopped" in output
    assert _wait_gone(first.java_pid, timeout=1), f"DynamoDB Local (pid {first.java_pid}) outlived Ctrl-C"
    assert _wait_gone(killed.java_pid, timeout=10), f"DynamoDB Local (pid {killed.java_pid}) outlived SIGKILL"
    assert (tmp_path / "kept" / "dynamodb").is_dir()

    second = StackProcess(tmp_path / "kept").ready()
    try:
        item = client(second.ddb_endpoint).get_item(
            TableName=tables["SKILLS_TABLE_USERS"], Key={"pk": {"S": "persist"}, "sk": {"S": "me"}}
        )
        assert item.get("Item") == {"pk": {"S": "persist"}, "sk": {"S": "me"}}
    finally:
        second.process.send_signal(signal.SIGTERM)
        output = second.finish()
    assert second.process.returncode == 0, output
    assert _wait_gone(second.java_pid, timeout=1), f"DynamoDB Local (pid {second.java_pid}) outlived SIGTERM"


def test_without_java_moto_stands_in_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(ddb_local.shutil, "which", lambda name: None)
    with DynamoDBLocal(port=0, data_dir="/nonexistent/never-written") as server:
        assert server.pid is None
        assert ensure_tables(client(server.endpoint))["SKILLS_TABLE_USERS"] == "UsersTable"
    assert "IN MEMORY ONLY" in capfd.readouterr().err
