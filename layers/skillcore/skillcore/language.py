"""Which language the agent writes in: the user's, at least Chinese and English.

How it is known, in this order (docs/offline-model.md, "Language", says the same):
1. the text the user just wrote: any CJK character makes it Chinese, else any Latin letter English; a
   leading command (a skill's slash command such as `/goal`) is not the user's language and is ignored, nor are
   its arguments that are not words: a JSON value (`/hosted flow.add {"a": 2}`) and identifiers (a name with
   `_`, `.`, `:` or `/` in it, such as `test_flow.add`);
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
# In a command's arguments: a JSON value to the end of the text, and identifiers.
_JSON_TAIL = r"[{\[].*\Z"
_IDENTIFIER = r"\S*[_.:/]\S*"


def detect(text: str) -> Language | None:
    """The language a text is written in, or None if it shows none."""
    words = re.sub(_COMMAND, "", text)
    if words != text:
        words = re.sub(_IDENTIFIER, " ", re.sub(_JSON_TAIL, " ", words, flags=re.DOTALL))
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
