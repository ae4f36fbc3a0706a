"""HostedFunction: hosted external workflows, the /rpc/hosted-endpoints routes and the /rpc/approvals routes
(per-operation approvals of hosted workflow calls). The only function that calls out to user-given hosts
(skillcore/egress/) and imports the MCP client. Composition root: settings, clients and services are built
once per cold start."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

import os

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.api import routes_approvals, routes_hosted
from skillcore.api.app import new_app
from skillcore.approvals.models import ApprovalStatus
from skillcore.clock import system_clock
from skillcore.db.dynamo import make_db
from skillcore.egress.settings import EgressSettings
from skillcore.hosted import secrets
from skillcore.hosted.chat_delivery import deliver_after_decision
from skillcore.hosted.service import HostedDeps
from skillcore.invocation import InvocationBudget
from skillcore.observability import logger, metrics
from skillcore.settings import Settings
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS

settings = Settings.from_env()
budget = InvocationBudget()
db = make_db(settings, time_left=budget.seconds_left)
egress = EgressSettings.from_env()
keys = secrets.keys_from_env(os.environ, local=settings.local, region=settings.region)
hosted = HostedDeps(db=db, keys=keys, egress=egress, skill=HOSTED_WORKFLOWS, time_left=budget.seconds_left)
routes = new_app()
routes_approvals.register(routes, routes_approvals.ApprovalDeps(
    db=db, skill=HOSTED_WORKFLOWS, clock=system_clock,
    # an approval asked in a chat: the approved call runs here and its result is posted to the conversation
    after_decision=lambda user_id, approval, now: deliver_after_decision(
        db, hosted, user_id, approval.approval_id, approved=approval.status is ApprovalStatus.APPROVED, now=now)))
routes_hosted.register(routes, routes_hosted.HostedRouteDeps(hosted=hosted, clock=system_clock))

init_phase.end()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    with budget.invocation(context):
        return routes.resolve(event, context)
