"""Deterministic matchers: explicit commands (`/goal ...`) and semantic triggers (patterns).

Selection only decides whether a skill is wanted; it never grants anything (PolicyGate does that).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class MatchKind(StrEnum):
    COMMAND = "command"
    SEMANTIC = "semantic"


@dataclass(frozen=True)
class Match:
    kind: MatchKind
    argument: str  # for commands: the text after the command; for semantic matches: the whole text


@dataclass(frozen=True)
class SkillMatchers:
    commands: tuple[str, ...] = ()
    patterns: tuple[re.Pattern[str], ...] = ()

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
            if pattern.search(stripped):
                return Match(MatchKind.SEMANTIC, stripped)
        return None


def patterns(*expressions: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(e, re.IGNORECASE) for e in expressions)


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def is_chinese(text: str) -> bool:
    return bool(_CJK.search(text))
