"""OfflineModel: each rule of its docstring, first applicable rule wins."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from skillcore.model.offline import ECHO_CHARS, OfflineModel, estimate_tokens, input_tokens
from skillcore.model.port import (
    BlockKind,
    ChatMessage,
    ModelRequest,
    ModelResponse,
    SystemBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
)

PERSONA = SystemBlock(BlockKind.PERSONA, "You are the user's companion.", source="agent", facts=("Name: Ada",))
NOTICE_TEXT = "Grant memory:read on the Skills page so I can look that up."
NOTICE = SystemBlock(BlockKind.NOTICE, NOTICE_TEXT, source="memory-recall")
RECALL = SystemBlock(BlockKind.RECALL, "Answer with these.", source="memory-recall", facts=("likes green tea", "has a cat named Mochi"))
RECALL_EMPTY = SystemBlock(BlockKind.RECALL_EMPTY, "Say you cannot recall.", source="memory-recall")
MEMORY = SystemBlock(BlockKind.MEMORY, "Memories.", source="memory-context", facts=("secret: lives in Lyon", "plays chess"))
SKILL_A = SystemBlock(BlockKind.SKILL, "Plan the day.", source="daily-plan")
SKILL_B = SystemBlock(BlockKind.SKILL, "Be brief.", source="brevity")
WRITE_TOOL = ToolSpec("memory_write", "Saves a memory.", {"type": "object"})


def ask(text: str, *blocks: SystemBlock, history: tuple[ChatMessage, ...] = ()) -> str:
    request = ModelRequest(system=(PERSONA, *blocks), messages=(*history, ChatMessage("user", text)))
    response = OfflineModel().converse(request)
    assert (response.tool_calls, response.stop_reason) == ((), "end_turn")
    return response.text


# -- 1. notice -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "blocks",
    [(NOTICE,), (RECALL, NOTICE), (MEMORY, SKILL_A, NOTICE, RECALL_EMPTY)],
    ids=["alone", "after-recall", "with-everything"],
)
def test_a_notice_is_answered_verbatim_whatever_else_is_there(blocks: tuple[SystemBlock, ...]) -> None:
    assert ask("do you remember my tea?", *blocks) == NOTICE_TEXT
    assert ask("你记得吗？", *blocks) == NOTICE_TEXT


def test_a_notice_with_facts_answers_its_first_fact() -> None:
    notice = SystemBlock(BlockKind.NOTICE, "Tell the user to grant memory:read.", facts=("请在技能页授权。", "second"))
    assert ask("hi", notice) == "请在技能页授权。"


def test_the_first_notice_wins() -> None:
    assert ask("hi", NOTICE, SystemBlock(BlockKind.NOTICE, "other")) == NOTICE_TEXT


# -- 2. recall -----------------------------------------------------------------------------------------------


def test_recall_lists_the_facts_verbatim() -> None:
    assert ask("do you remember what I like?", RECALL) == "Here is what I remember:\nlikes green tea\nhas a cat named Mochi"


def test_recall_in_a_chinese_conversation() -> None:
    recall = SystemBlock(BlockKind.RECALL, "Answer with these.", facts=("喜欢绿茶", "likes cats"))
    assert ask("你还记得我喜欢什么吗？", recall) == "我记得这些：\n喜欢绿茶\nlikes cats"


def test_recall_collects_the_facts_of_every_recall_block_and_ignores_memory_and_skills() -> None:
    second = SystemBlock(BlockKind.RECALL, "More.", facts=("runs on Sundays",))
    text = ask("remember?", MEMORY, RECALL, SKILL_A, second)
    assert text == "Here is what I remember:\nlikes green tea\nhas a cat named Mochi\nruns on Sundays"


def test_recall_beats_recall_empty() -> None:
    assert ask("remember?", RECALL_EMPTY, RECALL).startswith("Here is what I remember:\n")


def test_a_recall_block_without_facts_is_not_a_recall() -> None:
    empty = SystemBlock(BlockKind.RECALL, "Answer with these.")
    assert ask("remember?", empty) == "I hear you: “remember?”."


# -- 3. recall empty ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("do you remember my cat?", "I can't recall that exactly."), ("你记得我的猫吗？", "我想不起确切的内容了。")],
)
def test_recall_empty_says_so_and_nothing_else(text: str, expected: str) -> None:
    leaky = SystemBlock(BlockKind.RECALL_EMPTY, "Say you cannot recall.", facts=("hidden fact",))
    reply = ask(text, MEMORY, SKILL_A, leaky)
    assert reply == expected
    for fact in (*MEMORY.facts, *leaky.facts, *PERSONA.facts):
        assert fact not in reply
    assert "[" not in reply


# -- 4. echo ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("how are you?", "I hear you: “how are you?”."),
        ("你好吗？", "我听到了：“你好吗？”。"),
        ("x" * ECHO_CHARS, f"I hear you: “{'x' * 200}”."),
        ("x" * 199 + "yz", f"I hear you: “{'x' * 199}y”."),
        ("中" * 250, f"我听到了：“{'中' * 200}”。"),
    ],
    ids=["en", "zh", "exactly-200", "201", "zh-250"],
)
def test_echo_of_the_last_user_text_truncated_at_200(text: str, expected: str) -> None:
    assert ECHO_CHARS == 200
    assert ask(text) == expected


def test_echo_uses_the_last_user_message_with_text() -> None:
    messages = (
        ChatMessage("user", "first question"),
        ChatMessage("assistant", "an answer"),
        ChatMessage("user", "second question"),
        ChatMessage("assistant", "", tool_calls=(ToolCall("c1", "memory_write", {}),)),
        ChatMessage("user", "", tool_results=(ToolResult("c1", {"ok": True}),)),
    )
    text = OfflineModel().converse(ModelRequest(system=(PERSONA,), messages=messages)).text
    assert text == "I hear you: “second question”."


def test_echo_without_any_user_message() -> None:
    # No text shows a language: the default, Chinese (skillcore/language.py).
    assert OfflineModel().converse(ModelRequest(system=(), messages=())).text == "我听到了：“”。"


@pytest.mark.parametrize(
    ("blocks", "suffix"),
    [
        ((SKILL_A,), " [skills: daily-plan]"),
        ((SKILL_A, SKILL_B), " [skills: daily-plan, brevity]"),
        ((MEMORY,), " [memories: 2]"),
        ((MEMORY, SystemBlock(BlockKind.MEMORY, "More.", facts=("x",))), " [memories: 3]"),
        ((SystemBlock(BlockKind.MEMORY, "None."),), ""),
        ((MEMORY, SKILL_B, SKILL_A), " [skills: brevity, daily-plan] [memories: 2]"),
    ],
    ids=["one-skill", "two-skills", "memories", "memories-summed", "memory-without-facts", "both"],
)
def test_echo_suffixes(blocks: tuple[SystemBlock, ...], suffix: str) -> None:
    assert ask("hello", *blocks) == "I hear you: “hello”." + suffix


def test_memory_facts_and_persona_facts_are_never_repeated() -> None:
    reply = ask("tell me everything", MEMORY, SKILL_A)
    for fact in (*MEMORY.facts, *PERSONA.facts):
        assert fact not in reply


def test_the_echo_language_follows_the_last_user_text_not_the_history() -> None:
    history = (ChatMessage("user", "你好"), ChatMessage("assistant", "你好！"))
    assert ask("hello", SKILL_A, history=history) == "I hear you: “hello”. [skills: daily-plan]"
    assert ask("好的", MEMORY, history=(ChatMessage("user", "hello"),)) == "我听到了：“好的”。 [memories: 2]"


# -- tools -----------------------------------------------------------------------------------------------------


class Planner:
    def __init__(self, calls: tuple[ToolCall, ...]):
        self.calls = calls
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> tuple[ToolCall, ...]:
        self.requests.append(request)
        return self.calls


CALL = ToolCall("call-1", "memory_write", {"title": "tea", "content": "likes green tea"})


def test_with_tools_offered_the_planner_decides_the_calls() -> None:
    planner = Planner((CALL,))
    request = ModelRequest(system=(PERSONA,), messages=(ChatMessage("user", "extract"),), tools=(WRITE_TOOL,))
    assert sans_usage(OfflineModel(planner).converse(request)) == ModelResponse(text="", tool_calls=(CALL,), stop_reason="tool_use")
    assert planner.requests == [request]


def test_a_planner_that_plans_nothing_gives_a_text_reply() -> None:
    planner = Planner(())
    request = ModelRequest(system=(PERSONA,), messages=(ChatMessage("user", "extract"),), tools=(WRITE_TOOL,))
    assert sans_usage(OfflineModel(planner).converse(request)) == ModelResponse(text="I hear you: “extract”.", stop_reason="end_turn")
    assert len(planner.requests) == 1


def test_the_planner_is_not_called_without_tools() -> None:
    planner = Planner((CALL,))
    request = ModelRequest(system=(PERSONA,), messages=(ChatMessage("user", "extract"),))
    assert OfflineModel(planner).converse(request).tool_calls == ()
    assert planner.requests == []


def test_the_planner_is_not_called_once_tool_results_are_there() -> None:
    planner = Planner((CALL,))
    messages = (
        ChatMessage("user", "extract"),
        ChatMessage("assistant", "", tool_calls=(CALL,)),
        ChatMessage("user", "", tool_results=(ToolResult("call-1", {"memoryId": "m1"}),)),
    )
    response = OfflineModel(planner).converse(ModelRequest(system=(PERSONA,), messages=messages, tools=(WRITE_TOOL,)))
    assert sans_usage(response) == ModelResponse(text="I hear you: “extract”.", stop_reason="end_turn")
    assert planner.requests == []


def test_without_a_planner_no_tool_is_called() -> None:
    request = ModelRequest(system=(PERSONA,), messages=(ChatMessage("user", "extract"),), tools=(WRITE_TOOL,))
    assert sans_usage(OfflineModel().converse(request)) == ModelResponse(text="I hear you: “extract”.", stop_reason="end_turn")


def test_automation_requests_answer_with_a_summary_of_tool_results() -> None:
    automation = SystemBlock(BlockKind.AUTOMATION, "Automation task.")
    messages = (
        ChatMessage("user", "请整理记忆"),
        ChatMessage("assistant", "", tool_calls=(
            ToolCall("w1", "memory_write", {}), ToolCall("w2", "memory_write", {}), ToolCall("f1", "memory_forget", {}),
        )),
        ChatMessage("user", "", tool_results=(
            ToolResult("w1", {"ok": True}), ToolResult("w2", {"error": "x"}, is_error=True), ToolResult("f1", {"ok": True}),
        )),
    )
    text = OfflineModel().converse(ModelRequest(system=(automation,), messages=messages)).text
    assert text == "记忆整理完成：保存 1 条，忘记 1 条。"
    english = OfflineModel().converse(ModelRequest(system=(automation,), messages=(ChatMessage("user", "review"),))).text
    assert english == "Memory review done: 0 saved, 0 forgotten."


def sans_usage(response: ModelResponse) -> ModelResponse:
    return replace(response, input_tokens=0, output_tokens=0)


def test_the_offline_model_reports_its_usage_as_an_estimate_from_the_lengths() -> None:
    """One token per 4 characters, rounded up, of the request and of the answer: deterministic, and what the
    daily model budget counts offline."""
    assert [estimate_tokens(text) for text in ("", "abc", "abcd", "abcde")] == [0, 1, 1, 2]
    request = ModelRequest(system=(PERSONA,), messages=(ChatMessage("user", "extract"),))
    response = OfflineModel().converse(request)
    assert response.output_tokens == estimate_tokens(response.text) > 0
    assert response.input_tokens == input_tokens(request) == estimate_tokens(PERSONA.text + "".join(PERSONA.facts) + "extract" + "[][]")
    assert OfflineModel().converse(request) == response
