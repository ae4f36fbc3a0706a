"""MemoryItem checks its bounds on construction, whichever path builds it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from skillcore.memory.models import CONTENT_MAX, TITLE_MAX, MemoryItem, MemorySource, MemoryStatus

AT = datetime(2026, 12, 2, tzinfo=UTC)


def item(**fields) -> MemoryItem:
    values = {"memory_id": "m1", "user_id": "u1", "agent_id": "a1", "title": "Tea", "content": "Likes green tea",
              "importance": 3, "status": MemoryStatus.ACTIVE, "source": MemorySource.USER, "created_at": AT, "updated_at": AT}
    return MemoryItem(**values | fields)


def test_bounds_are_inclusive() -> None:
    assert item(title="t" * TITLE_MAX, content="c" * CONTENT_MAX, importance=5).importance == 5
    assert item(title="t", content="c", importance=1).title == "t"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"title": ""}, "memory title must be 1 to 80 characters"),
        ({"title": "t" * (TITLE_MAX + 1)}, "memory title must be 1 to 80 characters"),
        ({"content": ""}, "memory content must be 1 to 1000 characters"),
        ({"content": "c" * (CONTENT_MAX + 1)}, "memory content must be 1 to 1000 characters"),
        ({"importance": 0}, "memory importance must be an integer from 1 to 5"),
        ({"importance": 6}, "memory importance must be an integer from 1 to 5"),
        ({"importance": True}, "memory importance must be an integer from 1 to 5"),
    ],
)
def test_out_of_bounds_values_are_refused(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        item(**fields)
