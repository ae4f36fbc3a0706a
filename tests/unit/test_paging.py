"""Paging of in-memory lists (the skills catalog): every item exactly once, in order, whatever the limit; a cursor
that is not one of ours is a 422 on `cursor`, never a restart from the top."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillcore.db import paging
from skillcore.errors import RuleViolation

keys = st.lists(st.text(alphabet="abcdefgh-:", min_size=1, max_size=6), unique=True, max_size=30)


@given(items=keys, limit=st.integers(min_value=1, max_value=100))
def test_walking_the_pages_serves_every_item_once_in_order(items: list[str], limit: int) -> None:
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(len(items) + 2):
        chunk, cursor = paging.page(items, lambda item: item, limit=limit, cursor=cursor)
        assert len(chunk) <= limit
        seen += chunk
        if cursor is None:
            break
    assert seen == items and cursor is None


@given(items=keys.filter(bool), spare=st.integers(min_value=0, max_value=5))
def test_a_page_that_holds_the_rest_has_no_cursor(items: list[str], spare: int) -> None:
    chunk, cursor = paging.page(items, lambda item: item, limit=len(items) + spare, cursor=None)
    assert chunk == items and cursor is None


def assert_bad(cursor: str, items: list[str]) -> None:
    with pytest.raises(RuleViolation) as raised:
        paging.page(items, lambda item: item, limit=2, cursor=cursor)
    assert raised.value.code == "validation_error"
    assert raised.value.details == {"errors": [{"path": "cursor", "message": "invalid cursor"}]}


@pytest.mark.parametrize("cursor", ["garbage!", "%%%", "a", base64.urlsafe_b64encode(b"\xff\xfe").decode(),
                                    base64.urlsafe_b64encode(b"before:b").decode(), paging.encode("")])
def test_garbage_is_refused(cursor: str) -> None:
    assert_bad(cursor, ["a", "b", "c"])


@given(key=st.text(min_size=1, max_size=20))
def test_a_key_that_is_not_in_the_list_is_refused(key: str) -> None:
    items = ["memory-recall", "goal-setting"]
    if key in items:
        return
    assert_bad(paging.encode(key), items)


@given(key=st.text(min_size=1, max_size=40))
def test_cursors_round_trip(key: str) -> None:
    assert paging.decode(paging.encode(key)) == key
