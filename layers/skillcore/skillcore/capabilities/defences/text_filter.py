"""Defence 1: a best-effort pattern filter over the texts a user writes into a capability.

THIS IS A HINT, NOT A BOUNDARY. A pattern list can always be evaded (a paraphrase, a language it does not
know, a look-alike outside Unicode's table) and it will sometimes refuse an innocent sentence. Nothing relies on
it to keep an agent safe: what does is structural, namely that a protocol is rendered by the server from
the stored structure, that every user text appears there only as a quoted block the template declares to be
a description, that steps may reference only declared capabilities and bindings, and that a rendered
protocol carries only what its steps reference. This filter only refuses the most obvious attempts early,
with a rule name the user can act on (422 `unsafe_text`, `details.errors: [{"path", "rule"}]`).

What the patterns read (`variants`): NFKC (so full-width `ｓｙｓｔｅｍ：` is `system:`), then every Unicode
default-ignorable code point removed (variation selectors, ZWJ/ZWNJ, soft hyphen, tag characters, bidi
controls, Hangul fillers: `ign\ufe0fore` is `ignore`, `忽\ufe0f略` is `忽略`), then combining marks removed (`ïgnore`),
then case folding; and the same text with look-alikes folded to a skeleton (Unicode's confusables, UTS #39,
as a generated table: confusables_data.py, scripts/gen_confusables.py): a Cyrillic `о` reads as `o`, a
radical `⻌` as `辶`. ASCII is never folded (the patterns are written in it), and a look-alike of `l` is read
both as `l` and as `i` (Unicode's skeleton of `I` is `l`). A pattern matching any variant refuses the text.

What it refuses:
- `zero_width`: zero-width and invisible format characters (ZWSP, ZWNJ, ZWJ, word joiner, BOM, ...),
  refused outright: no user text needs them, and they hide words from readers and from these patterns;
- `bidi_control`: bidirectional embedding, override and isolate controls (they reorder what a reader sees);
- `control_character`: other control characters (tab and line breaks are allowed);
- `tool_command`: phrasings that order tool use ("call the X tool", "use tool", "execute" on its own,
  "调用" on its own, "调用/使用/执行…工具");
- `ignore_rules`: telling the reader to drop its rules ("ignore previous instructions", "disregard",
  "忽略以上/之前的规则/指令");
- `role_play`: text posing as a system or developer message ("system:", "<system>", "[INST]",
  "developer message", "你现在是系统").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

ZERO_WIDTH = "zero_width"
BIDI_CONTROL = "bidi_control"
CONTROL_CHARACTER = "control_character"
TOOL_COMMAND = "tool_command"
IGNORE_RULES = "ignore_rules"
ROLE_PLAY = "role_play"

# Invisible characters that join, split or hide text (Unicode Cf, excluding the bidi controls below).
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u00ad\u034f\u115f\u1160"
                        "\u3164\uffa0\u17b4\u17b5")
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_ALLOWED_CONTROLS = frozenset("\t\n\r")

# Up to a few words (English) or characters (Chinese) between the verb and its object.
_WORDS = r"(?:[\w.:/@-]+\s+){0,4}?"
_CJK_GAP = r"[^。！？!?\n]{0,24}?"

# Compiled on the first check (functools.cache): a cold start of the functions that never check a text pays
# nothing for them.
_SOURCES: tuple[tuple[str, str], ...] = (
    (TOOL_COMMAND, (
        r"\b(?:call|calling|use|using|invoke|invoking|run|trigger|execute|executing)\s+" + _WORDS
        + r"(?:tools?|functions?|mcp|plugins?|commands?)\b"
        r"|\bexecute\b|\btool[_\s-]?(?:call|use)\b|\bfunction[_\s-]?call\b|<\s*/?\s*(?:tool|function)[_\w]*\s*>"
    )),
    (TOOL_COMMAND, (
        r"(?:调用|使用|执行|运行|触发|启用|启动|利用|借助)" + _CJK_GAP + r"(?:工具|函数|插件|命令|脚本|代码|接口|api|mcp)"
        r"|执行(?:以下|下面|如下)|调用"
    )),
    (IGNORE_RULES, (
        r"\b(?:ignore|ignoring|forget|override|bypass|skip)\s+" + _WORDS
        + r"(?:instructions?|rules?|prompts?|directions?|guidelines?|constraints?|polic(?:y|ies)|guardrails?)\b"
        r"|\bignore\s+(?:all\s+|everything\s+)?(?:the\s+)?(?:above|previous|prior|preceding|earlier|foregoing)\b"
        r"|\bdisregard\b"
    )),
    (IGNORE_RULES, (
        r"(?:忽略|忽视|无视|不要理会|别理会|不用理会|不要管|别管|忘记|忘掉|忘了|跳过|绕过|抛开|放弃)" + _CJK_GAP
        + r"(?:规则|指令|指示|要求|提示词?|约束|设定|限制|规定|命令|说明)"
        r"|(?:忽略|无视|忘记|忘掉)(?:以上|上面|上述|之前|前面|先前|此前)"
    )),
    (ROLE_PLAY, (
        r"(?:^|\n)\s*(?:system|developer|assistant|sys)\s*:"
        r"|<\s*/?\s*(?:system|developer|assistant|sys|im_start|im_end)\b[^>]*>"
        r"|<\|\s*(?:im_start|im_end|system|endoftext)\s*\|>"
        r"|\[\s*/?\s*(?:inst|sys)\s*\]|<<\s*/?\s*sys\s*>>"
        r"|\b(?:system|developer)\s+(?:message|prompt|instructions?|mode)\b"
        r"|\byou\s+are\s+now\b|\bact\s+as\s+(?:the\s+|a\s+)?(?:system|developer|admin(?:istrator)?)\b"
    )),
    (ROLE_PLAY, (
        r"你现在是" + r"[^。！？!?\n]{0,6}?(?:系统|开发者|管理员|助手|模型)"
        r"|你(?:现在)?(?:扮演|充当)" + r"[^。！？!?\n]{0,6}?(?:系统|开发者|管理员)"
        r"|(?:^|\n)\s*(?:系统|开发者|系统消息|开发者消息|系统提示)\s*:"
        r"|(?:系统|开发者)(?:消息|提示词?|指令)"
        r"|我是(?:你的)?(?:系统|开发者|管理员)"
    )),
)


@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((rule, re.compile(source)) for rule, source in _SOURCES)


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): never visible, so never read.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]")


@functools.cache
def _skeletons() -> tuple[dict[int, str], dict[int, str]]:
    """The look-alike table as two str.translate maps: as Unicode maps it, and with `l` read as `i`."""
    from skillcore.capabilities.defences.confusables_data import PAIRS

    table = {ord(source): target for source, target in zip(PAIRS[::2], PAIRS[1::2], strict=True)}
    as_i = {k: ("i" if v == "l" else v) for k, v in table.items()}
    return table, as_i


def folded(text: str) -> str:
    """NFKC, default-ignorable code points and combining marks removed (before and after NFKC, which can
    produce them); case is kept, for the skeleton."""
    text = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text))
    decomposed = unicodedata.normalize("NFD", _IGNORABLE.sub("", text))
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


def normalise(text: str) -> str:
    """The plain reading: `folded`, then case-folded."""
    return folded(text).casefold()


def variants(text: str) -> list[str]:
    """Every reading the patterns are matched against: the plain one and its skeletons (module docstring)."""
    plain = folded(text)
    found = [plain.casefold()]
    for table in _skeletons():
        for reading in (plain.translate(table).casefold(), plain.casefold().translate(table).casefold()):
            if reading not in found:
                found.append(reading)
    return found


def _character_rules(text: str) -> list[str]:
    rules: list[str] = []
    for char in text:
        if char in _BIDI:
            rule = BIDI_CONTROL
        elif char in _ZERO_WIDTH or (unicodedata.category(char) == "Cf"):
            rule = ZERO_WIDTH
        elif unicodedata.category(char) == "Cc" and char not in _ALLOWED_CONTROLS:
            rule = CONTROL_CHARACTER
        else:
            continue
        if rule not in rules:
            rules.append(rule)
    return rules


def rules_broken(text: str) -> list[str]:
    """The rules `text` breaks, each once, in a fixed order (empty when it passes)."""
    rules = _character_rules(text)
    # NFKC may itself produce such characters; the NFKC form is checked as well.
    rules += [r for r in _character_rules(unicodedata.normalize("NFKC", text)) if r not in rules]
    readings = variants(text)
    for rule, pattern in _patterns():
        if rule not in rules and any(pattern.search(reading) for reading in readings):
            rules.append(rule)
    return rules


def check(fields: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """`[{"path", "rule"}]` for each (JSON Pointer path, text) pair and each rule its text breaks."""
    return [{"path": path, "rule": rule} for path, text in fields for rule in rules_broken(text)]
