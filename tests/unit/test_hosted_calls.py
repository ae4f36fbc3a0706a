"""hosted/calls.py's pure parts: the answer built from a CallToolResult (text cut at 16 KiB of UTF-8, structured
content dropped over 64 KiB) and the argument check (paths and keywords, never values; local `$ref` resolved with
the empty registry)."""

from __future__ import annotations

import json

from skillcore.hosted.call_answer import MAX_CONTENT_BYTES, answer_of
from skillcore.hosted.call_refusals import argument_errors


def test_the_answer_joins_the_text_items_and_keeps_small_structured_content() -> None:
    raw = {"content": [{"type": "text", "text": "one"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                       {"type": "text", "text": "two"}], "structuredContent": {"n": 2}, "isError": True}
    answer = answer_of(raw, "call-1", 12)
    assert (answer.call_id, answer.content, answer.structured_content, answer.is_error, answer.duration_ms) == (
        "call-1", "one\ntwo", {"n": 2}, True, 12)
    assert answer_of({"content": []}, "c", 0).is_error is False


def test_the_text_is_cut_at_16_kib_of_utf8_and_large_structured_content_is_left_out() -> None:
    text = "汉" * 10_000  # 30,000 bytes
    answer = answer_of({"content": [{"type": "text", "text": text}],
                        "structuredContent": {"blob": "x" * 70_000}}, "c", 1)
    assert len(answer.content.encode("utf-8")) <= MAX_CONTENT_BYTES
    assert answer.content.endswith("…") and answer.content.startswith("汉汉")
    assert answer.structured_content is None
    assert "structuredContent" not in answer.to_body()
    assert json.loads(json.dumps(answer.to_body())) == answer.to_body()


def test_argument_errors_name_paths_and_keywords_only() -> None:
    schema = {"type": "object", "$defs": {"tag": {"type": "string", "maxLength": 3}},
              "properties": {"tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}}, "n": {"minimum": 5}},
              "required": ["n"]}
    errors = argument_errors(schema, {"tags": ["ok", "too-long-secret"], "n": 1})
    assert errors == [{"path": "$.n", "keyword": "minimum"}, {"path": "$.tags[1]", "keyword": "maxLength"}]
    assert "secret" not in json.dumps(errors)
    assert argument_errors(schema, {"n": 9}) == []
