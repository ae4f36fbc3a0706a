"""ChatTurnFunction: POST /rpc/conversations/{conversationId}/messages, the unified executor.

It may call the tools of the user's hosted endpoints (skillcore/hosted/chat.py): the egress settings and the
secrets key are built on the first hosted call, and the MCP client is imported only then, so a cold start
loads neither."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

import os
from datetime import datetime
from functools import cache
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.api import routes_chat
from skillcore.api.app import new_app
from skillcore.chat.service import ChatDeps
from skillcore.clock import system_clock
from skillcore.db.dynamo import make_db
from skillcore.executor.assembly import build_executor
from skillcore.executor.executor import Executor
from skillcore.hosted.chat import HostedChatBranch
from skillcore.hosted.chat_words import plan_offline
from skillcore.invocation import InvocationBudget
from skillcore.model.factory import make_model
from skillcore.observability import logger, metrics
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS

settings = Settings.from_env()
budget = InvocationBudget()  # a store attempt, a hosted tool's call: each ends before the turn's invocation does
db = make_db(settings, time_left=budget.seconds_left)
model = make_model(settings, tool_planner=plan_offline)  # offline: a hosted tool only when `/hosted` names it


@cache
def hosted_deps() -> Any:
    from skillcore.egress.settings import EgressSettings
    from skillcore.hosted import secrets
    from skillcore.hosted.service import HostedDeps
    from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS

    keys = secrets.keys_from_env(os.environ, local=settings.local, region=settings.region)
    return HostedDeps(db=db, keys=keys, egress=EgressSettings.from_env(), skill=HOSTED_WORKFLOWS,
                      time_left=budget.seconds_left)


hosted_branch = HostedChatBranch(db, hosted_deps)


def executor_for(now: datetime) -> Executor:
    return build_executor(SKILLS, model, db, now=now, clock=system_clock, max_tokens=settings.bedrock_max_tokens,
                          hosted_branch=hosted_branch)


routes = new_app()
routes_chat.register(
    routes, ChatDeps(db=db, executor_for=executor_for, clock=system_clock, history_messages=settings.history_messages)
)

init_phase.end()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    with budget.invocation(context):
        return routes.resolve(event, context)
