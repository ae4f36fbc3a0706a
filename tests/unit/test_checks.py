"""skillcore.checks: the field checks the rule-carrying Structs share."""

from __future__ import annotations

import re

from skillcore import checks


def test_matches_needs_a_string_matched_whole() -> None:
    assert checks.matches("memory:read", r"[a-z_]+:[a-z_]+")
    assert checks.matches("memory:read", re.compile(r"[a-z_]+:[a-z_]+"))
    assert not checks.matches("memory:read\n", r"[a-z_]+:[a-z_]+")
    assert not checks.matches("x memory:read", r"[a-z_]+:[a-z_]+")
    assert not checks.matches(None, r".*")


def test_text_is_one_to_longest_characters() -> None:
    assert checks.text("a", 3) and checks.text("abc", 3)
    assert not checks.text("", 3) and not checks.text("abcd", 3) and not checks.text(3, 3)


def test_integer_is_exactly_an_int_within_bounds() -> None:
    assert checks.integer(0, 0) and checks.integer(10**9, 0) and checks.integer(7, 1, 7)
    assert not checks.integer(-1, 0) and not checks.integer(8, 1, 7)
    assert not checks.integer(True, 0) and not checks.integer("3", 1, 7) and not checks.integer(3.0, 1, 7)
