"""The canonical form of an operation's arguments (RFC 8785, JSON Canonicalization Scheme) and what is
derived from it: the digest an approval is bound to, and the preview its owner reads (the whole canonical text,
never cut, with the characters that could hide or reorder what is shown written as visible escapes: `visible`).

The same arguments in any key order or number spelling give the same digest (RFC 8785 fixes both), so an
approval cannot be replayed for different arguments and is not lost to a re-ordered object.

RFC 8785 is defined for I-JSON (RFC 7493), whose numbers are doubles: an integer beyond ±(2**53 - 1) has no
canonical form there, and as a double it would share its digest with its neighbours. Such an integer is valid
JSON and may be valid for a tool's `"type": "integer"`, so it is written as its exact decimal digits instead:
distinct values keep distinct digests. (Spelled with an exponent, `1e21` is a double and canonicalises as
one: a different digest from `1000000000000000000000`, so an approval asked for one does not serve the other.)
NaN and the infinities are not JSON and have no form at all: `non_finite` finds them (only a parser that
allows them, not the API's, can produce them) so that the caller refuses them before any digest is taken.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from typing import Any

import rfc8785

MAX_SAFE_INTEGER = 2**53 - 1


def non_finite(value: Any, path: str = "$") -> list[str]:
    """The JSON paths (jsonschema's `json_path` spelling) of the NaN and infinite numbers in `value`."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in non_finite(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in non_finite(v, f"{path}[{i}]")]
    return []


def _write(value: Any, out: list[bytes]) -> None:
    # RFC 8785 section 3.2: members sorted by their names' UTF-16 code units, no whitespace; each leaf is
    # the library's own serialisation except an integer it has no form for.
    if isinstance(value, dict):
        out.append(b"{")
        for i, name in enumerate(sorted(value, key=lambda n: n.encode("utf-16-be"))):
            if i:
                out.append(b",")
            out.append(rfc8785.dumps(name))
            out.append(b":")
            _write(value[name], out)
        out.append(b"}")
    elif isinstance(value, list | tuple):
        out.append(b"[")
        for i, item in enumerate(value):
            if i:
                out.append(b",")
            _write(item, out)
        out.append(b"]")
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        out.append(str(value).encode("ascii"))
    else:
        out.append(rfc8785.dumps(value))


def canonical(arguments: dict[str, Any]) -> bytes:
    """RFC 8785 bytes of `arguments` (big integers as their digits); raises ValueError for NaN or infinity."""
    out: list[bytes] = []
    _write(arguments, out)
    return b"".join(out)


def arguments_digest(arguments: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(arguments)).hexdigest()


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): drawn as nothing, so a text holding them
# reads as another. The bidi controls (U+061C, U+200E/200F, U+202A-202E, U+2066-2069) are among them.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
# General categories shown escaped too: controls, format characters, line and paragraph separators, surrogates,
# private use and unassigned code points (none of them reads as itself).
ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def hidden(char: str) -> bool:
    """Whether `char` is not shown as itself: a default-ignorable code point or one of ESCAPED_CATEGORIES."""
    point = ord(char)
    if any(low <= point <= high for low, high in DEFAULT_IGNORABLE):
        return True
    return unicodedata.category(char) in ESCAPED_CATEGORIES


def visible(text: str) -> str:
    """`text` with every hidden character (bidi controls, zero-width and other default-ignorable characters,
    controls) written as `\\u{XXXX}` (upper-case hex, at least 4 digits). Unambiguous on canonical JSON: there a
    backslash only appears inside a string, always escaped (`\\\\`), so a literal `\\u{202E}` in an argument shows
    as `\\\\u{202E}`."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(f"\\u{{{ord(c):04X}}}" if hidden(c) else c for c in text)


def arguments_preview(arguments: dict[str, Any]) -> str:
    """What the owner reads: the whole canonical arguments (never cut), hidden characters made visible."""
    return visible(canonical(arguments).decode("utf-8"))
