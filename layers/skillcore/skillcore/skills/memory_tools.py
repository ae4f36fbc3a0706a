"""memory_write and memory_forget: the tools of the memory-extraction automation skill.

Both run through the ToolRunner (schemas, timeout, call cap, idempotency key, audit). The owner and the
agent are never inputs: the runner binds the ports to the run's user and agent, so model output cannot
name another owner's memory. memory_write derives the memory id from owner, agent and the title, so
writing the same fact twice (or retrying a run) updates one memory instead of adding another.
"""

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from skillcore.memory.models import CONTENT_MAX, TITLE_MAX
from skillcore.memory.port import MemoryPorts
from skillcore.skills.automation import AutomationTool


class MemoryWriteInput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    title: str = Field(min_length=1, max_length=TITLE_MAX)
    content: str = Field(min_length=1, max_length=CONTENT_MAX)
    importance: int = Field(default=3, ge=1, le=5)


class MemoryWriteOutput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    memory_id: str
    created: bool


class MemoryForgetInput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    memory_id: str | None = Field(default=None, min_length=1, max_length=64)
    match: str | None = Field(default=None, min_length=1, max_length=200)

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if (self.memory_id is None) == (self.match is None):
            raise ValueError("give exactly one of memory_id or match")
        return self


class MemoryForgetOutput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    memory_id: str | None
    forgotten: bool


def _write(request: MemoryWriteInput, ports: MemoryPorts) -> MemoryWriteOutput:
    assert ports.write_memory is not None
    memory, created = ports.write_memory(request.title, request.content, request.importance)
    return MemoryWriteOutput(memory_id=memory.memory_id, created=created)


def _forget(request: MemoryForgetInput, ports: MemoryPorts) -> MemoryForgetOutput:
    assert ports.forget_memory is not None
    memory = ports.forget_memory(request.memory_id or "", request.match)
    return MemoryForgetOutput(memory_id=memory.memory_id if memory else None, forgotten=memory is not None)


MEMORY_WRITE = AutomationTool(
    tool_id="memory_write",
    description="Save or update one lasting memory about the user (a preference, a name, something to remember).",
    timeout_ms=2000,
    max_calls_per_turn=4,
    input_model=MemoryWriteInput,
    output_model=MemoryWriteOutput,
    execute=_write,
)

MEMORY_FORGET = AutomationTool(
    tool_id="memory_forget",
    description="Forget one saved memory of the user, by its id or by words that match it.",
    timeout_ms=2000,
    max_calls_per_turn=4,
    input_model=MemoryForgetInput,
    output_model=MemoryForgetOutput,
    execute=_forget,
)
