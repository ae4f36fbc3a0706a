"""The offline model's deterministic memory extractor (automation runs without Bedrock).

It reads only the user's lines of the TRANSCRIPT block and recognises, per sentence:
- 我喜欢X / 我不喜欢X / 我叫X / 记住X (Chinese), I like X / I love X / I don't like X / my name is X /
  remember that X (English)  ->  memory_write(title = "<kind>: X", content = the sentence);
- 忘记X / 忘掉X / forget X / forget that X  ->  memory_forget(match = X).
At most 4 writes and 4 forgets (the tools' per-turn caps); repeated sentences are proposed once.
"""

from __future__ import annotations

import re

from skillcore.model.port import BlockKind, ModelRequest, ToolCall

_SENTENCES = re.compile(r"[^。！？!?.\n；;]+")
_WRITE_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"我不喜欢(.+)"), "不喜欢"),
    (re.compile(r"我(?:喜欢|爱)(.+)"), "喜欢"),
    (re.compile(r"我叫(.+)"), "名字"),
    (re.compile(r"记住(.+)"), "记住"),
    (re.compile(r"\bi (?:don't|do not) like (.+)", re.I), "dislikes"),
    (re.compile(r"\bi (?:like|love) (.+)", re.I), "likes"),
    (re.compile(r"\bmy name is (.+)", re.I), "name"),
    (re.compile(r"\bremember (?:that )?(.+)", re.I), "remember"),
)
_FORGET_RULES = (
    re.compile(r"(?:忘记|忘掉)(.+)"),
    re.compile(r"\bforget (?:that |about )?(.+)", re.I),
)
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
        for sentence in (s.strip(" ，,") for s in _SENTENCES.findall(line)):
            if not sentence:
                continue
            forget = next((m for r in _FORGET_RULES if (m := r.search(sentence))), None)
            if forget:  # a request to forget is never also written down as a memory
                target = forget.group(1).strip(" ，,")
                if "memory_forget" in offered and len(forgets) < MAX_CALLS:
                    forgets.setdefault(target, ToolCall(f"forget-{len(forgets)}", "memory_forget", {"match": target}))
                continue
            for rule, kind in _WRITE_RULES:
                found = rule.search(sentence)
                if found and "memory_write" in offered and len(writes) < MAX_CALLS:
                    subject = found.group(1).strip(" ，,")[:60]
                    title = f"{kind}: {subject}"[:80]
                    writes.setdefault(title, ToolCall(
                        f"write-{len(writes)}", "memory_write", {"title": title, "content": sentence[:1000]}
                    ))
                    break
    return (*writes.values(), *forgets.values())
