"""ChatTurnFunction: POST /rpc/conversations/{conversationId}/messages, the unified executor."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

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
from skillcore.observability import logger, metrics
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

init_phase.end()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return routes.resolve(event, context)
