"""Request parsing shared by the routers: identity from the token, bounded JSON bodies, paging params."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, TypeVar

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
    raw = claims(event).get("cognito:groups")
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
