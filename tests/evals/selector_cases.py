"""Labelled selector cases: (utterance, conversation kind, disabled skills, expected skill or None = plain).

They cover the seed's selector evals: explicit /memory-recall, semantic recall triggers in Chinese and
English, a disabled skill never triggers, a single-chat tool never triggers in a group chat, ordinary
questions trigger nothing; plus the workflow and prompt skills that share the executor.
"""

from __future__ import annotations

S, G = "single", "group"
NONE: tuple[str, ...] = ()
RECALL = "memory-recall"
GOAL = "goal-setting"
PLAN = "daily-plan"

CASES: list[tuple[str, str, tuple[str, ...], str | None]] = [
    # explicit commands
    ("/memory-recall 我喜欢什么", S, NONE, RECALL),
    ("/memory-recall what is my sister's name", S, NONE, RECALL),
    ("/memory-recall", S, NONE, RECALL),
    ("/goal", S, NONE, GOAL),
    ("/goal run a half marathon", S, NONE, GOAL),
    ("/plan", S, NONE, PLAN),
    # semantic recall, Chinese
    ("你还记得我喜欢什么吗", S, NONE, RECALL),
    ("你还记得我的生日吗？", S, NONE, RECALL),
    ("还记得我上次说的那家餐厅吗", S, NONE, RECALL),
    ("你记不记得我养的猫叫什么", S, NONE, RECALL),
    ("你记得我妹妹叫什么名字吗", S, NONE, RECALL),
    ("我之前跟你说过我在哪工作吗", S, NONE, RECALL),
    ("你知道我喜欢什么吗", S, NONE, RECALL),
    ("您还记得我最喜欢的电影吗", S, NONE, RECALL),
    # semantic recall, English
    ("Do you remember what I like?", S, NONE, RECALL),
    ("do you still remember my dog's name?", S, NONE, RECALL),
    ("Did I ever tell you about my job?", S, NONE, RECALL),
    ("What do you know about me?", S, NONE, RECALL),
    ("Remember what I said about my trip?", S, NONE, RECALL),
    ("Do you remember when my exam is?", S, NONE, RECALL),
    # disabled skill: never triggers
    ("你还记得我喜欢什么吗", S, (RECALL,), None),
    ("/memory-recall 我喜欢什么", S, (RECALL,), None),
    ("Do you remember what I like?", S, (RECALL,), None),
    ("/goal", S, (GOAL,), None),
    ("help me plan my day", S, (PLAN,), None),
    # group chat: a single_chat tool never runs there; others still may
    ("你还记得我喜欢什么吗", G, NONE, None),
    ("/memory-recall 我喜欢什么", G, NONE, None),
    ("Do you remember what I like?", G, NONE, None),
    ("/goal", G, NONE, GOAL),
    # workflow and prompt triggers
    ("I want to set a goal", S, NONE, GOAL),
    ("Can you help me set a new goal?", S, NONE, GOAL),
    ("帮我定个目标", S, NONE, GOAL),
    ("我想设定一个新目标", S, NONE, GOAL),
    ("Help me plan my day", S, NONE, PLAN),
    ("Can you plan my tomorrow?", S, NONE, PLAN),
    ("帮我规划一下今天", S, NONE, PLAN),
    ("明天应该怎么安排", S, NONE, PLAN),
    # ordinary messages: nothing triggers
    ("今天天气怎么样", S, NONE, None),
    ("我喜欢爬山", S, NONE, None),
    ("你好呀", S, NONE, None),
    ("我今天有点累", S, NONE, None),
    ("记得带伞", S, NONE, None),
    ("What's the capital of France?", S, NONE, None),
    ("I remember my first bike.", S, NONE, None),
    ("Remember to drink water!", S, NONE, None),
    ("My goal for today was to rest.", S, NONE, None),
    ("Tell me a joke", S, NONE, None),
    ("How are you?", S, NONE, None),
    ("What is a good plan for a garden?", S, NONE, None),
    ("/unknown-command hello", S, NONE, None),
    ("我记得你说过要早睡", S, NONE, None),
    ("这个目标太难了", S, NONE, None),
]
