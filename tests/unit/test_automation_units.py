"""Automation pieces that need no AWS: the config schema, the offline extractor, the memory tools, visibility."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from skillcore.api.requests.automation import AutomationConfigBody, CreateAutomationJob
from skillcore.automation.models import AutomationConfig
from skillcore.automation.offline_extraction import plan
from skillcore.conversations.message_store import to_message_item
from skillcore.conversations.models import Message, Origin, Role
from skillcore.memory.models import MemoryItem, MemorySource, MemoryStatus
from skillcore.memory.port import MemoryPorts
from skillcore.model.port import BlockKind, ChatMessage, ModelRequest, SystemBlock, ToolSpec
from skillcore.skills.builtin import SKILLS
from skillcore.skills.memory_extraction import MEMORY_EXTRACTION
from skillcore.skills.memory_tools import MEMORY_FORGET, MEMORY_WRITE, MemoryForgetInput, MemoryWriteInput

T = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)


# -- config schema --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "config",
    [
        {"prompt": "", "tools": []},
        {"prompt": "   ", "tools": []},
        {"prompt": "x" * 2001, "tools": []},
        {"prompt": "ok", "tools": [], "temperature": 0.2},
        {"prompt": "ok"},
        {"tools": ["memory_write"]},
    ],
    ids=["empty-prompt", "blank-prompt", "long-prompt", "unknown-field", "no-tools", "no-prompt"],
)
def test_config_rejects(config):
    with pytest.raises(ValidationError):
        AutomationConfigBody.model_validate(config)


def test_config_accepts_the_default_shape():
    body = AutomationConfigBody.model_validate({"prompt": "提取记忆", "tools": ["memory_write", "memory_forget"]})
    assert AutomationConfig(prompt=body.prompt, tools=tuple(body.tools)).tools == ("memory_write", "memory_forget")
    with pytest.raises(TypeError, match="Unexpected keyword argument 'extra'"):
        AutomationConfig(prompt="p", tools=(), extra=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"prompt": "", "tools": ()}, "automation prompt must be 1 to 2000 characters"),
        ({"prompt": "x" * 2001, "tools": ()}, "automation prompt must be 1 to 2000 characters"),
        ({"prompt": "p", "tools": "memory_write"}, "automation tools must be a list of at most 8"),
        ({"prompt": "p", "tools": ("t",) * 9}, "automation tools must be a list of at most 8"),
        ({"prompt": "p", "tools": (1,)}, "automation tools must be a list of at most 8"),
    ],
)
def test_the_stored_config_checks_itself(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AutomationConfig(**config)


def test_a_stored_config_read_back_as_lists_becomes_tuples() -> None:
    assert AutomationConfig(prompt="p", tools=["memory_write"]).tools == ("memory_write",)  # type: ignore[arg-type]


def test_unknown_tools_are_not_registered_and_the_allowlist_is_a_subset():
    names = SKILLS.tool_names()
    assert {"memory_write", "memory_forget", "agent-memory.search"} <= names and "shell" not in names
    allowed, refused = MEMORY_EXTRACTION.allowed(("memory_write", "agent-memory.search", "memory_forget"))
    assert [t.tool_id for t in allowed] == ["memory_write", "memory_forget"] and refused == ("agent-memory.search",)


def test_job_body_needs_weekday_only_as_a_number():
    body = {"title": "t", "scheduleType": "weekly", "localTime": "08:00", "weekday": "3",
            "config": {"prompt": "p", "tools": []}}
    with pytest.raises(ValidationError):
        CreateAutomationJob.model_validate(body)


# -- the offline extractor --------------------------------------------------------------------------------
def request(*lines: str, tools=("memory_write", "memory_forget")) -> ModelRequest:
    return ModelRequest(
        system=(SystemBlock(BlockKind.TRANSCRIPT, "data", facts=lines),),
        messages=(ChatMessage("user", "extract"),),
        tools=tuple(ToolSpec(t, "", {}) for t in tools),
    )


def test_extractor_writes_and_forgets_from_user_lines_only():
    calls = plan(request(
        "user: 我喜欢爬山。我叫小林", "assistant: 我喜欢你说的这些", "user: I like green tea. My name is Lin",
        "user: 记住周五要交报告", "user: 忘记我喜欢咖啡", "user: forget that I like jazz", "user: 今天天气不错",
    ))
    writes = [(c.name, c.input["content"]) for c in calls if c.name == "memory_write"]
    forgets = [c.input["match"] for c in calls if c.name == "memory_forget"]
    assert [w[1] for w in writes] == ["我喜欢爬山", "我叫小林", "I like green tea", "My name is Lin"]
    assert forgets == ["我喜欢咖啡", "I like jazz"]
    assert all(c.input["title"].split(": ")[0] in {"喜欢", "名字", "likes", "name"} for c in calls if c.name == "memory_write")


def test_extractor_caps_calls_and_respects_offered_tools():
    lines = [f"user: 我喜欢运动{i}" for i in range(10)]
    assert len(plan(request(*lines))) == 4
    assert plan(request("user: 忘记我喜欢咖啡", tools=("memory_write",))) == ()
    assert plan(request("user: 我喜欢爬山", "user: 我喜欢爬山")) == plan(request("user: 我喜欢爬山"))


# -- the memory tools (owner and agent come from the ports, never from the input) ------------------------
def memory(mid: str, content: str) -> MemoryItem:
    return MemoryItem(memory_id=mid, user_id="u1", agent_id="a1", title=content[:10], content=content, importance=3,
                      status=MemoryStatus.ACTIVE, source=MemorySource.AUTOMATION, created_at=T, updated_at=T)


def test_tool_inputs_have_no_owner_fields():
    for model in (MemoryWriteInput, MemoryForgetInput):
        assert not {"user_id", "userId", "owner", "agent_id", "agentId"} & set(model.model_fields)
    with pytest.raises(ValidationError):
        MemoryWriteInput.model_validate({"title": "t", "content": "c", "user_id": "u2"})
    with pytest.raises(ValidationError):
        MemoryForgetInput.model_validate({})
    with pytest.raises(ValidationError):
        MemoryForgetInput.model_validate({"memory_id": "m", "match": "x"})


def test_tools_only_call_their_bound_ports():
    seen = []
    ports = MemoryPorts(
        list_active_memories=lambda: [],
        write_memory=lambda title, content, importance: (seen.append(("write", title)) or (memory("m1", content), True)),
        forget_memory=lambda memory_id, match: seen.append(("forget", memory_id, match)) or None,
    )
    out = MEMORY_WRITE.execute(MemoryWriteInput(title="likes: tea", content="I like tea"), ports)
    assert out.memory_id == "m1" and out.created is True
    out = MEMORY_FORGET.execute(MemoryForgetInput(match="coffee"), ports)
    assert out.forgotten is False and out.memory_id is None
    assert seen == [("write", "likes: tea"), ("forget", "", "coffee")]


# -- visibility ----------------------------------------------------------------------------------------------
def test_hidden_messages_never_enter_the_visible_index():
    def msg(hidden: bool) -> Message:
        return Message(message_id="m", conversation_id="c", role=Role.USER, agent_id=None, text="prompt",
                       origin=Origin.AUTOMATION, hidden_from_user=hidden, created_at=T)

    assert "visibleSeq" not in to_message_item(msg(True), "u1")
    assert "visibleSeq" in to_message_item(msg(False), "u1")
    assert to_message_item(msg(True), "u1")["seq"] == to_message_item(msg(False), "u1")["seq"]
