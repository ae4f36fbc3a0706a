"""McpFunction: POST /mcp, skillcore's MCP face for agent hosts (docs/contract.md "The MCP face").

Its tools (skillcore/api/route_table.py) are wired once per cold start by skillcore/bootstrap.py, each a thin
shell over the same service function as its HTTP route (skillcore/api/tools_*.py); each invocation serves one
stateless Streamable HTTP exchange (mcp_face.py).
"""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mcp_face import build_server, serve

from skillcore import VERSION, bootstrap
from skillcore.api import http
from skillcore.api.errors import answer
from skillcore.errors import Unauthenticated
from skillcore.observability import logger, metrics

root, toolbox = bootstrap.mcp()
db = root.db  # the function's DynamoDB client (the local stack guards it with the function's IAM policy)
budget = root.budget
server = build_server(toolbox, name="skillcore", version=VERSION)

init_phase.end()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    try:
        http.user_id(event)  # the authorizer already refused a bad token; without a `sub` nothing is served
    except Unauthenticated as error:
        return answer(error)
    with budget.invocation(context):
        return serve(server, event, context)
