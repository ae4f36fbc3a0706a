"""daily-plan@1.0.0: a prompt skill that turns "help me plan my day" into a short, prioritised plan."""

from __future__ import annotations

from skillcore.skills.definitions import PromptSkillDefinition
from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.matchers import SkillMatchers, patterns

DAILY_PLAN = PromptSkillDefinition(
    manifest=SkillManifest(
        skill_id="daily-plan",
        version="1.0.0",
        kind=SkillKind.PROMPT,
        name="Daily plan",
        name_zh="每日计划",
        description="When you ask for help planning your day, answers with at most three prioritised, concrete steps.",
    ),
    matchers=SkillMatchers(
        commands=("/plan",),
        patterns=patterns(
            r"\bplan (out )?(my|the) (day|morning|afternoon|evening|week|tomorrow)\b",
            r"\bplan (my |the )?(today|tomorrow)\b",
            r"\bhelp me plan (my |the )?(day|today|tomorrow|morning|week)\b",
            r"\b(what should i|how should i) (do|prioriti[sz]e)\b.*\b(today|tomorrow)\b",
            r"(帮我|帮忙|请)(规划|计划|安排)(一下)?(今天|明天|这周|本周|一天|我的一天)",
            r"(规划|安排)(一下)?(今天|明天|我的一天)",
            r"^我?(今天|明天)(该|应该)(做什么|干什么|怎么安排)",
            r"(今天|明天)(应该|该)?怎么安排",
        ),
    ),
    instruction=(
        "Skill daily-plan: the user wants help planning. Reply with a plan of at most three steps, most important "
        "first, each one concrete and doable today, with a rough time for each. If you do not know what the user "
        "has to do, ask exactly one short question instead of inventing tasks. Keep the user's language."
    ),
)
