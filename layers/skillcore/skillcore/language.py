"""Which language the agent writes in: the user's, at least Chinese and English.

How it is known, in this order (docs/offline-model.md, "Language", says the same):
1. the text the user just wrote: any CJK character makes it Chinese, else any Latin letter English; a
   leading command (a skill's slash command such as `/goal`) is not the user's language and is ignored, nor are
   its arguments that are not words: in a JSON value, its keys, numbers and literals (`/hosted flow.add {"a": 2}`
   shows none; the strings of `{"text": "你好"}` are the user's words), and identifiers (a name with `_`, `.`,
   `:` or `/` in it, such as `test_flow.add`);
2. when that text says nothing (a bare command, digits, emoji), the user's earlier messages in the same
   conversation, the most recent first (in an automation run: the user's lines of its transcript);
3. otherwise Chinese, the product's default (as the profile's default time zone, Asia/Shanghai, and the page).
Nothing is stored: the profile has no language field, and a user who switches language is followed at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

# Compiled on first use: the code-point ranges make this class ~3 ms to compile.
CJK_CHARACTER = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"


class Language(StrEnum):
    ZH = "zh"
    EN = "en"


DEFAULT = Language.ZH

_COMMAND = r"^\s*/\S*"
_LATIN = r"[A-Za-z]"
# In a command's arguments: a JSON value (from its first bracket to the end of the text), whose string values
# alone are words, and identifiers.
_JSON_TAIL = r"[{\[].*\Z"
_JSON_STRING = r'"((?:[^"\\]|\\.)*+)"(\s*:)?'  # possessive: no backtracking, linear
_IDENTIFIER = r"[_.:/]"


# The JSON text read for its words: its first characters say the language as well as all of them, and an
# unterminated string costs a scan to the end from each quote.
_JSON_READ = 1000


def _json_words(match: re.Match[str]) -> str:
    """The string values of a JSON text, keys left out."""
    text = match.group(0)[:_JSON_READ]
    return " ".join(m.group(1) for m in re.finditer(_JSON_STRING, text) if not m.group(2))


def detect(text: str) -> Language | None:
    """The language a text is written in, or None if it shows none."""
    words = re.sub(_COMMAND, "", text)
    if words != text:
        found = re.search(_JSON_TAIL, words, flags=re.DOTALL)
        values = _json_words(found) if found else ""
        head = words[: found.start()] if found else words
        words = " ".join(token for token in head.split() if not re.search(_IDENTIFIER, token)) + " " + values
    if re.search(CJK_CHARACTER, words):
        return Language.ZH
    if re.search(_LATIN, words):
        return Language.EN
    return None


def choose(texts: Iterable[str], default: Language = DEFAULT) -> Language:
    """The language of the first text (most relevant first) that shows one; lazily, so a caller can pass a
    generator whose later items cost a read only when the earlier ones said nothing."""
    for text in texts:
        found = detect(text)
        if found is not None:
            return found
    return default
