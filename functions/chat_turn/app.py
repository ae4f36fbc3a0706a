"""ChatTurnFunction: POST /rpc/conversations/{conversationId}/messages, the unified executor."""

import gc

# Init allocates over 100k long-lived objects and frees none: the cyclic collector would traverse them again
# and again while the modules load (~50 ms of a cold start, measured by `make bench`). It is paused for the
# init and re-enabled at the end, after freezing what init built so later collections skip it too.
gc.disable()

from datetime import datetime

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.api import routes_chat
from skillcore.api.app import new_app
from skillcore.clock import system_clock
from skillcore.db.dynamo import make_db
from skillcore.executor.assembly import build_executor
from skillcore.executor.executor import Executor
from skillcore.model.factory import make_model
from skillcore.observability import logger
from skillcore.services.chat import ChatDeps
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS

settings = Settings.from_env()
db = make_db(settings)
model = make_model(settings)


def executor_for(now: datetime) -> Executor:
    return build_executor(SKILLS, model, db, now=now, clock=system_clock, max_tokens=settings.bedrock_max_tokens)


routes = new_app()
routes_chat.register(
    routes, ChatDeps(db=db, executor_for=executor_for, clock=system_clock, history_messages=settings.history_messages)
)

# Init is done: what it built lives as long as the process, so later collections need not traverse it.
gc.freeze()
gc.enable()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return routes.resolve(event, context)
