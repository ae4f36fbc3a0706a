"""Payload format 2.0 both ways: the event API Gateway (or EventBridge) sends a function, and the 2.0 response
rules that turn a function's result back into HTTP."""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import sys
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from skillcore_local.invoke import LOCAL_ACCOUNT, LOCAL_REGION, FunctionSpec
from skillcore_local.jwt_local import render_claims
from skillcore_local.responses import HttpResponse, json_response
from skillcore_local.routing import Route

LOCAL_API_ID = "local"
TEXT_TYPES = frozenset({"application/json", "application/xml", "application/javascript"})
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

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
