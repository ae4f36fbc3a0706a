"""memory-extraction@1.0.0: the automation skill behind the default daily memory job.

It guards the memory writes of automation runs (`memory:write`, L2, persistent), names the server's
allowlist of tools a run may use (a job's `config.tools` is intersected with it at run time) and offers
the default daily memory job every new profile gets.
"""

from __future__ import annotations

from skillcore.skills.automation import AutomationSkillDefinition, DefaultJob
from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel, SkillKind, SkillManifest
from skillcore.skills.memory_tools import MEMORY_FORGET, MEMORY_WRITE

MEMORY_WRITE_PERMISSION = PermissionRequirement(
    code="memory:write", risk_level=RiskLevel.L2, approval_mode=ApprovalMode.PERSISTENT
)

DEFAULT_TITLE = "每日记忆整理"
DEFAULT_PROMPT = (
    "请回顾今天和昨天的对话，提取关于用户的稳定信息（喜好、厌恶、称呼、重要的人和事、用户明确要求记住的内容），"
    "用 memory_write 写入或更新；用户明确要求忘记的内容，用 memory_forget 忘记。"
    "只记录用户本人说过的事实，不要推测，不要记录一次性的闲聊。最后用一两句话总结做了什么。"
)
DEFAULT_TOOLS = (MEMORY_WRITE.tool_id, MEMORY_FORGET.tool_id)
DEFAULT_LOCAL_TIME = "10:00"


MEMORY_EXTRACTION = AutomationSkillDefinition(
    manifest=SkillManifest(
        skill_id="memory-extraction",
        version="1.0.0",
        kind=SkillKind.AUTOMATION,
        name="Memory extraction",
        name_zh="记忆提炼",
        description="Every day, your agents save lasting things you told them (and forget what you asked them to).",
        permissions=(MEMORY_WRITE_PERMISSION,),
    ),
    allowlist=(MEMORY_WRITE, MEMORY_FORGET),
    default_job=DefaultJob(title=DEFAULT_TITLE, prompt=DEFAULT_PROMPT, tools=DEFAULT_TOOLS, local_time=DEFAULT_LOCAL_TIME),
)
