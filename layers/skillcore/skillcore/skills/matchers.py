"""Deterministic matchers: explicit commands (`/goal ...`) and semantic triggers (patterns).

Selection only decides whether a skill is wanted; it never grants anything (PolicyGate does that).
"""

from __future__ import annotations

import re
from enum import StrEnum

from msgspec import Struct

from skillcore.language import CJK_CHARACTER


class MatchKind(StrEnum):
    COMMAND = "command"
    SEMANTIC = "semantic"


class Match(Struct, frozen=True):
    kind: MatchKind
    argument: str  # for commands: the text after the command; for semantic matches: the whole text


class SkillMatchers(Struct, frozen=True):
    commands: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()  # regular expressions, matched case-insensitively

    def match(self, text: str) -> Match | None:
        stripped = text.strip()
        for command in self.commands:
            # Case-insensitive (phone keyboards capitalise), any whitespace (tab, ideographic space) after it.
            found = re.match(rf"{re.escape(command)}(?:\s+(.*))?$", stripped, re.IGNORECASE | re.DOTALL)
            if found:
                return Match(MatchKind.COMMAND, (found.group(1) or "").strip())
        if stripped.startswith("/"):
            return None  # another command: never a semantic match
        for pattern in self.patterns:
            if re.search(pattern, stripped, re.IGNORECASE):
                return Match(MatchKind.SEMANTIC, stripped)
        return None


def patterns(*expressions: str) -> tuple[str, ...]:
    """Semantic triggers. They are compiled on first use (and kept in `re`'s cache, which holds 512) rather
    than at import: compiling all of them costs a cold start ~10 ms, and only the chat function matches."""
    return expressions


def is_chinese(text: str) -> bool:
    return re.search(CJK_CHARACTER, text) is not None
