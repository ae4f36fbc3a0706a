"""MCP tools over the agent's memories and background jobs (docs/contract.md "The MCP face").

`schedule_goal_check_in` is `POST /rpc/skills/background-jobs` for the goal check-in skill (the same service,
checks, errors and audit); `memory_recall` runs the memory recall tool skill under its grant, through the
same PolicyGate and ToolRunner as a chat turn (tools/service.py).
"""

from __future__ import annotations

from skillcore.api import errors as e
from skillcore.api.app import Caller
from skillcore.api.requests.tools import MemoryRecallArguments, ScheduleGoalCheckInArguments
from skillcore.api.routes_skills import SkillDeps
from skillcore.api.toolbox import Toolbox
from skillcore.api.views import jobs as job_views
from skillcore.api.views import tools as tool_views
from skillcore.background import service as background
from skillcore.limits.models import RateClass
from skillcore.skills.goal_check_in import GOAL_CHECK_IN_REMINDER
from skillcore.skills.memory_recall import MEMORY_RECALL, RecallOutput
from skillcore.tools.service import ToolCallDeps, call_tool_skill


def register(toolbox: Toolbox, deps: SkillDeps) -> None:
    calls = ToolCallDeps(db=deps.db, clock=deps.clock)

    @toolbox.tool("memory_recall", arguments=MemoryRecallArguments,
                  errors=(e.AgentNotFound, e.SkillDisabled, e.PermissionRequired, e.GrantScopeMismatch))
    def memory_recall(caller: Caller, arguments: MemoryRecallArguments) -> tool_views.MemoryRecall:
        """Search one of your agents' saved memories of you for a question (an empty question lists the most
        important ones). Needs the memory:read grant of the memory recall skill; answers only stored
        memories, never guesses."""
        output = call_tool_skill(calls, MEMORY_RECALL, caller.user_id, agent_id=arguments.agent_id,
                                 raw_input={"question": arguments.question})
        assert isinstance(output, RecallOutput)
        return tool_views.memory_recall(output)

    @toolbox.tool("schedule_goal_check_in", arguments=ScheduleGoalCheckInArguments,
                  errors=(e.SkillNotFound, e.AgentNotFound, e.SkillDisabled, e.PermissionRequired,
                          e.GrantScopeMismatch, e.RunAtOutOfRange, e.ConcurrentUpdate), rate=RateClass.WRITES)
    def schedule_goal_check_in(caller: Caller, arguments: ScheduleGoalCheckInArguments) -> job_views.BackgroundJob:
        """Schedule a goal check-in: at runAt (1 minute to 1 year ahead, with an offset) the agent writes a
        check-in message into its chat with you, quoting the optional note. Needs the skill's
        proactive_message:write grant."""
        job = background.create_job(
            deps.db, deps.skills, caller.user_id, skill_id=GOAL_CHECK_IN_REMINDER.manifest.skill_id,
            agent_id=arguments.agent_id, run_at=arguments.run_at, note=arguments.note, now=deps.clock(),
        )
        return job_views.background_job(job)
