"""OfflineModel: a deterministic stand-in for the model, the default locally and in tests.

What it answers (the contract tests rely on), first rule that applies wins:
0. A HOSTED block (a hosted workflow call's outcome, hosted/chat_replies.py): its facts verbatim, one per line.
1. A NOTICE block: its first fact (the user-facing sentence), verbatim, e.g. the "grant memory:read on the
   Skills page" notice of a denied tool; its text when it has no facts.
2. A RECALL block: "Here is what I remember:" followed by each fact verbatim, one per line
   (Chinese: "我记得这些：").
3. A RECALL_EMPTY block: "I can't recall that exactly." / "我想不起确切的内容了。" and nothing else, so a
   recall that found nothing, failed or was denied never carries memory text.
4. Otherwise an echo: "I hear you: “<the last user text, up to 200 characters>”." (Chinese: "我听到了：“…”。"),
   followed by " [skills: a, b]" naming the SKILL blocks' sources, if any.
MEMORY blocks (context skills) are never repeated; they only count: " [memories: N]" is appended to an echo.
With tools offered, it calls them as `tool_planner` decides (automation runs plug in the deterministic
extractor of automation/offline_extraction.py); without a planner it calls none. After tool results, an
AUTOMATION request is answered "Memory review done: N saved, M forgotten." (Chinese:
"记忆整理完成：保存 N 条，忘记 M 条。"), counting the successful results of each tool.
Usage: it reports tokens as its own estimate, one per 4 characters (rounded up) of the request (system blocks,
messages, tools) and of its answer, so the daily model budget (skillcore/limits/) counts offline as it does with
Bedrock's `usage`.
Chinese or English follows the user (skillcore/language.py): their latest message that shows a language,
the transcript's user lines first in an automation run, else Chinese.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from skillcore.language import Language, choose
from skillcore.model.port import BlockKind, ModelRequest, ModelResponse, ToolCall

ECHO_CHARS = 200
CHARS_PER_TOKEN = 4

ToolPlanner = Callable[[ModelRequest], tuple[ToolCall, ...]]


class OfflineModel:
    def __init__(self, tool_planner: ToolPlanner | None = None):
        self._tool_planner = tool_planner

    def converse(self, request: ModelRequest) -> ModelResponse:
        if request.tools and self._tool_planner and not _has_tool_results(request):
            calls = self._tool_planner(request)
            if calls:
                return ModelResponse(text="", tool_calls=calls, stop_reason="tool_use",
                                     input_tokens=input_tokens(request),
                                     output_tokens=estimate_tokens(json.dumps([c.input for c in calls])))
        text = self.reply_text(request)
        return ModelResponse(text=text, stop_reason="end_turn", input_tokens=input_tokens(request),
                             output_tokens=estimate_tokens(text))

    def reply_text(self, request: ModelRequest) -> str:
        last_user = next((m.text for m in reversed(request.messages) if m.role == "user" and m.text), "")
        chinese = _language(request) is Language.ZH
        blocks = request.system
        if any(block.kind is BlockKind.AUTOMATION for block in blocks):
            saved, forgotten = _tool_successes(request, "memory_write"), _tool_successes(request, "memory_forget")
            if chinese:
                return f"记忆整理完成：保存 {saved} 条，忘记 {forgotten} 条。"
            return f"Memory review done: {saved} saved, {forgotten} forgotten."
        hosted = [fact for block in blocks if block.kind in (BlockKind.HOSTED, BlockKind.CODE_TOOL)
                  for fact in block.facts]
        if hosted:
            return "\n".join(hosted)
        for block in blocks:
            if block.kind is BlockKind.NOTICE:
                return block.facts[0] if block.facts else block.text
        recalled = [fact for block in blocks if block.kind is BlockKind.RECALL for fact in block.facts]
        if recalled:
            header = "我记得这些：" if chinese else "Here is what I remember:"
            return "\n".join([header, *recalled])
        if any(block.kind is BlockKind.RECALL_EMPTY for block in blocks):
            return "我想不起确切的内容了。" if chinese else "I can't recall that exactly."
        quoted = last_user[:ECHO_CHARS]
        text = f"我听到了：“{quoted}”。" if chinese else f"I hear you: “{quoted}”."
        skills = [block.source for block in blocks if block.kind is BlockKind.SKILL]
        if skills:
            text += f" [skills: {', '.join(skills)}]"
        memories = sum(len(block.facts) for block in blocks if block.kind is BlockKind.MEMORY)
        if memories:
            text += f" [memories: {memories}]"
        return text


def estimate_tokens(text: str) -> int:
    """The offline model's usage: one token per 4 characters, rounded up (deterministic, as Bedrock's is not)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def input_tokens(request: ModelRequest) -> int:
    """What the request would cost as input: its system blocks with their facts, its messages and tools."""
    parts = [block.text + "".join(block.facts) for block in request.system]
    parts += [m.text + json.dumps([c.input for c in m.tool_calls]) + json.dumps([r.content for r in m.tool_results])
              for m in request.messages]
    parts += [tool.name + tool.description + json.dumps(tool.input_schema) for tool in request.tools]
    return estimate_tokens("".join(parts))


def _language(request: ModelRequest) -> Language:
    """The user's language (skillcore/language.py): their latest message that shows one; in an automation
    run, whose only user message is the job's prompt, their own lines of the transcript come first."""

    def texts() -> Iterator[str]:
        if any(block.kind is BlockKind.AUTOMATION for block in request.system):
            for block in request.system:
                if block.kind is BlockKind.TRANSCRIPT:
                    yield from (f[len("user: "):] for f in reversed(block.facts) if f.startswith("user: "))
        yield from (m.text for m in reversed(request.messages) if m.role == "user" and m.text)

    return choose(texts())


def _has_tool_results(request: ModelRequest) -> bool:
    return any(m.tool_results for m in request.messages)


def _tool_successes(request: ModelRequest, tool_name: str) -> int:
    names = {call.call_id: call.name for m in request.messages for call in m.tool_calls}
    return sum(
        1 for m in request.messages for result in m.tool_results
        if names.get(result.call_id) == tool_name and not result.is_error
    )
