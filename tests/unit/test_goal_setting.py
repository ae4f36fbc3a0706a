"""GoalSettingHandler: every transition of goal-setting@1.0.0, in English and Chinese."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from skillcore.conversations.models import SessionStatus, WorkflowSession
from skillcore.skills.definitions import WorkflowTransition
from skillcore.skills.goal_setting import (
    ASK_DEADLINE,
    ASK_GOAL,
    CONFIRM,
    DONE,
    GOAL_SETTING,
    MAX_SLOT_CHARS,
    GoalSettingHandler,
)
from skillcore.skills.matchers import is_chinese

NOW = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)
HANDLER = GoalSettingHandler()

EN_ASK_GOAL = "What goal would you like to set? Tell me in one sentence."
ZH_ASK_GOAL = "你想设定一个什么目标？用一句话告诉我吧。"
EN_RESTART = "No problem, let's start over. What goal would you like to set?"
ZH_RESTART = "没关系，我们重新来。你想设定一个什么目标？"
EN_CANCELLED = "Okay, goal setting is cancelled."
ZH_CANCELLED = "好的，已取消设定目标。"


def session(step: str, slots: dict[str, str]) -> WorkflowSession:
    return WorkflowSession(
        conversation_id="conv-1", session_id="sess-1", skill_id="goal-setting", skill_version="1.0.0",
        status=SessionStatus.ACTIVE, step=step, slots=slots, revision=3, started_at=NOW, updated_at=NOW,
    )


def advance(step: str, slots: dict[str, str], text: str) -> WorkflowTransition:
    return HANDLER.advance(session(step, slots), text, chinese=is_chinese(text))


EN_CONFIRM_SLOTS = {"lang": "en", "goal": "learn piano", "deadline": "by June"}
ZH_CONFIRM_SLOTS = {"lang": "zh", "goal": "学钢琴", "deadline": "六月前"}


def test_the_definition_uses_this_handler() -> None:
    assert isinstance(GOAL_SETTING.handler, GoalSettingHandler)
    assert GOAL_SETTING.manifest.key == "goal-setting@1.0.0"


# -- start ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chinese", "reply", "lang"),
    [(False, EN_ASK_GOAL, "en"), (True, ZH_ASK_GOAL, "zh")],
)
def test_start_without_argument_asks_for_the_goal(chinese: bool, reply: str, lang: str) -> None:
    assert HANDLER.start("", chinese=chinese) == WorkflowTransition(reply, ASK_GOAL, {"lang": lang})


@pytest.mark.parametrize(
    ("argument", "chinese", "reply", "slots"),
    [
        (
            "run a 10k", False,
            "Got it: “run a 10k”. By when do you want to reach it?",
            {"lang": "en", "goal": "run a 10k"},
        ),
        (
            "跑个半马", True,
            "好的：“跑个半马”。你希望什么时候完成？",
            {"lang": "zh", "goal": "跑个半马"},
        ),
        (
            "  run \n a\t10k  ", False,
            "Got it: “run a 10k”. By when do you want to reach it?",
            {"lang": "en", "goal": "run a 10k"},
        ),
    ],
)
def test_start_with_argument_skips_to_the_deadline(argument: str, chinese: bool, reply: str, slots: dict) -> None:
    assert HANDLER.start(argument, chinese=chinese) == WorkflowTransition(reply, ASK_DEADLINE, slots)


# -- ask_goal -> ask_deadline -> confirm -------------------------------------------------------------


@pytest.mark.parametrize(
    ("slots", "text", "reply", "goal"),
    [
        ({"lang": "en"}, "learn piano", "Got it: “learn piano”. By when do you want to reach it?", "learn piano"),
        ({"lang": "en"}, "  learn \n\n piano  ", "Got it: “learn piano”. By when do you want to reach it?", "learn piano"),
        ({"lang": "zh"}, "学钢琴", "好的：“学钢琴”。你希望什么时候完成？", "学钢琴"),
    ],
)
def test_ask_goal_records_the_goal_and_asks_for_the_deadline(slots: dict, text: str, reply: str, goal: str) -> None:
    transition = advance(ASK_GOAL, slots, text)
    assert transition == WorkflowTransition(reply, ASK_DEADLINE, {**slots, "goal": goal})


@pytest.mark.parametrize(
    ("slots", "text", "reply"),
    [
        (
            {"lang": "en", "goal": "learn piano"}, "by June",
            "Let me confirm: goal “learn piano”, deadline “by June”. Is that right? (yes / no)",
        ),
        (
            {"lang": "zh", "goal": "学钢琴"}, "六月前",
            "确认一下：目标“学钢琴”，截止时间“六月前”。对吗？（是 / 不是）",
        ),
    ],
)
def test_ask_deadline_records_the_deadline_and_asks_to_confirm(slots: dict, text: str, reply: str) -> None:
    transition = advance(ASK_DEADLINE, slots, text)
    assert transition == WorkflowTransition(reply, CONFIRM, {**slots, "deadline": text})


# -- confirm -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["yes", "Yes!", " YES. ", "y", "ok", "okay", "sure", "correct", "confirm"])
def test_confirm_yes_finishes_with_the_summary_en(answer: str) -> None:
    transition = advance(CONFIRM, EN_CONFIRM_SLOTS, answer)
    assert transition.reply == (
        "Your goal is set.\nGoal: “learn piano”\nDeadline: “by June”\n"
        "Small steps count. I'm here whenever you want to review progress."
    )
    assert (transition.step, transition.slots) == (DONE, EN_CONFIRM_SLOTS)
    assert (transition.finished, transition.cancelled) == (True, False)


@pytest.mark.parametrize("answer", ["是", "是的", "对", "对的", "好", "好的。", "确认", "没错！", "可以"])
def test_confirm_yes_finishes_with_the_summary_zh(answer: str) -> None:
    transition = advance(CONFIRM, ZH_CONFIRM_SLOTS, answer)
    assert transition.reply == "目标已设定。\n目标：“学钢琴”\n截止时间：“六月前”\n一步一步来，想复盘进展时随时找我。"
    assert (transition.step, transition.finished, transition.cancelled) == (DONE, True, False)


@pytest.mark.parametrize(
    ("slots", "answer", "reply", "lang"),
    [
        (EN_CONFIRM_SLOTS, "no", EN_RESTART, "en"),
        (EN_CONFIRM_SLOTS, "Nope.", EN_RESTART, "en"),
        (EN_CONFIRM_SLOTS, "wrong", EN_RESTART, "en"),
        (ZH_CONFIRM_SLOTS, "不是", ZH_RESTART, "zh"),
        (ZH_CONFIRM_SLOTS, "不对！", ZH_RESTART, "zh"),
        (ZH_CONFIRM_SLOTS, "重来", ZH_RESTART, "zh"),
        (ZH_CONFIRM_SLOTS, "no", ZH_RESTART, "zh"),
    ],
)
def test_confirm_no_restarts_and_forgets_the_slots(slots: dict, answer: str, reply: str, lang: str) -> None:
    assert advance(CONFIRM, slots, answer) == WorkflowTransition(reply, ASK_GOAL, {"lang": lang})


@pytest.mark.parametrize(
    ("slots", "answer", "reply"),
    [
        (EN_CONFIRM_SLOTS, "maybe", "Please answer yes or no: goal “learn piano”, deadline “by June”?"),
        (EN_CONFIRM_SLOTS, "yes, but later", "Please answer yes or no: goal “learn piano”, deadline “by June”?"),
        (ZH_CONFIRM_SLOTS, "也许吧", "请回答“是”或“不是”：目标“学钢琴”，截止时间“六月前”？"),
    ],
)
def test_confirm_anything_else_asks_again(slots: dict, answer: str, reply: str) -> None:
    assert advance(CONFIRM, slots, answer) == WorkflowTransition(reply, CONFIRM, slots)


# -- cancel ------------------------------------------------------------------------------------------

STEPS_WITH_SLOTS = [
    (ASK_GOAL, {"lang": "en"}),
    (ASK_DEADLINE, {"lang": "en", "goal": "learn piano"}),
    (CONFIRM, EN_CONFIRM_SLOTS),
    ("pick_colour", {"lang": "en"}),  # an unknown step is cancellable too
]


@pytest.mark.parametrize(("step", "slots"), STEPS_WITH_SLOTS)
@pytest.mark.parametrize("command", ["/cancel", "  /CANCEL  ", "/Cancel"])
def test_slash_cancel_at_every_step(step: str, slots: dict, command: str) -> None:
    transition = advance(step, slots, command)
    assert transition == WorkflowTransition(EN_CANCELLED, DONE, slots, finished=True, cancelled=True)


@pytest.mark.parametrize(("step", "slots"), STEPS_WITH_SLOTS)
def test_chinese_cancel_at_every_step_answers_in_chinese(step: str, slots: dict) -> None:
    transition = advance(step, slots, " 取消 ")
    assert transition == WorkflowTransition(ZH_CANCELLED, DONE, {**slots, "lang": "zh"}, finished=True, cancelled=True)


def test_cancel_in_a_chinese_session_answers_in_chinese() -> None:
    assert advance(ASK_DEADLINE, {"lang": "zh", "goal": "学钢琴"}, "/cancel").reply == ZH_CANCELLED


# -- unknown step --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slots", "reply", "lang"),
    [
        ({"lang": "en", "goal": "learn piano", "colour": "red"}, EN_RESTART, "en"),
        ({"lang": "zh", "goal": "学钢琴"}, ZH_RESTART, "zh"),
        ({}, EN_RESTART, "en"),
    ],
)
def test_unknown_step_restarts(slots: dict, reply: str, lang: str) -> None:
    assert advance("pick_colour", slots, "red") == WorkflowTransition(reply, ASK_GOAL, {"lang": lang})


# -- language -----------------------------------------------------------------------------------------


def test_a_chinese_session_stays_chinese_on_english_input() -> None:
    transition = advance(ASK_GOAL, {"lang": "zh"}, "learn piano")
    assert transition.reply == "好的：“learn piano”。你希望什么时候完成？"
    assert transition.slots["lang"] == "zh"


def test_an_english_session_switches_to_chinese_on_a_chinese_message() -> None:
    transition = advance(ASK_GOAL, {"lang": "en"}, "学钢琴")
    assert transition.reply == "好的：“学钢琴”。你希望什么时候完成？"
    assert transition.slots == {"lang": "zh", "goal": "学钢琴"}
    # ...and stays Chinese afterwards, even on English input.
    following = HANDLER.advance(session(transition.step, transition.slots), "June", chinese=False)
    assert following.reply == "确认一下：目标“学钢琴”，截止时间“June”。对吗？（是 / 不是）"


def test_a_session_without_a_language_slot_answers_in_english() -> None:
    assert advance(ASK_GOAL, {}, "learn piano").reply == "Got it: “learn piano”. By when do you want to reach it?"


def test_restart_keeps_a_language_switched_by_the_no() -> None:
    assert advance(CONFIRM, EN_CONFIRM_SLOTS, "不对") == WorkflowTransition(ZH_RESTART, ASK_GOAL, {"lang": "zh"})


# -- slot values ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x" * 250, "x" * MAX_SLOT_CHARS),
        ("x" * MAX_SLOT_CHARS, "x" * MAX_SLOT_CHARS),
        ("  " + "目" * 201 + "  ", "目" * MAX_SLOT_CHARS),
        ("a\n\tb    c\r\nd", "a b c d"),
        ("\u3000learn\u3000piano\u3000", "learn piano"),
    ],
    ids=["capped", "exactly-200", "capped-zh", "collapsed", "ideographic-spaces"],
)
def test_slot_values_are_trimmed_collapsed_and_capped(text: str, expected: str) -> None:
    assert MAX_SLOT_CHARS == 200
    assert advance(ASK_GOAL, {"lang": "en"}, text).slots["goal"] == expected
    assert advance(ASK_DEADLINE, {"lang": "en", "goal": "g"}, text).slots["deadline"] == expected
    assert HANDLER.start(text, chinese=False).slots["goal"] == expected


def test_a_capped_slot_does_not_end_in_whitespace() -> None:
    goal = advance(ASK_GOAL, {"lang": "en"}, "word " * 60).slots["goal"]
    assert len(goal) <= MAX_SLOT_CHARS
    assert goal == goal.strip()


# -- the user's words only ever appear quoted ------------------------------------------------------------

_QUOTED = re.compile(r"“[^“”]*”")


def _replies_of_a_full_run(goal: str, deadline: str, chinese: bool) -> list[str]:
    replies = []
    first = HANDLER.start("", chinese=chinese)
    current = session(first.step, first.slots)
    replies.append(first.reply)
    for text in (goal, deadline, "maybe", "是" if chinese else "yes"):
        transition = HANDLER.advance(current, text, chinese=chinese)
        replies.append(transition.reply)
        current = session(transition.step, transition.slots)
    assert current.step == DONE
    return replies


@pytest.mark.parametrize(
    ("goal", "deadline", "chinese"),
    [("learn piano", "by June", False), ("学钢琴", "六月前", True)],
    ids=["en", "zh"],
)
def test_the_users_words_appear_only_inside_quotes(goal: str, deadline: str, chinese: bool) -> None:
    replies = _replies_of_a_full_run(goal, deadline, chinese)
    for reply in replies:
        outside = _QUOTED.sub("", reply)
        assert goal not in outside, reply
        assert deadline not in outside, reply
    # and they do appear: the deadline question quotes the goal, the confirmation quotes both
    assert f"“{goal}”" in replies[1]
    assert f"“{goal}”" in replies[2] and f"“{deadline}”" in replies[2]
