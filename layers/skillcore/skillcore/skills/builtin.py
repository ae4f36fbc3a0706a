"""The built-in skills, assembled once at import time (validated by the first import: a function's cold start, or
the first request of a group that reads them)."""

from __future__ import annotations

from skillcore.skills import goal_check_in, goal_setting, memory_recall
from skillcore.skills.automation import AutomationRegistry
from skillcore.skills.background import BackgroundRegistry
from skillcore.skills.daily_plan import DAILY_PLAN
from skillcore.skills.goal_check_in import GOAL_CHECK_IN_REMINDER
from skillcore.skills.goal_setting import GOAL_SETTING
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS_SKILL
from skillcore.skills.manifest import SkillKind
from skillcore.skills.memory_context import MEMORY_CONTEXT
from skillcore.skills.memory_extraction import MEMORY_EXTRACTION
from skillcore.skills.memory_recall import MEMORY_RECALL
from skillcore.skills.registries import Skills
from skillcore.skills.registry import Registry
from skillcore.skills.tools import ToolRegistry


def builtin_skills() -> Skills:
    return Skills(
        workflows=Registry(SkillKind.WORKFLOW, [GOAL_SETTING]),
        prompts=Registry(SkillKind.PROMPT, [DAILY_PLAN]),
        tools=ToolRegistry([MEMORY_RECALL]),
        contexts=Registry(SkillKind.PROMPT, [MEMORY_CONTEXT]),
        background=BackgroundRegistry([GOAL_CHECK_IN_REMINDER]),
        automations=AutomationRegistry([MEMORY_EXTRACTION]),
        proxied=Registry(SkillKind.TOOL, [HOSTED_WORKFLOWS_SKILL]),
        host_protocols=(memory_recall.HOST_PROTOCOL, goal_check_in.HOST_PROTOCOL, goal_setting.HOST_PROTOCOL),
    )


SKILLS = builtin_skills()
