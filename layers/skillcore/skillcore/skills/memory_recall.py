"""memory-recall@1.0.0: the first tool skill. Reads the current agent's active memories, read only.

With a question it returns the memories that match it; with none (a bare `/memory-recall`) the agent's most
important recent memories, under the same cap, through the same PolicyGate and ToolRunner path.
"""

from pydantic import BaseModel, ConfigDict, Field

from skillcore.memory.port import MemoryPorts
from skillcore.memory.retrieval import MAX_RESULTS, most_important, rank
from skillcore.model.port import BlockKind, SystemBlock
from skillcore.skills.manifest import (
    ApprovalMode,
    ConversationScope,
    PermissionRequirement,
    RiskLevel,
    SkillKind,
    SkillManifest,
)
from skillcore.skills.matchers import MatchKind, SkillMatchers, patterns
from skillcore.skills.protocols import HostProtocol
from skillcore.skills.tools import ToolRequest, ToolSkillDefinition

MEMORY_READ = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT)


class RecallInput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    question: str = Field(default="", max_length=500)  # empty: no topic, recall the most important


class RecalledMemory(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    memory_id: str
    title: str
    content: str
    importance: int = Field(ge=1, le=5)


class RecallOutput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    memories: tuple[RecalledMemory, ...] = Field(max_length=MAX_RESULTS)
    browsed: bool = False  # no question was asked: these are the most important memories, not matches


def build_input(request: ToolRequest) -> dict[str, str]:
    question = request.match.argument if request.match.kind is MatchKind.COMMAND else request.text
    return {"question": question.strip()}


def execute(request: RecallInput, ports: MemoryPorts) -> RecallOutput:
    browsed = not request.question.strip()
    memories = ports.list_active_memories()
    found = most_important(memories, MAX_RESULTS) if browsed else rank(request.question, memories, limit=MAX_RESULTS)
    return RecallOutput(browsed=browsed, memories=tuple(
        RecalledMemory(memory_id=m.memory_id, title=m.title, content=m.content, importance=m.importance) for m in found
    ))


NO_MATCH = (
    "memory-recall found no stored memory that answers this. Say plainly that you cannot recall it exactly. "
    "Do not invent, guess or imply any memory."
)
FOUND = (
    "memory-recall found these memories of the user, stored earlier with this agent. Answer using only them; "
    "if they do not answer the question, say you cannot recall it exactly. Never add memories that are not listed."
)


BROWSED = (
    "The user asked what you remember, without a topic. memory-recall returned these memories of the user, the "
    "most important first, stored earlier with this agent. Tell the user what you remember using only them. "
    "Never add memories that are not listed."
)
NONE_STORED = (
    "The user asked what you remember, and memory-recall found no stored memory with this agent. Say plainly "
    "that you do not remember anything specific yet. Do not invent, guess or imply any memory."
)


def build_system_instruction(output: RecallOutput) -> SystemBlock:
    if not output.memories:
        return SystemBlock(BlockKind.RECALL_EMPTY, NONE_STORED if output.browsed else NO_MATCH, source="memory-recall")
    return SystemBlock(BlockKind.RECALL, BROWSED if output.browsed else FOUND, source="memory-recall",
                       facts=tuple(m.content for m in output.memories))


MEMORY_RECALL = ToolSkillDefinition(
    manifest=SkillManifest(
        skill_id="memory-recall",
        version="1.0.0",
        kind=SkillKind.TOOL,
        name="Memory recall",
        name_zh="记忆检索",
        description="When you ask whether your agent remembers something, searches that agent's saved memories.",
        permissions=(MEMORY_READ,),
        scope=ConversationScope.SINGLE_CHAT,
    ),
    tool_id="agent-memory.search",
    timeout_ms=2000,
    max_calls_per_turn=1,
    input_model=RecallInput,
    output_model=RecallOutput,
    matchers=SkillMatchers(
        commands=("/memory-recall",),
        patterns=patterns(
            r"(你|您)?还记得.{0,40}(吗|么|嘛|不)",
            r"(你|您)?记不记得",
            r"(你|您)记得我.{0,40}(吗|么|嘛)",
            r"我(之前|以前|上次)(跟你|和你|对你)?(说|讲|提)过.{0,30}(吗|什么|哪)",
            r"你知道我(喜欢|爱|讨厌|不喜欢)什么",
            r"\bdo you (still )?remember\b",
            r"\bdid i (ever )?(tell|mention|say)\b.{0,60}\b(you|to you)\b",
            r"\bwhat do you (know|remember) about me\b",
            r"\bremember (what|when|where|who|my|me|that i)\b.{0,80}\?",
        ),
    ),
    build_input=build_input,
    execute=execute,
    build_system_instruction=build_system_instruction,
    description="Search this agent's saved memories of the user for the question.",
    result_count=lambda output: len(output.memories),
)

HOST_PROTOCOL = HostProtocol(
    manifest=MEMORY_RECALL.manifest,
    display_name="记忆回想",
    when_to_use=("你还记得吗", "我之前说过什么", "do you remember"),
    objective="在用户问起以前告诉过智能体的事情时，只根据该智能体保存的记忆回答。",
    steps=(
        "确定用户要问的是哪个智能体（agentId）和什么问题；不清楚时先问用户，不要猜。",
        "调用 skillcore 的 MCP 工具 `memory_recall`，参数 `agentId` 和 `question`（用户的问题原文）。"
        "如果返回权限错误（permission_required）或能力已关闭（skill_disabled），告诉用户需要先在 Skills 页面开启并授权，然后停止。",
        "只用返回的记忆回答；没有匹配的记忆时，明确说记不清，不要编造、猜测或暗示任何记忆。",
    ),
    completion_criteria="用户得到了只基于已保存记忆的回答，或被明确告知没有相关记忆。",
)
