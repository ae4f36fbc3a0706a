"""What a hosted call answers (hosted/calls.py): the API's body for the endpoint's CallToolResult, and a stored
answer replayed.

`content` is the text of the result's text items (joined by newlines) cut to 16 KiB of UTF-8; `structuredContent`
is kept when its JSON is at most 64 KiB (so a call record stays far below DynamoDB's item limit), otherwise left
out. A failed forwarding is stored as its error envelope with its HTTP status, and replayed as the same error.
"""

from __future__ import annotations

import json
from typing import Any

from msgspec import Struct

from skillcore.errors import DomainError, UpstreamError, UpstreamTimeout
from skillcore.hosted import call_store
from skillcore.hosted.errors import UrlNotAllowed

MAX_CONTENT_BYTES = 16 * 1024
# What a forwarded call's failure can be (service.domain_error): stored with the call, replayed as stored.
FORWARD_ERRORS: tuple[type[DomainError], ...] = (UrlNotAllowed, UpstreamError, UpstreamTimeout)
MAX_STRUCTURED_BYTES = 64 * 1024


class CallResult(Struct, frozen=True, kw_only=True):
    call_id: str
    is_error: bool
    content: str
    structured_content: dict[str, Any] | None = None
    duration_ms: int

    def to_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"callId": self.call_id, "isError": self.is_error, "content": self.content,
                                "durationMs": self.duration_ms}
        if self.structured_content is not None:
            body["structuredContent"] = self.structured_content
        return body

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> CallResult:
        return cls(call_id=body["callId"], is_error=body["isError"], content=body["content"],
                   structured_content=body.get("structuredContent"), duration_ms=body["durationMs"])


def _cut_utf8(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode("utf-8", errors="ignore") + "…"


def answer_of(raw: dict[str, Any], call_id: str, duration_ms: int) -> CallResult:
    """The API's answer for a CallToolResult (as JSON data)."""
    items = raw.get("content") or []
    texts = [i["text"] for i in items if isinstance(i, dict) and i.get("type") == "text" and isinstance(i.get("text"), str)]
    structured = raw.get("structuredContent")
    if not isinstance(structured, dict) or len(json.dumps(structured, ensure_ascii=False).encode()) > MAX_STRUCTURED_BYTES:
        structured = None
    return CallResult(call_id=call_id, is_error=bool(raw.get("isError", False)),
                      content=_cut_utf8("\n".join(texts), MAX_CONTENT_BYTES), structured_content=structured,
                      duration_ms=duration_ms)


def envelope(error: DomainError) -> dict[str, Any]:
    return {"error": {"code": error.code, "message": error.message, "details": dict(error.details)}}


def stored_error(http_status: int, body: dict[str, Any]) -> DomainError:
    error = body["error"]
    kind = next((c for c in FORWARD_ERRORS if (c.status, c.code) == (http_status, error["code"])), UpstreamError)
    return kind.restored(error["message"], error.get("details") or {})


def replay(record: call_store.CallRecord) -> CallResult:
    """The stored answer of a completed call: its body, or its error raised again."""
    assert record.done and record.body is not None and record.http_status is not None
    if record.http_status != 200:
        raise stored_error(record.http_status, record.body)
    return CallResult.from_body(record.body)
