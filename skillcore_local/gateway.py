"""A local stand-in for the API Gateway HTTP API in front of the functions (payload format 2.0).

Routes come from the `HttpApi` events in template.yaml. A request is matched the way API Gateway matches
(exact and `{param}` routes beat `{proxy+}`; a method beats `ANY`), checked by the JWT authorizer stand-in
(jwt_local), turned into the 2.0 event AWS would send, handed to the handler in-process, and the handler's
result is turned back into HTTP with the 2.0 response rules. Local-only routes exist besides (never
deployed): `POST /_local/scan`, `POST|DELETE /_local/faults`, the page's sign-in `GET /_local/login` and
`POST /_local/token`, and the Skills page itself under `/skills/` (skillcore_local.page).

Where AWS's own answer would be `{"message": "Unauthorized"}` or `{"message": "Not Found"}`, this gateway
answers the API's error envelope instead (API.md), so clients see one error shape everywhere.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from skillcore_local.docs import ContractFiles
from skillcore_local.docs import handles as serves_contract
from skillcore_local.invoke import (
    LOCAL_ACCOUNT,
    LOCAL_REGION,
    FunctionRegistry,
    FunctionSpec,
    ensure_layer_on_path,
    scheduled_function,
)
from skillcore_local.jwt_local import TokenError, default_secret, render_claims, verify
from skillcore_local.page import PageFiles
from skillcore_local.page import handles as serves_page
from skillcore_local.page import handles_local as serves_sign_in
from skillcore_local.responses import HttpResponse, error_response, json_response, method_not_allowed
from skillcore_local.sqs import QUEUE_URL, EventSource
from skillcore_local.template import load_template

# API.md section 3: what `POST /_local/scan` answers (skillcore/work/scan.py's SUMMARY_KEYS).
SCAN_SUMMARY_KEYS = ("recovered", "claimed", "succeeded", "retried", "failed", "cancelled", "automationRuns",
                     "errors")

MAX_REQUEST_BYTES = (
    10 * 1024 * 1024
)  # API Gateway's payload limit; the handler enforces the API's 64 KiB itself
LOCAL_API_ID = "local"
TEXT_TYPES = frozenset({"application/json", "application/xml", "application/javascript"})
# RFC 9110 `token`: any such method reaches the router (which answers 405 with Allow); anything else is a 400.
METHOD_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# ---------------------------------------------------------------------------------------------- routes


@dataclass(frozen=True)
class Route:
    method: str  # "GET", ..., or "ANY"
    path: str  # "/rpc/conversations/{conversationId}/messages"
    function: str  # logical id of the target function
    auth: bool  # False for `Auth: {Authorizer: NONE}`
    segments: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "segments", tuple(self.path.strip("/").split("/")) if self.path != "/" else ()
        )

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def greedy(self) -> bool:
        return bool(self.segments) and self.segments[-1].endswith("+}")

    def match(self, method: str, segments: list[str]) -> dict[str, str] | None:
        """Path parameters (URL-decoded) if this route takes the request, else None."""
        if self.method not in ("ANY", method):
            return None
        params: dict[str, str] = {}
        fixed = self.segments[:-1] if self.greedy else self.segments
        if len(segments) < len(fixed) or (not self.greedy and len(segments) != len(fixed)):
            return None
        for pattern, actual in zip(fixed, segments, strict=False):
            if pattern.startswith("{") and pattern.endswith("}"):
                if not actual:
                    return None
                params[pattern[1:-1]] = unquote(actual)
            elif pattern != unquote(actual):
                return None
        if self.greedy:
            rest = "/".join(segments[len(fixed) :])
            if not rest:
                return None
            params[self.segments[-1][1:-2]] = unquote(rest)
        return params

    def specificity(self) -> tuple[int, tuple[int, ...], int]:
        """Lower sorts first: no greedy variable, then literal segments before `{param}`, then a method before ANY."""
        kinds = tuple(1 if s.startswith("{") else 0 for s in self.segments)
        return (1 if self.greedy else 0, kinds, 1 if self.method == "ANY" else 0)


def http_routes(template: dict[str, Any] | None = None) -> list[Route]:
    """Every `Type: HttpApi` event of every function, with the API's default authorizer applied."""
    template = template or load_template()
    resources = template["Resources"]
    routes: list[Route] = []
    for logical_id, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in ((resource.get("Properties") or {}).get("Events") or {}).values():
            if event.get("Type") != "HttpApi":
                continue
            props = event.get("Properties") or {}
            api_ref = props.get("ApiId")
            api = resources.get(api_ref.get("Ref")) if isinstance(api_ref, dict) else None
            api_auth = ((api or {}).get("Properties") or {}).get("Auth") or {}
            authorizer = (props.get("Auth") or {}).get("Authorizer") or api_auth.get("DefaultAuthorizer")
            method = str(props.get("Method", "ANY")).upper()
            routes.append(
                Route(
                    method="ANY" if method in ("ANY", "X-AMAZON-APIGATEWAY-ANY-METHOD") else method,
                    path=str(props.get("Path", "/")),
                    function=logical_id,
                    auth=bool(authorizer) and authorizer != "NONE",
                )
            )
    return routes


def match_route(routes: list[Route], method: str, raw_path: str) -> tuple[Route, dict[str, str]] | None:
    segments = raw_path.strip("/").split("/") if raw_path.strip("/") else []
    candidates = [
        (route, params) for route in routes if (params := route.match(method, segments)) is not None
    ]
    if not candidates:
        return None
    return min(candidates, key=lambda candidate: candidate[0].specificity())


# ---------------------------------------------------------------------------------------------- events


def is_text(content_type: str | None, body: bytes) -> bool:
    """Whether API Gateway hands the body over as text: only text/*, JSON, XML and JavaScript are; everything
    else, a missing Content-Type and form posts included, arrives base64-encoded with isBase64Encoded=true."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if not (media.startswith("text/") or media in TEXT_TYPES):
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def request_time(now: datetime) -> str:
    """requestContext.time, in API Gateway's access-log format: 12/Mar/2020:19:03:58 +0000."""
    utc = now.astimezone(UTC)
    return f"{utc.day:02d}/{_MONTHS[utc.month - 1]}/{utc.year}:{utc:%H:%M:%S} +0000"


def new_request_id() -> str:
    return base64.b64encode(secrets.token_bytes(11)).decode("ascii")  # 16 characters, like "JKJaXmPLvHcESHA="


def trace_id(now: datetime) -> str:
    return f"Root=1-{int(now.timestamp()):08x}-{secrets.token_hex(12)}"


def http_event(
    *,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    route: Route,
    path_params: Mapping[str, str],
    claims: Mapping[str, Any] | None,
    source_ip: str,
    protocol: str = "HTTP/1.1",
    now: datetime | None = None,
    request_id: str | None = None,
    account: str = LOCAL_ACCOUNT,
) -> dict[str, Any]:
    """The payload format 2.0 event API Gateway sends for this request.

    Header names are lower-cased and repeated headers joined with commas; Cookie headers move to `cookies`;
    repeated query parameters are joined with commas; fields with nothing to say are left out, as AWS does.
    """
    now = now or datetime.now(UTC)
    request_id = request_id or new_request_id()
    split = urlsplit(target)
    raw_path, raw_query = split.path or "/", split.query

    folded: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in headers:
        lower = name.lower()
        if lower == "cookie":
            cookies += [c.strip() for c in value.split(";") if c.strip()]
        elif lower in folded:
            folded[lower] += "," + value
        else:
            folded[lower] = value
    host = folded.get("host", "localhost")
    folded.setdefault("x-amzn-trace-id", trace_id(now))
    folded["x-forwarded-for"] = source_ip
    folded["x-forwarded-port"] = host.rpartition(":")[2] if ":" in host else "80"
    folded["x-forwarded-proto"] = "http"

    query: dict[str, str] = {}
    for name, value in parse_qsl(raw_query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value

    domain = host.rpartition(":")[0] if ":" in host else host
    context: dict[str, Any] = {
        "accountId": account,
        "apiId": LOCAL_API_ID,
        "domainName": domain,
        "domainPrefix": domain.split(".", 1)[0],
        "http": {
            "method": method,
            "path": raw_path,
            "protocol": protocol,
            "sourceIp": source_ip,
            "userAgent": folded.get("user-agent", ""),
        },
        "requestId": request_id,
        "routeKey": route.key,
        "stage": "$default",
        "time": request_time(now),
        "timeEpoch": int(now.timestamp() * 1000),
    }
    if claims is not None:
        # Scopes are null unless a route names AuthorizationScopes, which none of ours do.
        context["authorizer"] = {"jwt": {"claims": render_claims(dict(claims)), "scopes": None}}

    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route.key,
        "rawPath": raw_path,
        "rawQueryString": raw_query,
    }
    if cookies:
        event["cookies"] = cookies
    event["headers"] = folded
    if query:
        event["queryStringParameters"] = query
    event["requestContext"] = context
    if body:
        text = is_text(folded.get("content-type"), body)
        event["body"] = body.decode("utf-8") if text else base64.b64encode(body).decode("ascii")
        event["isBase64Encoded"] = not text
    else:
        event["isBase64Encoded"] = False
    if path_params:
        event["pathParameters"] = dict(path_params)
    return event


def scheduled_event(
    when: datetime | None = None,
    *,
    rule_name: str = "skillcore-local-scan",
    region: str = LOCAL_REGION,
    account: str = LOCAL_ACCOUNT,
) -> dict[str, Any]:
    """The event an EventBridge schedule rule sends; `time` (second precision, Z) is the scan's notion of now."""
    when = (when or datetime.now(UTC)).astimezone(UTC)
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": account,
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [f"arn:aws:events:{region}:{account}:rule/{rule_name}"],
        "detail": {},
    }


def rule_name(spec: FunctionSpec) -> str:
    return f"skillcore-local-{spec.logical_id}{spec.schedules[0].event_name if spec.schedules else ''}"


# ---------------------------------------------------------------------------------------------- responses


def log_failure(what: str, error: BaseException) -> None:
    """One log line: the error's type and where it was raised, never its message. An exception's text can carry
    stored data (a record's fields, a user's text); the type and the frame are enough to find the bug."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    print(f"ERROR: {what} failed: {type(error).__name__}{where}", file=sys.stderr, flush=True)


class BadLambdaResponse(ValueError):
    """The handler returned something API Gateway cannot turn into HTTP (AWS answers 500)."""


def aws_internal_error() -> HttpResponse:
    """What API Gateway answers when the function fails or answers garbage."""
    return json_response(500, {"message": "Internal Server Error"})


def from_lambda_result(result: Any) -> HttpResponse:
    """The 2.0 response rules: a dict with statusCode is a structured response; anything else is JSON-encoded
    and sent as a 200 application/json body (the "shortcut" format)."""
    if not (isinstance(result, dict) and "statusCode" in result):
        try:
            return HttpResponse(
                200, [("content-type", "application/json")], json.dumps(result).encode("utf-8")
            )
        except (TypeError, ValueError) as error:
            raise BadLambdaResponse(f"result is not JSON serializable: {error}") from error

    status = result["statusCode"]
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise BadLambdaResponse(f"statusCode must be an integer HTTP status, got {status!r}")
    headers: list[tuple[str, str]] = []
    raw_headers = result.get("headers") or {}
    if not isinstance(raw_headers, dict):
        raise BadLambdaResponse("headers must be an object")
    for name, value in raw_headers.items():
        headers.append((str(name), value if isinstance(value, str) else json.dumps(value)))
    if result.get("multiValueHeaders"):
        # Payload 2.0 has no multiValueHeaders: API Gateway drops them, so a handler relying on them is broken.
        print(
            "WARNING: the handler returned multiValueHeaders, which payload format 2.0 ignores; "
            "use comma-joined `headers` and the `cookies` list",
            file=sys.stderr,
            flush=True,
        )
    cookies = result.get("cookies") or []
    if not isinstance(cookies, list) or not all(isinstance(c, str) for c in cookies):
        raise BadLambdaResponse("cookies must be a list of strings")
    headers += [("set-cookie", cookie) for cookie in cookies]

    body = result.get("body")
    if body is None:
        data = b""
    elif not isinstance(body, str):
        raise BadLambdaResponse(f"body must be a string, got {type(body).__name__}")
    elif result.get("isBase64Encoded"):
        try:
            data = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError) as error:
            raise BadLambdaResponse("isBase64Encoded is true but body is not base64") from error
    else:
        data = body.encode("utf-8")
    return HttpResponse(status, headers, data)


# ---------------------------------------------------------------------------------------------- local routes


def parse_scan_time(payload: Any) -> datetime | None:
    """`{"time"?: ISO time with offset}` -> the time, or None for now. ValueError carries a field message."""
    if not isinstance(payload, dict):
        raise ValueError("body must be a JSON object")
    unknown = set(payload) - {"time"}
    if unknown:
        raise ValueError(f"unknown fields: {sorted(unknown)}")
    value = payload.get("time")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("time must be a string")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as error:
        raise ValueError("time must be an ISO 8601 time") from error
    if parsed.tzinfo is None:
        raise ValueError("time must carry an offset (Z or +hh:mm)")
    return parsed.astimezone(UTC)


def parse_fault(payload: Any) -> tuple[str, int, str]:
    ensure_layer_on_path()
    from skillcore.faults import FaultKind, FaultPoint

    if not isinstance(payload, dict):
        raise ValueError("body must be a JSON object")
    errors: list[dict[str, str]] = []
    unknown = set(payload) - {"point", "times", "kind"}
    errors += [{"path": name, "message": "unknown field"} for name in sorted(unknown)]
    point, times, kind = payload.get("point"), payload.get("times"), payload.get("kind")
    if point not in {p.value for p in FaultPoint}:
        errors.append({"path": "point", "message": f"one of {[p.value for p in FaultPoint]}"})
    if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= 10:
        errors.append({"path": "times", "message": "an integer from 1 to 10"})
    if kind not in {k.value for k in FaultKind}:
        errors.append({"path": "kind", "message": f"one of {[k.value for k in FaultKind]}"})
    if errors:
        raise FaultInputError(errors)
    assert isinstance(times, int)
    return str(point), times, str(kind)


class FaultInputError(ValueError):
    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__("fault is not valid")
        self.errors = errors


# ---------------------------------------------------------------------------------------------- server


class Gateway:
    """The HTTP server. start() serves on a background thread; stop() shuts it down and joins."""

    def __init__(
        self,
        registry: FunctionRegistry | None = None,
        *,
        routes: list[Route] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        jwt_secret: str | None = None,
        access_log: bool = True,
        contract: ContractFiles | None = None,
    ) -> None:
        self.registry = registry or FunctionRegistry()
        self.routes = routes if routes is not None else http_routes()
        self.jwt_secret = jwt_secret or default_secret()
        self.access_log = access_log
        self.contract = contract or ContractFiles()
        self.page = PageFiles(jwt_secret=self.jwt_secret)
        self._server = _Server((host, port), _Handler, self)
        self._thread: threading.Thread | None = None
        # The work queue and its event source mapping (skillcore_local/sqs.py), registered where the
        # handlers' db/work_queue finds it (SKILLS_WORK_QUEUE_URL=local://WorkQueue) while this gateway runs.
        # The registry is one per process: a gateway started beside another (a test's own) takes it over and
        # hands it back when it stops, so the first one's scans never go to a queue nobody drains.
        self.work = EventSource(self.registry)
        ensure_layer_on_path()
        self._queue_before: Any = None
        self._registered = False
        self._register_queue()

    def _register_queue(self) -> None:
        from skillcore.work.sqs_queue import local_queue, register_local

        if not self._registered:
            self._queue_before = local_queue(QUEUE_URL)
            register_local(QUEUE_URL, self.work.queue)
            self._registered = True

    def _release_queue(self) -> None:
        from skillcore.work.sqs_queue import local_queue, register_local

        if self._registered:
            if local_queue(QUEUE_URL) is self.work.queue:
                register_local(QUEUE_URL, self._queue_before)
            self._registered = False

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = self._server.server_address[0]
        return f"http://{host if isinstance(host, str) else host.decode()}:{self.port}"

    def start(self) -> Gateway:
        self._register_queue()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever, name="local-gateway", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        self._release_queue()

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the scan, shared by /_local/scan and the schedule loop
    def run_scan(self, when: datetime | None = None) -> Any:
        """The scan (it dispatches), then the work queue drained through WorkerFunction: the answer is the
        scan's own summary plus the workers' counts. A worker that crashed (an injected crash) fails the
        whole call, as the scan did when it worked itself; its messages were delivered again meanwhile."""
        spec = scheduled_function(self.registry.specs)
        result = self.registry.invoke(spec.logical_id, scheduled_event(when, rule_name=rule_name(spec)))
        worked, crashes = self.work.drain()
        if crashes:
            raise crashes[0]
        if not isinstance(result, dict):
            return result
        # The dispatcher's own summary (shards, messages) plus the counts its workers add up to.
        merged = {**dict.fromkeys(SCAN_SUMMARY_KEYS, 0), **result} if "messages" in result else dict(result)
        for key, value in worked.items():
            if key in merged and not isinstance(merged[key], int):
                continue
            merged[key] = int(merged.get(key, 0)) + value
        return merged

    # -- request dispatch (called on the server's worker threads)
    def dispatch(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        source_ip: str,
        protocol: str,
    ) -> tuple[HttpResponse, str]:
        """The response, and a label for the access log (the function that ran, or why none did)."""
        raw_path = urlsplit(target).path or "/"
        if not METHOD_TOKEN.match(method):
            return error_response(400, "bad_request", "the request method is not an HTTP token"), "-"
        if serves_sign_in(raw_path):
            return self.page.local(method, raw_path, body), "local"
        if raw_path == "/_local" or raw_path.startswith("/_local/"):
            return self._local(method, raw_path, body), "local"
        if serves_page(raw_path):
            return self.page.serve(method, raw_path), "page"
        if serves_contract(raw_path):
            return self.contract.serve(method, raw_path), "contract"
        found = match_route(self.routes, method, raw_path)
        if found is None:
            return error_response(404, "not_found", f"no route for {method} {raw_path}"), "-"
        route, params = found
        claims: dict[str, Any] | None = None
        if route.auth:
            authorization = next((v for k, v in headers if k.lower() == "authorization"), None)
            try:
                claims = verify(authorization, self.jwt_secret)
            except TokenError as error:
                challenge = f'Bearer error="invalid_token" error_description="{error}"'
                return error_response(
                    401, "unauthenticated", str(error), headers=[("www-authenticate", challenge)]
                ), "-"
        request_id = new_request_id()
        event = http_event(
            method=method,
            target=target,
            headers=headers,
            body=body,
            route=route,
            path_params=params,
            claims=claims,
            source_ip=source_ip,
            protocol=protocol,
            request_id=request_id,
        )
        try:
            result = self.registry.invoke(route.function, event)
            response = from_lambda_result(result)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: B036 - an injected crash is a BaseException, and Lambda reports it as 500 too
            print(f"ERROR: {route.function} failed for {method} {raw_path}:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            response = aws_internal_error()
        response.headers.append(("apigw-requestid", request_id))
        return response, route.function

    def _local(self, method: str, path: str, body: bytes) -> HttpResponse:
        if path not in ("/_local/scan", "/_local/faults"):
            return error_response(404, "not_found", f"no local route {path}")
        allowed = ("POST",) if path == "/_local/scan" else ("DELETE", "POST")
        if method not in allowed:
            return method_not_allowed(method, path, allowed)
        if path == "/_local/faults" and method == "DELETE":
            ensure_layer_on_path()
            from skillcore import faults

            faults.clear()
            return json_response(200, {"cleared": True})
        try:
            payload = json.loads(body.decode("utf-8")) if body.strip() else {}
        # ValueError covers malformed JSON, bad UTF-8 and an integer past Python's digit limit; RecursionError
        # a deeply nested document. Uncaught, either would kill the request's thread and drop the connection.
        except (ValueError, RecursionError):
            return error_response(400, "bad_request", "body is not valid JSON")
        if path == "/_local/faults":
            return self._arm_fault(payload)
        return self._scan(payload)

    def _arm_fault(self, payload: Any) -> HttpResponse:
        try:
            point, times, kind = parse_fault(payload)
        except FaultInputError as error:
            return error_response(422, "validation_error", str(error), {"errors": error.errors})
        except ValueError as error:
            return error_response(400, "bad_request", str(error))
        from skillcore import faults

        faults.arm(point, times, kind)
        return json_response(200, {"armed": {"point": point, "times": times, "kind": kind}})

    def _scan(self, payload: Any) -> HttpResponse:
        try:
            when = parse_scan_time(payload)
        except ValueError as error:
            return error_response(
                422, "validation_error", str(error), {"errors": [{"path": "time", "message": str(error)}]}
            )
        try:
            result = self.run_scan(when)
            return json_response(200, result)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: B036 - an injected crash is a BaseException too
            log_failure("the scan handler", error)
            return error_response(
                500, "internal", "the scan handler failed; the local stack's log says where"
            )


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a hung handler must not keep the process alive at exit
    allow_reuse_address = True
    # socketserver's default backlog is 5: a burst of concurrent clients (the stack's race tests fire 60 at
    # once) would see connections reset, which API Gateway never does.
    request_queue_size = 128

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], gateway: Gateway
    ) -> None:
        self.gateway = gateway
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client dropping a kept-alive connection is routine, not worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
            return
        super().handle_error(request, client_address)


_ERROR_CODES: dict[int, str] = {
    HTTPStatus.BAD_REQUEST: "bad_request",
    HTTPStatus.REQUEST_URI_TOO_LONG: "uri_too_long",
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "header_fields_too_large",
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "http_version_not_supported",
}


class _PayloadTooLarge(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm on, a kept-alive client's delayed ACK
    # would hold the second one back ~40 ms per request.
    disable_nagle_algorithm = True
    server: _Server

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0:
            raise ValueError("negative Content-Length")
        if length > MAX_REQUEST_BYTES:
            raise _PayloadTooLarge
        return self.rfile.read(length)

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            size = int(self.rfile.readline(1024).split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(1024).strip():  # trailers
                    pass
                return b"".join(chunks)
            total += size
            if total > MAX_REQUEST_BYTES:
                raise _PayloadTooLarge
            chunks.append(self.rfile.read(size))
            self.rfile.readline(1024)

    def _handle(self) -> None:
        started = time.monotonic()
        gateway = self.server.gateway
        label = "-"
        try:
            body = self._read_body()
        except _PayloadTooLarge:
            self.close_connection = True  # the rest of the body is never read
            response = error_response(
                413, "payload_too_large", f"request body exceeds {MAX_REQUEST_BYTES} bytes"
            )
        except ValueError:
            self.close_connection = True
            response = error_response(400, "bad_request", "malformed request body framing")
        else:
            try:
                response, label = gateway.dispatch(
                    self.command,
                    self.path,
                    list(self.headers.items()),
                    body,
                    self.client_address[0],
                    self.request_version,
                )
            except Exception as error:  # noqa: BLE001 - the gateway's own bug: answer it rather than drop the line
                log_failure(f"the gateway, for {self.command} {urlsplit(self.path).path}", error)
                response, label = error_response(500, "internal", "the local gateway failed"), "-"
        if gateway.access_log:  # before sending: once the client has its answer, nobody may be listening
            elapsed = (time.monotonic() - started) * 1000
            print(
                f"{self.command} {self.path} -> {response.status} {label} {elapsed:.0f} ms",
                file=sys.stderr,
                flush=True,
            )
        self._send(response)

    def _send(self, response: HttpResponse) -> None:
        self.send_response_only(response.status)
        self.send_header("date", self.date_time_string())
        for name, value in response.headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(response.body)))
        if self.close_connection:
            self.send_header("connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def __getattr__(self, name: str) -> Any:
        # http.server looks up `do_<METHOD>` and answers an HTML 501 when there is none. Every method goes to
        # _handle instead, so the router answers unknown ones (TRACE, PROPFIND, ...) in the envelope: 405 with
        # Allow on a known path, 404 elsewhere.
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """What http.server answers itself (a malformed request line, a URI over 64 KiB, too many headers), in
        the envelope instead of its HTML page."""
        status = HTTPStatus(code)
        self.close_connection = True
        if len((self.requestline or "").split()) != 2:
            # Only a two-word request line is HTTP/0.9, which has no status line; a line that failed to parse
            # is still a client expecting one (http.server would leave it out).
            self.request_version = "HTTP/1.1"
        response = error_response(
            code, _ERROR_CODES.get(code, status.phrase.lower().replace(" ", "_")), message or status.phrase
        )
        if self.server.gateway.access_log:
            print(f"{self.requestline or '-'} -> {code} (http.server)", file=sys.stderr, flush=True)
        self._send(response)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's signature
        pass  # _handle writes one line per request itself
