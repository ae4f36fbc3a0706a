"""Request parsing at the edge (identity, groups, bounded JSON bodies, validation details) and list cursors;
the router has its own tests (test_router.py)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from skillcore.api import http
from skillcore.api.requests.chat import PostMessage
from skillcore.api.requests.core import CreateConversation
from skillcore.db.dynamo import decode_cursor, encode_cursor
from skillcore.errors import BadRequest, Forbidden, PayloadTooLarge, RuleViolation, Unauthenticated

KIB = 1024


def event_with_claims(claims: dict[str, Any] | None) -> dict[str, Any]:
    if claims is None:
        return {"requestContext": {}}
    return {"requestContext": {"authorizer": {"jwt": {"claims": claims}}}}


def event_with_body(body: str | None, *, base64_encoded: bool = False) -> dict[str, Any]:
    return {"body": body, "isBase64Encoded": base64_encoded}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def json_of_size(size: int) -> str:
    """A JSON object body of exactly `size` UTF-8 bytes."""
    text = '{"a":"' + "x" * (size - 8) + '"}'
    assert len(text.encode()) == size
    return text


# -- identity ------------------------------------------------------------------------------------------------


def test_user_id_is_the_token_subject() -> None:
    assert http.user_id(event_with_claims({"sub": "user-alice", "cognito:groups": "[admin]"})) == "user-alice"


@pytest.mark.parametrize(
    "event",
    [
        {},
        {"requestContext": None},
        event_with_claims(None),
        {"requestContext": {"authorizer": {"jwt": None}}},
        event_with_claims({}),
        event_with_claims({"sub": ""}),
        event_with_claims({"sub": "   "}),
        event_with_claims({"sub": None}),
        event_with_claims({"sub": 42}),
        event_with_claims({"sub": ["user-alice"]}),
    ],
    ids=["no-context", "null-context", "no-authorizer", "null-jwt", "no-sub", "empty", "blank", "null", "number", "list"],
)
def test_missing_or_blank_subject_is_unauthenticated(event: dict[str, Any]) -> None:
    with pytest.raises(Unauthenticated) as raised:
        http.user_id(event)
    assert raised.value.code == "unauthenticated"


def test_the_body_never_names_the_caller() -> None:
    event = {**event_with_claims({}), "body": json.dumps({"sub": "user-alice", "userId": "user-alice"})}
    with pytest.raises(Unauthenticated):
        http.user_id(event)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, set()),
        (["admin"], {"admin"}),
        (["admin", "ops"], {"admin", "ops"}),
        ([], set()),
        ("[admin]", {"admin"}),
        ("[admin ops]", {"admin", "ops"}),
        ("[admin, ops]", {"admin", "ops"}),
        ("admin", {"admin"}),
        ("admin ops", {"admin", "ops"}),
        ('["admin", "ops"]', {"admin", "ops"}),
        ('["admin ops"]', {"admin ops"}),  # one group whose name has a space
        ("[]", set()),
        ("", set()),
        (" [ admin ] ", {"admin"}),
        ("administrators", {"administrators"}),
    ],
)
def test_groups(raw: Any, expected: set[str]) -> None:
    claims = {"sub": "u"} if raw is None else {"sub": "u", "cognito:groups": raw}
    assert http.groups(event_with_claims(claims)) == expected


@pytest.mark.parametrize("raw", [["admin"], "[admin]", "[ops admin]", "admin", '["ops","admin"]'])
def test_require_admin_returns_the_caller(raw: Any) -> None:
    assert http.require_admin(event_with_claims({"sub": "user-root", "cognito:groups": raw})) == "user-root"


@pytest.mark.parametrize("raw", [None, [], "[]", "[ops]", "administrators", "[admins]", '["admin ops"]', "Admin"])
def test_require_admin_refuses_everyone_else(raw: Any) -> None:
    claims = {"sub": "user-bob"} if raw is None else {"sub": "user-bob", "cognito:groups": raw}
    with pytest.raises(Forbidden) as raised:
        http.require_admin(event_with_claims(claims))
    assert raised.value.code == "forbidden"


def test_require_admin_checks_the_token_first() -> None:
    with pytest.raises(Unauthenticated):
        http.require_admin(event_with_claims({"cognito:groups": "[admin]"}))


# -- bodies --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        event_with_body('{"name": "Ada", "n": 1}'),
        event_with_body(b64(b'{"name": "Ada", "n": 1}'), base64_encoded=True),
        event_with_body(' \n {"name":"Ada","n":1} \n'),
    ],
    ids=["plain", "base64", "surrounding-whitespace"],
)
def test_json_object(event: dict[str, Any]) -> None:
    assert http.json_object(event) == {"name": "Ada", "n": 1}


def test_unicode_body_plain_and_base64() -> None:
    text = '{"text": "你好 👋"}'
    assert http.json_object(event_with_body(text)) == {"text": "你好 👋"}
    assert http.json_object(event_with_body(b64(text.encode()), base64_encoded=True)) == {"text": "你好 👋"}


@pytest.mark.parametrize("body", ["not base64!", "e30", "e3=0", "////"], ids=["bad-chars", "missing-padding", "misplaced-padding", "decodes-to-non-utf8"])
def test_invalid_base64_is_a_bad_request(body: str) -> None:
    with pytest.raises(BadRequest):
        http.json_object(event_with_body(body, base64_encoded=True))


def test_invalid_base64_message() -> None:
    with pytest.raises(BadRequest, match="body is not valid base64"):
        http.raw_body(event_with_body("not base64!", base64_encoded=True))


@pytest.mark.parametrize(
    "event",
    [
        event_with_body(b64(b'{"a": "\xff\xfe"}'), base64_encoded=True),
        event_with_body(b64('{"a": "é"}'.encode("latin-1")), base64_encoded=True),
        event_with_body('{"a": "\ud800"}'),  # a lone surrogate in the event string
    ],
    ids=["invalid-bytes", "latin-1", "lone-surrogate"],
)
def test_non_utf8_is_a_bad_request(event: dict[str, Any]) -> None:
    with pytest.raises(BadRequest, match="body is not valid UTF-8"):
        http.json_object(event)


def test_exactly_64_kib_is_accepted() -> None:
    assert http.MAX_BODY_BYTES == 64 * KIB
    body = json_of_size(64 * KIB)
    assert http.json_object(event_with_body(body)) == json.loads(body)
    assert http.json_object(event_with_body(b64(body.encode()), base64_encoded=True)) == json.loads(body)


@pytest.mark.parametrize(
    "event",
    [
        event_with_body(json_of_size(64 * KIB + 1)),
        event_with_body(b64(json_of_size(64 * KIB + 1).encode()), base64_encoded=True),
        event_with_body('{"a":"' + "中" * 22_000 + '"}'),  # 22,000 characters, but 66,008 bytes
        event_with_body("x" * 1_000_000),
    ],
    ids=["one-byte-over", "base64-one-byte-over", "multibyte", "huge-non-json"],
)
def test_over_64_kib_is_too_large(event: dict[str, Any]) -> None:
    with pytest.raises(PayloadTooLarge) as raised:
        http.json_object(event)
    assert raised.value.code == "payload_too_large"


def test_the_base64_limit_applies_to_the_decoded_bytes() -> None:
    body = b64(json_of_size(60 * KIB).encode())
    assert len(body) > 64 * KIB
    assert len(http.raw_body(event_with_body(body, base64_encoded=True))) == 60 * KIB


@pytest.mark.parametrize(
    "event",
    [{}, event_with_body(None), event_with_body(""), event_with_body("  \n\t "), event_with_body("", base64_encoded=True)],
    ids=["no-key", "null", "empty", "blank", "empty-base64"],
)
def test_an_empty_body_is_a_bad_request(event: dict[str, Any]) -> None:
    with pytest.raises(BadRequest, match="a JSON object body is required"):
        http.json_object(event)


@pytest.mark.parametrize("body", ["[]", "[1, 2]", "1", '"text"', "null", "true"])
def test_a_non_object_is_a_bad_request(body: str) -> None:
    with pytest.raises(BadRequest, match="body must be a JSON object"):
        http.json_object(event_with_body(body))


@pytest.mark.parametrize("body", ["{", "{'a': 1}", '{"a": 1,}', "NaN-ish", '{"a": 1} trailing'])
def test_invalid_json_is_a_bad_request(body: str) -> None:
    with pytest.raises(BadRequest, match="body is not valid JSON"):
        http.json_object(event_with_body(body))


@pytest.mark.parametrize(
    "body",
    [
        "[" * (32 * KIB) + "]" * (32 * KIB),
        '{"a":' * 10_000 + "1" + "}" * 10_000,
    ],
    ids=["arrays", "objects"],
)
def test_deeply_nested_json_is_a_bad_request_not_a_crash(body: str) -> None:
    assert len(body.encode()) <= 64 * KIB
    with pytest.raises(BadRequest) as raised:
        http.json_object(event_with_body(body))
    assert raised.value.code == "bad_request"


# -- validation errors ---------------------------------------------------------------------------------------


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str = Field(pattern=r"^(user|agent)$")


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    scope: Inner
    tags: list[int] = []


def error_paths(model: type[BaseModel], data: Any) -> list[str]:
    with pytest.raises(RuleViolation) as raised:
        http.parse(model, data)
    error = raised.value
    assert (error.code, error.message) == ("validation_error", "request is not valid")
    assert set(error.details) == {"errors"}
    for entry in error.details["errors"]:
        assert set(entry) == {"path", "message", "type"}
        assert entry["message"]
    return [entry["path"] for entry in error.details["errors"]]


@pytest.mark.parametrize(
    ("model", "data", "paths"),
    [
        (Outer, {"scope": {"type": "user"}}, ["name"]),
        (Outer, {"name": "a", "scope": {"type": "group"}}, ["scope.type"]),
        (Outer, {"name": "a", "scope": {"type": "user", "agentId": "x"}}, ["scope.agentId"]),
        (Outer, {"name": "a", "scope": {"type": "user"}, "tags": [1, "x", 3]}, ["tags.1"]),
        (Outer, {"name": "", "scope": {}, "extra": 1}, ["name", "scope.type", "extra"]),
        (Outer, [1, 2], ["body"]),
        (Outer, None, ["body"]),
        (CreateConversation, {"kind": "group", "agentIds": ["a", "b!"]}, ["agentIds.1"]),
        (CreateConversation, {"kind": "group", "agent_ids": ["a", "b"]}, ["agentIds", "agent_ids"]),
        (PostMessage, {"clientMessageId": "c1", "text": "   "}, ["text"]),
    ],
    ids=["missing", "nested", "nested-extra", "list-index", "several", "list", "null", "camel-index", "snake-case-key", "blank-text"],
)
def test_parse_reports_field_paths(model: type[BaseModel], data: Any, paths: list[str]) -> None:
    assert error_paths(model, data) == paths


def test_parse_returns_the_model() -> None:
    parsed = http.parse(PostMessage, {"clientMessageId": "c-1", "text": "hi"})
    assert (parsed.client_message_id, parsed.text, parsed.agent_id) == ("c-1", "hi", None)


def test_body_combines_json_and_validation() -> None:
    event = event_with_body(json.dumps({"clientMessageId": "c-1", "text": "hi", "userId": "someone-else"}))
    assert error_paths_of_body(event) == ["userId"]


def error_paths_of_body(event: dict[str, Any]) -> list[str]:
    with pytest.raises(RuleViolation) as raised:
        http.body(event, PostMessage)
    return [entry["path"] for entry in raised.value.details["errors"]]


@pytest.mark.parametrize(("params", "expected"), [(None, {}), ({}, {}), ({"limit": "5", "cursor": "abc"}, {"limit": "5", "cursor": "abc"})])
def test_query(params: dict[str, str] | None, expected: dict[str, str]) -> None:
    assert http.query({"queryStringParameters": params}) == expected


# -- cursors -------------------------------------------------------------------------------------------------

PARTITION = ("pk", "user-alice")
LAST_KEY = {"pk": {"S": "user-alice"}, "sk": {"S": "2026-12-02T02:00:00.000Z#01J0000000"}}


@pytest.mark.parametrize(
    ("last_key", "partition"),
    [
        (LAST_KEY, PARTITION),
        ({"userId": {"S": "用户-😀"}, "at": {"S": "2026"}, "n": {"N": "12"}}, ("userId", "用户-😀")),
        ({"pk": {"S": "conv-1"}}, ("pk", "conv-1")),
    ],
    ids=["table-key", "unicode-and-number", "partition-only"],
)
def test_cursor_round_trip(last_key: dict[str, Any], partition: tuple[str, str]) -> None:
    cursor = encode_cursor(last_key)
    assert cursor is not None
    assert "=" not in cursor and "+" not in cursor and "/" not in cursor
    assert decode_cursor(cursor, partition=partition) == last_key


@pytest.mark.parametrize("last_key", [None, {}])
def test_no_last_key_no_cursor(last_key: dict[str, Any] | None) -> None:
    assert encode_cursor(last_key) is None


@pytest.mark.parametrize("cursor", [None, ""])
def test_no_cursor_starts_at_the_beginning(cursor: str | None) -> None:
    assert decode_cursor(cursor, partition=PARTITION) is None


def _encode(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "!!!",
        "not a cursor",
        "%%%%",
        "a",
        base64.urlsafe_b64encode(b"\xff\xfe\xfd").decode(),
        _encode("a string"),
        _encode([LAST_KEY]),
        _encode(None),
        _encode({"pk": "user-alice"}),
        _encode({"pk": {"S": "user-alice"}, "sk": {"N": 5}}),
        _encode({"pk": {"S": "user-alice"}, "sk": {"S": ["x"]}}),
        _encode({"pk": {"S": "user-alice"}, "sk": {"S": None}}),
        _encode({"pk": {"S": "user-alice"}, "sk": {"S": "a", "N": "1"}}),
        _encode({"pk": {"S": "user-alice"}, "sk": {}}),
        _encode({"pk": {"S": "user-alice"}, "sk": {"M": {"S": "x"}}}),
    ],
    ids=[
        "punctuation", "spaces", "percent", "one-char", "not-utf8", "json-string", "json-list", "json-null",
        "bare-value", "number-value", "list-value", "null-value", "two-types", "empty-value", "map-value",
    ],
)
def test_garbage_cursors_are_rule_violations(cursor: str) -> None:
    assert_invalid_cursor(cursor, PARTITION)


@pytest.mark.parametrize(
    "last_key",
    [
        {"pk": {"S": "user-bob"}, "sk": {"S": "x"}},
        {"pk": {"S": "user-alice2"}, "sk": {"S": "x"}},
        {"pk": {"N": "user-alice"}, "sk": {"S": "x"}},
        {"sk": {"S": "x"}},
        {"userId": {"S": "user-alice"}, "sk": {"S": "x"}},
    ],
    ids=["other-owner", "prefix-owner", "other-type", "no-partition", "other-attribute"],
)
def test_a_cursor_never_crosses_owners(last_key: dict[str, Any]) -> None:
    cursor = encode_cursor(last_key)
    assert cursor is not None
    assert_invalid_cursor(cursor, PARTITION)


def test_another_owners_real_cursor_is_refused() -> None:
    bobs = encode_cursor({"pk": {"S": "user-bob"}, "sk": {"S": "x"}})
    assert decode_cursor(bobs, partition=("pk", "user-bob")) is not None
    assert_invalid_cursor(bobs, ("pk", "user-alice"))


def assert_invalid_cursor(cursor: str, partition: tuple[str, str]) -> None:
    with pytest.raises(RuleViolation) as raised:
        decode_cursor(cursor, partition=partition)
    error = raised.value
    assert error.code == "validation_error"
    assert error.details == {"errors": [{"path": "cursor", "message": "invalid cursor"}]}
