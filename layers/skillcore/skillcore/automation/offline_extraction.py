"""The offline model's deterministic memory extractor (automation runs without Bedrock).

It reads only the user's lines of the TRANSCRIPT block and recognises, per sentence:
- 我喜欢X / 我不喜欢X / 我叫X (Chinese), I like X / I love X / I don't like X / my name is X (English)
  ->  memory_write(title = "<kind>: X", content = the sentence): the sentence is the user's statement;
- 记住X / 记下X / 别忘了X (请…, 帮我…), remember (that) X / don't forget (that) X (please…)  ->
  memory_write(title = "备忘|note: X", content = X): a request to remember is a command, and what is
  kept is its object, never the command word ("记住我每周三游泳" keeps "我每周三游泳");
- 忘记X / 忘掉X / forget X / forget that X  ->  memory_forget(match = X), unless negated
  (别忘了 / 不要忘记 / don't forget are requests to remember).
At most 4 writes and 4 forgets (the tools' per-turn caps); repeated sentences are proposed once.
"""

from __future__ import annotations

import re

from skillcore.model.port import BlockKind, ModelRequest, ToolCall

_SENTENCES = re.compile(r"[^。！？!?.\n；;]+")
# Requests to remember: the memory is what follows the command (and its politeness), not the sentence.
_REMEMBER_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:请|麻烦|帮我|你要|你得)*(?:记住|记下|别忘了|不要忘了|不要忘记|别忘记)(?:一下)?[：:，,\s]*(.+)"), "备忘"),
    (re.compile(r"(?<!you )(?<!you still )\b(?:please )?(?:remember|don't forget|do not forget|never forget)(?: that| this)?[:,\s]+(.+)", re.I),
     "note"),
)
# Statements: the sentence itself is the memory.
_STATEMENT_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"我不喜欢(.+)"), "不喜欢"),
    (re.compile(r"我(?:喜欢|爱)(.+)"), "喜欢"),
    (re.compile(r"我叫(.+)"), "名字"),
    (re.compile(r"\bi (?:don't|do not) like (.+)", re.I), "dislikes"),
    (re.compile(r"\bi (?:like|love) (.+)", re.I), "likes"),
    (re.compile(r"\bmy name is (.+)", re.I), "name"),
)
_FORGET_RULES = (
    re.compile(r"(?<!别)(?<!不要)(?:忘记|忘掉)(.+)"),
    re.compile(r"(?<!don't )(?<!do not )(?<!never )\bforget (?:that |about )?(.+)", re.I),
)
_TRIM = " ，,：:"
# "你记住了吗" asks, it does not tell: a question is never a request to remember.
_QUESTION_ENDINGS = ("吗", "么", "嘛", "呢")
MAX_CALLS = 4


def _user_lines(request: ModelRequest) -> list[str]:
    lines: list[str] = []
    for block in request.system:
        if block.kind is BlockKind.TRANSCRIPT:
            lines += [fact[len("user: "):] for fact in block.facts if fact.startswith("user: ")]
    return lines


def plan(request: ModelRequest) -> tuple[ToolCall, ...]:
    offered = {tool.name for tool in request.tools}
    writes: dict[str, ToolCall] = {}
    forgets: dict[str, ToolCall] = {}
    for line in _user_lines(request):
        for part in _SENTENCES.finditer(line):
            sentence = part.group().strip(" ，,")
            if not sentence:
                continue
            question = line[part.end():part.end() + 1] in ("?", "？") or sentence.endswith(_QUESTION_ENDINGS)
            remembered = None if question else _remembered(sentence)
            forget = None if remembered else next((m for r in _FORGET_RULES if (m := r.search(sentence))), None)
            if forget:  # a request to forget is never also written down as a memory
                target = forget.group(1).strip(_TRIM)
                if target and "memory_forget" in offered and len(forgets) < MAX_CALLS:
                    forgets.setdefault(target, ToolCall(f"forget-{len(forgets)}", "memory_forget", {"match": target}))
                continue
            found = remembered or _statement(sentence)
            if found and "memory_write" in offered and len(writes) < MAX_CALLS:
                kind, subject, content = found
                title = f"{kind}: {subject[:60]}"[:80]
                writes.setdefault(title, ToolCall(
                    f"write-{len(writes)}", "memory_write", {"title": title, "content": content[:1000]}
                ))
    return (*writes.values(), *forgets.values())


def _remembered(sentence: str) -> tuple[str, str, str] | None:
    """A request to remember: (kind, subject, content), both the object of the command."""
    for rule, kind in _REMEMBER_RULES:
        found = rule.search(sentence)
        if found and (subject := found.group(1).strip(_TRIM)):
            return kind, subject, subject
    return None


def _statement(sentence: str) -> tuple[str, str, str] | None:
    for rule, kind in _STATEMENT_RULES:
        found = rule.search(sentence)
        if found and (subject := found.group(1).strip(_TRIM)):
            return kind, subject, sentence
    return None
