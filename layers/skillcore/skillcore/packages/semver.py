"""Semantic versions (semver.org 2.0.0) and the compatibility ranges of skillcore.json: comparators joined by
spaces (all must hold), each `>=`, `>`, `<=`, `<`, `=` or none, or a caret (`^1.2.0`: at least 1.2.0, below
2.0.0) or a tilde (`~1.2.0`: at least 1.2.0, below 1.3.0); `||` between alternatives. Build metadata is ignored
in comparisons, as semver says."""

from __future__ import annotations

import re

from skillcore.skills.manifest import _SEMVER

Version = tuple[int, int, int, tuple[tuple[int, int | str], ...]]
COMPARATOR = re.compile(r"^(>=|<=|>|<|=|\^|~)?(.+)$")
RANGE_MAX = 200


def parse(text: str) -> Version:
    """The version's comparable key, or ValueError."""
    found = _SEMVER.fullmatch(text)
    if found is None:
        raise ValueError("not a semantic version")
    major, minor, patch, pre = int(found.group(1)), int(found.group(2)), int(found.group(3)), found.group(4)
    # A release sorts after its pre-releases: its marker (1,) beats any pre-release's (0, ...).
    marks = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")) if pre else ()
    return major, minor, patch, marks


def _key(version: Version) -> tuple[object, ...]:
    major, minor, patch, marks = version
    return (major, minor, patch, (0, marks) if marks else (1, ()))


def compare(a: str, b: str) -> int:
    ka, kb = _key(parse(a)), _key(parse(b))
    return (ka > kb) - (ka < kb)


def sort_key(text: str) -> str:
    """A string that sorts as the versions do, for a DynamoDB sort key (pre-releases by their text)."""
    major, minor, patch, _ = parse(text)
    found = _SEMVER.fullmatch(text)
    pre = found.group(4) if found else None
    return f"{major:08d}.{minor:08d}.{patch:08d}" + (f"-{pre}" if pre else "~")


def _holds(op: str, version: str, bound: str) -> bool:
    c = compare(version, bound)
    if op in ("", "="):
        return c == 0
    if op == ">=":
        return c >= 0
    if op == ">":
        return c > 0
    if op == "<=":
        return c <= 0
    if op == "<":
        return c < 0
    major, minor, _patch, _ = parse(bound)
    upper = f"{major + 1}.0.0" if op == "^" and major > 0 else (
        f"0.{minor + 1}.0" if op == "^" else f"{major}.{minor + 1}.0")
    return c >= 0 and compare(version, upper) < 0


def check_range(text: str) -> None:
    """ValueError unless `text` is a range this module reads."""
    if not text.strip() or len(text) > RANGE_MAX:
        raise ValueError("a range is 1..200 characters")
    for alternative in text.split("||"):
        parts = alternative.split()
        if not parts:
            raise ValueError("an empty alternative")
        for part in parts:
            found = COMPARATOR.match(part)
            if found is None:
                raise ValueError("not a comparator")
            parse(found.group(2))


def satisfies(version: str, text: str) -> bool:
    check_range(text)
    for alternative in text.split("||"):
        if all(_holds(m.group(1) or "", version, m.group(2))
               for m in (COMPARATOR.match(p) for p in alternative.split()) if m):
            return True
    return False
