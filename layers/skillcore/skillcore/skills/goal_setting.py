"""goal-setting@1.0.0: a workflow that asks for a goal, then a deadline, then confirms and summarises.

Every reply is a server template; the user's words appear in it only as quoted content.
"""

from __future__ import annotations

import re

from skillcore.conversations.models import WorkflowSession
from skillcore.skills.definitions import WorkflowSkillDefinition, WorkflowTransition
from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.matchers import SkillMatchers, patterns
from skillcore.skills.protocols import HostProtocol

ASK_GOAL = "ask_goal"
ASK_DEADLINE = "ask_deadline"
CONFIRM = "confirm"
DONE = "done"

MAX_SLOT_CHARS = 200
LANG = "lang"

# Compiled on first use (re's cache), like the skills' triggers.
_YES = r"^\s*(y|yes|yep|ok|okay|sure|confirm|correct|是|是的|对|对的|好|好的|确认|没错|可以)\s*[.!。！]*\s*$"
_NO = r"^\s*(n|no|nope|wrong|不|不是|不对|错了|重来|重新)\s*[.!。！]*\s*$"

_TEXT = {
    "ask_goal": ("What goal would you like to set? Tell me in one sentence.", "你想设定一个什么目标？用一句话告诉我吧。"),
    "ask_deadline": ("Got it: “{goal}”. By when do you want to reach it?", "好的：“{goal}”。你希望什么时候完成？"),
    "confirm": (
        "Let me confirm: goal “{goal}”, deadline “{deadline}”. Is that right? (yes / no)",
        "确认一下：目标“{goal}”，截止时间“{deadline}”。对吗？（是 / 不是）",
    ),
    "confirm_again": ("Please answer yes or no: goal “{goal}”, deadline “{deadline}”?", "请回答“是”或“不是”：目标“{goal}”，截止时间“{deadline}”？"),
    "restart": ("No problem, let's start over. What goal would you like to set?", "没关系，我们重新来。你想设定一个什么目标？"),
    "summary": (
        "Your goal is set.\nGoal: “{goal}”\nDeadline: “{deadline}”\nSmall steps count. I'm here whenever you want to review progress.",
        "目标已设定。\n目标：“{goal}”\n截止时间：“{deadline}”\n一步一步来，想复盘进展时随时找我。",
    ),
    "cancelled": ("Okay, goal setting is cancelled.", "好的，已取消设定目标。"),
}


def _say(key: str, chinese: bool, **slots: str) -> str:
    return _TEXT[key][1 if chinese else 0].format(**slots)


def _slot(text: str) -> str:
    cleaned = " ".join(text.split())
    return cleaned[:MAX_SLOT_CHARS].rstrip()


class GoalSettingHandler:
    def start(self, argument: str, *, chinese: bool) -> WorkflowTransition:
        lang = {LANG: "zh" if chinese else "en"}
        if argument:  # `/goal run a 10k` already names the goal
            goal = _slot(argument)
            return WorkflowTransition(_say("ask_deadline", chinese, goal=goal), ASK_DEADLINE, {**lang, "goal": goal})
        return WorkflowTransition(_say("ask_goal", chinese), ASK_GOAL, lang)

    def advance(self, session: WorkflowSession, text: str, *, chinese: bool) -> WorkflowTransition:
        slots = dict(session.slots)
        # The session keeps the language it started in; a Chinese message switches it to Chinese.
        if chinese:
            slots[LANG] = "zh"
        chinese = slots.get(LANG) == "zh"
        if text.strip().lower() in ("/cancel", "取消"):
            return WorkflowTransition(_say("cancelled", chinese), DONE, slots, finished=True, cancelled=True)
        if session.step == ASK_GOAL:
            slots["goal"] = _slot(text)
            return WorkflowTransition(_say("ask_deadline", chinese, goal=slots["goal"]), ASK_DEADLINE, slots)
        if session.step == ASK_DEADLINE:
            slots["deadline"] = _slot(text)
            return WorkflowTransition(_say("confirm", chinese, **slots), CONFIRM, slots)
        if session.step == CONFIRM:
            if re.match(_YES, text, re.IGNORECASE):
                return WorkflowTransition(_say("summary", chinese, **slots), DONE, slots, finished=True)
            if re.match(_NO, text, re.IGNORECASE):
                return WorkflowTransition(_say("restart", chinese), ASK_GOAL, {LANG: slots.get(LANG, "en")})
            return WorkflowTransition(_say("confirm_again", chinese, **slots), CONFIRM, slots)
        # An unknown step (a definition changed under a live session): start again rather than guess.
        return WorkflowTransition(_say("restart", chinese), ASK_GOAL, {LANG: slots.get(LANG, "en")})


GOAL_SETTING = WorkflowSkillDefinition(
    manifest=SkillManifest(
        skill_id="goal-setting",
        version="1.0.0",
        kind=SkillKind.WORKFLOW,
        name="Goal setting",
        name_zh="目标设定",
        description="Guides you through setting a goal: what it is, by when, then a confirmed summary.",
    ),
    matchers=SkillMatchers(
        commands=("/goal",),
        patterns=patterns(
            r"\b(i want|i'd like|i would like|let's|let us|help me|can you help me|could you help me|please help me)"
            r"( to)? (set|make|create|define) (up )?(a |my |an? new |some )?([a-z-]+ ){0,2}goals?\b",
            r"^\s*(set|create|define) (a |my |an? new )?([a-z-]+ )?goals?\b",
            r"(我想|我要|想要|帮我|请帮我|帮忙|我们来|来)(一起)?(设定|设置|定|制定|立)(一个|个|下)?(新的?)?目标",
            r"^(设定|设置|制定|定)(一个|个)(新的?)?目标",
        ),
    ),
    handler=GoalSettingHandler(),
)

HOST_PROTOCOL = HostProtocol(
    manifest=GOAL_SETTING.manifest,
    display_name="设定目标",
    when_to_use=("帮我设定一个目标", "我想定个目标", "help me set a goal"),
    objective="和用户一起把一个目标说清楚：目标是什么、什么时候完成，并得到用户确认。",
    steps=(
        "问用户想设定什么目标，请他用一句话说明。",
        "问用户希望什么时候完成。",
        "复述目标和截止时间，请用户回答“是”或“不是”；回答“不是”就从第 1 步重新开始。",
        "用户确认后，给出简短的总结：目标、截止时间，以及一句鼓励。",
    ),
    completion_criteria="用户确认了目标和截止时间，并收到了总结；用户说“取消”时立即结束。",
)
