"""HostedFunction: hosted external workflows, the /rpc/hosted-endpoints routes and the /rpc/approvals routes
(per-operation approvals of hosted workflow calls; skillcore/api/route_table.py). The only HTTP function that
calls out to user-given hosts (skillcore/egress/) and imports the MCP client. Wired once per cold start by
skillcore/bootstrap.py."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore import bootstrap
from skillcore.observability import logger, metrics

root, routes = bootstrap.hosted()
db = root.db  # the function's DynamoDB client (the local stack guards it with the function's IAM policy)
budget = root.budget

init_phase.end()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    with budget.invocation(context):
        return routes.resolve(event, context)
