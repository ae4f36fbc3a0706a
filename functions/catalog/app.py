"""CatalogFunction: the catalog's /rpc/* routes (packages, publishers and releases, a user's installs, the
installed code tools' listing; skillcore/api/route_table.py), wired once per cold start by skillcore/bootstrap.py.
The only HTTP function that writes the catalog and the package bucket, and the one that ships the WebAssembly
runtime for the release check of a package with code tools (loaded with the first such release)."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore import bootstrap
from skillcore.observability import logger, metrics

root, routes = bootstrap.catalog()
db = root.db  # the function's DynamoDB client (the local stack guards it with the function's IAM policy)
budget = root.budget  # a store attempt ends before the invocation does (db/dynamo.py StoreTimeouts)

init_phase.end()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    with budget.invocation(context):
        return routes.resolve(event, context)
