"""goal-check-in-reminder@1.0.0: at the chosen time, the agent asks how the user's goal is going.

The payload is built by the server from the verified agent and its default conversation; the client
names neither the conversation nor the text. The message is a trusted template; the user's note is
quoted inside it as content, never used as an instruction (no model is involved at all).
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillcore.skills.background import BackgroundPorts, BackgroundSkillDefinition, JobTarget
from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel, SkillKind, SkillManifest
from skillcore.skills.protocols import HostProtocol

NOTE_MAX = 500

PROACTIVE_MESSAGE_WRITE = PermissionRequirement(
    code="proactive_message:write", risk_level=RiskLevel.L2, approval_mode=ApprovalMode.PERSISTENT
)


class GoalCheckInPayload(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    agent_id: str = Field(alias="agentId", min_length=1, max_length=64)
    agent_name: str = Field(alias="agentName", min_length=1, max_length=40)
    conversation_id: str = Field(alias="conversationId", min_length=1, max_length=64)
    note: str = Field(default="", max_length=NOTE_MAX)
    # The language of the message: the user's (skillcore/language.py: the note's, else their latest messages in
    # the conversation, else Chinese), fixed when the job is created. A job stored without it is Chinese.
    language: Literal["zh", "en"] = "zh"


OPENING = "我们约定的目标复盘时间到了。"
CLOSING = "现在进展到哪里了？"
DEFAULT_PROMPT = "回顾一下你最近在推进的目标：哪些已经做到了，哪里卡住了？"
OPENING_EN = "It is the time we agreed on to check in on your goal."
CLOSING_EN = "How far along are you now?"
DEFAULT_PROMPT_EN = "Look back at the goal you have been working on: what is done, and where are you stuck?"


def render_message(payload: GoalCheckInPayload) -> str:
    note = " ".join(payload.note.split())
    if payload.language == "en":
        middle = f"What you noted then: “{note}”" if note else DEFAULT_PROMPT_EN
        return f"{OPENING_EN}\n{middle}\n{CLOSING_EN}"
    middle = f"你当时写下的关注点是：「{note}」" if note else DEFAULT_PROMPT
    return f"{OPENING}\n{middle}\n{CLOSING}"


def build_payload(target: JobTarget) -> GoalCheckInPayload:
    return GoalCheckInPayload.model_validate({
        "agentId": target.agent_id, "agentName": target.agent_name, "conversationId": target.conversation_id,
        "note": target.note, "language": target.language,
    })


def execute(payload: GoalCheckInPayload, ports: BackgroundPorts) -> None:
    ports.write_agent_message(render_message(payload))


GOAL_CHECK_IN_REMINDER = BackgroundSkillDefinition(
    manifest=SkillManifest(
        skill_id="goal-check-in-reminder",
        version="1.0.0",
        kind=SkillKind.BACKGROUND,
        name="Goal check-in reminder",
        name_zh="目标复盘提醒",
        description="At a time you choose, your agent sends one message asking how your goal is going.",
        permissions=(PROACTIVE_MESSAGE_WRITE,),
    ),
    payload_model=GoalCheckInPayload,
    max_attempts=3,
    execute=execute,
    build_payload=build_payload,
)

HOST_PROTOCOL = HostProtocol(
    manifest=GOAL_CHECK_IN_REMINDER.manifest,
    display_name="目标复盘提醒",
    when_to_use=("提醒我复盘目标", "到时候问问我进展", "remind me to check in on my goal"),
    objective="在用户选定的时间，让智能体主动发一条消息，询问用户目标的进展。",
    steps=(
        "和用户确认是哪个智能体（agentId）、什么时间提醒（带时区偏移的时间，例如 2026-12-04T09:00:00+08:00），"
        "以及可选的一句关注点（note）。时间不明确时先问用户，不要猜。",
        "调用 skillcore 的 MCP 工具 `schedule_goal_check_in`，参数 `agentId`、`runAt` 和可选的 `note`。"
        "如果返回权限错误（permission_required）或能力已关闭（skill_disabled），告诉用户需要先在 Skills 页面开启并授权，然后停止。",
        "把返回的提醒时间告诉用户。",
    ),
    completion_criteria="提醒已创建，用户知道它会在什么时间由哪个智能体发出。",
)
