"""transport.RetryFieldFilter: an event stream reaches the MCP client without its `retry` fields (the SDK would
sleep that long before reconnecting), every other byte unchanged, whatever the chunking and the line ends."""

from __future__ import annotations

import pytest

from skillcore.egress.transport import RetryFieldFilter


def _filtered(stream: bytes, size: int) -> bytes:
    f = RetryFieldFilter()
    out = b"".join(f.feed(stream[i:i + size]) for i in range(0, len(stream), size))
    return out + f.flush()


CASES = [
    (b"id: 1\nretry: 600000\ndata: \n\n", b"id: 1\ndata: \n\n"),
    (b"id: 1\r\nretry:600000\r\ndata: x\r\n\r\n", b"id: 1\r\ndata: x\r\n\r\n"),
    (b"retry: 5\rdata: x\r\r", b"data: x\r\r"),
    (b"retry\ndata: x\n\n", b"data: x\n\n"),
    (b": retry: 5\nretryx: 5\nretr\ndata: retry: 5\n\n", b": retry: 5\nretryx: 5\nretr\ndata: retry: 5\n\n"),
    (b"data: {\"a\": 1}\n\nretry: 1\n", b"data: {\"a\": 1}\n\n"),
    (b"data: unfinished ret", b"data: unfinished ret"),
    (b"ret", b"ret"),
    (b"\n\n\r\n", b"\n\n\r\n"),
]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize(("stream", "expected"), CASES)
def test_retry_fields_are_dropped_and_nothing_else(stream: bytes, expected: bytes, size: int) -> None:
    assert _filtered(stream, size) == expected


def test_a_long_line_passes_as_it_comes_without_being_held() -> None:
    f = RetryFieldFilter()
    assert f.feed(b"data: " + b"x" * 100) == b"data: " + b"x" * 100
    assert f.feed(b"y" * 100) == b"y" * 100
