"""SkillMatchers (explicit commands vs semantic patterns), is_chinese, and the built-in skills' triggers."""

from __future__ import annotations

import pytest

from skillcore.skills.daily_plan import DAILY_PLAN
from skillcore.skills.goal_setting import GOAL_SETTING
from skillcore.skills.matchers import Match, MatchKind, SkillMatchers, is_chinese, patterns

# A small matcher of our own, so the command/semantic rules are tested apart from the built-in wording.
GOAL = SkillMatchers(commands=("/goal",), patterns=patterns(r"\bset a goal\b", r"定目标"))


# -- commands ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "argument"),
    [
        ("/goal", ""),
        ("/goal run a 10k", "run a 10k"),
        ("  /goal   learn piano  ", "learn piano"),
        ("/goal\nrun a 10k", "run a 10k"),
        ("/goal run\nevery day", "run\nevery day"),
        ("/goal 跑个半马", "跑个半马"),
        ("/goal set a goal", "set a goal"),  # the command wins over the semantic pattern
    ],
)
def test_command_with_its_argument(text: str, argument: str) -> None:
    assert GOAL.match(text) == Match(MatchKind.COMMAND, argument)


@pytest.mark.parametrize(
    ("text", "argument"),
    [
        ("/goal\trun a 10k", "run a 10k"),
        ("/goal\u3000跑个半马", "跑个半马"),  # the ideographic space a Chinese IME types
    ],
    ids=["tab", "ideographic-space"],
)
def test_any_whitespace_separates_the_command_from_its_argument(text: str, argument: str) -> None:
    assert GOAL.match(text) == Match(MatchKind.COMMAND, argument)


@pytest.mark.parametrize("text", ["/goals", "/goalrun", "/goal-setting", "/goal:run", "/goal.", "/goal,run"])
def test_a_command_is_a_whole_word(text: str) -> None:
    assert GOAL.match(text) is None


@pytest.mark.parametrize(
    ("text", "argument"),
    [("/Goal run a 10k", "run a 10k"), ("/GOAL", "")],
    ids=["capitalised", "upper-case"],
)
def test_commands_ignore_case(text: str, argument: str) -> None:
    assert GOAL.match(text) == Match(MatchKind.COMMAND, argument)


@pytest.mark.parametrize(
    "text",
    ["/note I want to set a goal", "/plan set a goal", "/cancel", "/定目标", "  /help set a goal"],
)
def test_another_slash_command_never_matches_semantically(text: str) -> None:
    assert GOAL.match(text) is None


# -- semantic matches ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "argument"),
    [
        ("I want to set a goal", "I want to set a goal"),
        ("  I want to SET A GOAL today \n", "I want to SET A GOAL today"),
        ("Set A Goal", "Set A Goal"),
        ("帮我定目标吧", "帮我定目标吧"),
        ("please set a goal /goal", "please set a goal /goal"),  # a command later in the text is not a command
    ],
)
def test_semantic_match_carries_the_whole_stripped_text(text: str, argument: str) -> None:
    assert GOAL.match(text) == Match(MatchKind.SEMANTIC, argument)


@pytest.mark.parametrize("text", ["", "   ", "what does /goal do?", "goal", "a sunset agoal", "目标"])
def test_no_match(text: str) -> None:
    assert GOAL.match(text) is None


def test_empty_matchers_match_nothing() -> None:
    assert SkillMatchers().match("/goal set a goal") is None


# -- is_chinese --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("你好", True),
        ("hello 你好", True),
        ("I like 豆腐", True),
        ("\u3400", True),  # CJK extension A
        ("\uf900", True),  # CJK compatibility ideographs
        ("hello", False),
        ("", False),
        ("，。！？", False),  # full-width punctuation alone is not Chinese text
        ("カタカナ", False),
        ("한국어", False),
        ("123 /goal", False),
    ],
)
def test_is_chinese(text: str, expected: bool) -> None:
    assert is_chinese(text) is expected


# -- the built-in triggers -----------------------------------------------------------------------------
# Each utterance is labelled for both skills: (text, goal-setting triggers, daily-plan triggers).

NEITHER = (False, False)
GOAL_ONLY = (True, False)
PLAN_ONLY = (False, True)

UTTERANCES = [
    # goal setting, English
    ("I want to set a goal", GOAL_ONLY),
    ("Can you help me set a goal?", GOAL_ONLY),
    ("Let's make a new goal", GOAL_ONLY),
    ("I'd like to create a goal for this year", GOAL_ONLY),
    ("help me define my fitness goals", GOAL_ONLY),
    ("Set my goals for the quarter", GOAL_ONLY),
    ("SET A GOAL", GOAL_ONLY),
    # goal setting, Chinese
    ("我想设定一个目标", GOAL_ONLY),
    ("帮我定目标", GOAL_ONLY),
    ("我要立个新目标", GOAL_ONLY),
    ("帮我制定目标", GOAL_ONLY),
    ("设置一个新的目标", GOAL_ONLY),
    ("我想定个目标", GOAL_ONLY),
    # daily plan, English
    ("Help me plan my day", PLAN_ONLY),
    ("plan the day for me", PLAN_ONLY),
    ("Can you plan my week?", PLAN_ONLY),
    ("What should I do today?", PLAN_ONLY),
    ("How should I prioritize tomorrow?", PLAN_ONLY),
    ("HELP ME PLAN MY DAY", PLAN_ONLY),
    # daily plan, Chinese
    ("帮我规划今天", PLAN_ONLY),
    ("帮忙安排一下明天", PLAN_ONLY),
    ("今天该做什么", PLAN_ONLY),
    ("明天应该干什么？", PLAN_ONLY),
    ("帮我计划这周", PLAN_ONLY),
    # ordinary messages, English
    ("hello", NEITHER),
    ("What are your goals?", NEITHER),
    ("My goal is to read more", NEITHER),
    ("I scored a goal in football today", NEITHER),
    ("Goals are overrated", NEITHER),
    ("Did you set the table?", NEITHER),
    ("What should I eat today?", NEITHER),
    ("I made a plan yesterday", NEITHER),
    ("Do you have plans tonight?", NEITHER),
    ("What's the weather like today?", NEITHER),
    ("today I planted tomatoes", NEITHER),
    ("Why is it so hard to set goals?", NEITHER),
    ("Did you plan this?", NEITHER),
    # ordinary messages, Chinese
    ("你好", NEITHER),
    ("你的目标是什么？", NEITHER),
    ("我的目标是跑马拉松", NEITHER),
    ("目标很重要吗", NEITHER),
    ("他们设定了目标吗", NEITHER),
    ("你今天做了什么", NEITHER),
    ("我有一个计划", NEITHER),
    ("今天天气怎么样", NEITHER),
    ("我明天要去上班", NEITHER),
    ("设定目标有什么用？", NEITHER),
    ("你今天做什么呀？", NEITHER),
]


@pytest.mark.parametrize(("text", "expected"), UTTERANCES, ids=[t for t, _ in UTTERANCES])
def test_goal_setting_trigger(text: str, expected: tuple[bool, bool]) -> None:
    match = GOAL_SETTING.matchers.match(text)
    assert (match is not None) is expected[0], f"goal-setting on {text!r}: {match}"
    if match is not None:
        assert match == Match(MatchKind.SEMANTIC, text.strip())


@pytest.mark.parametrize(("text", "expected"), UTTERANCES, ids=[t for t, _ in UTTERANCES])
def test_daily_plan_trigger(text: str, expected: tuple[bool, bool]) -> None:
    match = DAILY_PLAN.matchers.match(text)
    assert (match is not None) is expected[1], f"daily-plan on {text!r}: {match}"
    if match is not None:
        assert match == Match(MatchKind.SEMANTIC, text.strip())


def test_the_labelled_sets_are_large_enough() -> None:
    languages = {(label, is_chinese(text)) for text, label in UTTERANCES}
    assert languages == {(label, zh) for label in (GOAL_ONLY, PLAN_ONLY, NEITHER) for zh in (False, True)}
    assert len(UTTERANCES) >= 40


@pytest.mark.parametrize(
    ("definition", "text", "argument"),
    [
        (GOAL_SETTING, "/goal run a 10k", "run a 10k"),
        (GOAL_SETTING, "/goal", ""),
        (DAILY_PLAN, "/plan", ""),
        (DAILY_PLAN, "/plan tomorrow morning", "tomorrow morning"),
    ],
)
def test_builtin_commands(definition, text: str, argument: str) -> None:
    assert definition.matchers.match(text) == Match(MatchKind.COMMAND, argument)


@pytest.mark.parametrize(
    ("definition", "text"),
    [
        (GOAL_SETTING, "/goals"),
        (GOAL_SETTING, "/plan set a goal"),
        (DAILY_PLAN, "/planning"),
        (DAILY_PLAN, "/goal help me plan my day"),
    ],
)
def test_builtin_commands_do_not_cross(definition, text: str) -> None:
    assert definition.matchers.match(text) is None
