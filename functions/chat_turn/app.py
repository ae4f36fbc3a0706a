"""ChatTurnFunction: POST /rpc/conversations/{conversationId}/messages, the unified executor
(skillcore/api/route_table.py), wired once per cold start by skillcore/bootstrap.py.

It may call the tools of the user's hosted endpoints (skillcore/hosted/chat.py): the egress settings and the
secrets key are built on the first hosted call, and the MCP client is imported only then, so a cold start
loads neither."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore import bootstrap
from skillcore.observability import logger, metrics

root, routes = bootstrap.chat_turn()
db = root.db  # the function's DynamoDB client (the local stack guards it with the function's IAM policy)
budget = root.budget  # a hosted tool's call ends before the turn's invocation does

init_phase.end()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    with budget.invocation(context):
        return routes.resolve(event, context)
