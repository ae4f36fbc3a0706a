"""Argument models of the MCP tools (API.md section 4): strict, camelCase, like the route bodies."""

from pydantic import AwareDatetime, Field

from skillcore.api.requests import Id, Strict


class MemoryRecallArguments(Strict):
    agent_id: Id
    # Empty: no topic, the agent's most important memories (the tool skill's own input allows the same).
    question: str = Field(max_length=500)


class ScheduleGoalCheckInArguments(Strict):
    agent_id: Id
    run_at: AwareDatetime
    note: str = Field(default="", max_length=500)
