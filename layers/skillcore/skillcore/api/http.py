"""Request parsing shared by the routers: identity from the token, bounded JSON bodies, paging params."""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from skillcore.errors import (
    BadRequest,
    FieldError,
    Forbidden,
    PayloadTooLarge,
    Unauthenticated,
    ValidationFailed,
)

MAX_BODY_BYTES = 64 * 1024

M = TypeVar("M", bound=BaseModel)


def claims(event: dict[str, Any]) -> dict[str, Any]:
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    return (authorizer.get("jwt") or {}).get("claims") or {}


def user_id(event: dict[str, Any]) -> str:
    """The caller is the token's `sub`, as verified by the JWT authorizer; never anything from the body."""
    sub = claims(event).get("sub")
    if not isinstance(sub, str) or not sub.strip():
        raise Unauthenticated("a valid bearer token is required")
    return sub


def groups(event: dict[str, Any]) -> set[str]:
    """`cognito:groups` as API Gateway renders it: a JSON list, or a string such as "[admin ops]"."""
    return _words(claims(event).get("cognito:groups"))


# The kind of caller a token is. A person signs in on the page (its own Cognito app client); an agent host
# (the MCP face) signs in with another app client, or carries this resource-server scope.
CallerKind = Literal["person", "host"]
HOST_SCOPE = "skillcore/host"
HOST_CLIENT_IDS_ENV = "SKILLS_HOST_CLIENT_IDS"


def host_client_ids() -> set[str]:
    """The app clients whose tokens are an agent host's (`SKILLS_HOST_CLIENT_IDS`, comma or space separated)."""
    return {c for c in os.environ.get(HOST_CLIENT_IDS_ENV, "").replace(",", " ").split() if c}


def caller_kind(event: dict[str, Any]) -> CallerKind:
    """`host` for a token with the `skillcore/host` scope or issued to a host app client (its `client_id`, an
    access token's, or its `aud`, an ID token's); every other token the authorizer let through is a person's."""
    found = claims(event)
    if HOST_SCOPE in _words(found.get("scope")):
        return "host"
    hosts = host_client_ids()
    if hosts and (_words(found.get("client_id")) | _words(found.get("aud"))) & hosts:
        return "host"
    return "person"


def auth_time(event: dict[str, Any]) -> int | None:
    """When the person signed in (`auth_time`, seconds since the epoch, as Cognito writes it); None without."""
    raw = claims(event).get("auth_time")
    if isinstance(raw, bool) or raw is None:
        return None
    try:
        return int(float(str(raw)))
    except (ValueError, OverflowError):
        return None


def _words(raw: Any) -> set[str]:
    """A claim that lists names: a JSON list, a space separated string (`scope`), or API Gateway's "[a b]"."""
    if raw is None:
        return set()
    if isinstance(raw, list):
        return {str(g) for g in raw}
    text = str(raw).strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = json.loads(text)
            if isinstance(parsed, list):
                return {str(g) for g in parsed}
        except json.JSONDecodeError:
            pass
        text = text[1:-1]
    return {g for g in text.replace(",", " ").split() if g}


def require_admin(event: dict[str, Any]) -> str:
    caller = user_id(event)
    if "admin" not in groups(event):
        raise Forbidden("operator route: the admin group is required")
    return caller


def raw_body(event: dict[str, Any]) -> bytes:
    body = event.get("body")
    if body is None:
        return b""
    if event.get("isBase64Encoded"):
        try:
            data = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError) as error:
            raise BadRequest("body is not valid base64") from error
    else:
        data = body.encode("utf-8", errors="surrogatepass")
    if len(data) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"body is larger than {MAX_BODY_BYTES // 1024} KiB")
    return data


def json_object(event: dict[str, Any]) -> dict[str, Any]:
    data = raw_body(event)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadRequest("body is not valid UTF-8") from error
    if not text.strip():
        raise BadRequest("a JSON object body is required")
    try:
        parsed = json.loads(text, parse_constant=_no_constant)
    except RecursionError as error:
        raise BadRequest("body is not valid JSON: nested too deeply") from error
    except ValueError as error:
        # JSONDecodeError is a ValueError; so is an integer longer than Python converts (4,300 digits) and
        # the NaN/Infinity that json accepts but JSON does not. All are the client's malformed body.
        raise BadRequest("body is not valid JSON") from error
    if not isinstance(parsed, dict):
        raise BadRequest("body must be a JSON object")
    return parsed


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def field_errors(error: ValidationError) -> list[FieldError]:
    return [
        FieldError(path=".".join(str(p) for p in e["loc"]) or "body", message=e["msg"], type=e["type"])
        for e in error.errors(include_url=False, include_input=False)
    ]


def parse(model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ValidationFailed("request is not valid", field_errors(error)) from error


def body(event: dict[str, Any], model: type[M]) -> M:
    return parse(model, json_object(event))


def query(event: dict[str, Any]) -> dict[str, str]:
    return dict(event.get("queryStringParameters") or {})
