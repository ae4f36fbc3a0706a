"""McpFunction: POST /mcp, skillcore's MCP face for agent hosts (API.md section 4).

Composition root: settings, clients, the toolbox and the MCP server are built once per cold start; each
invocation serves one stateless Streamable HTTP exchange (mcp_face.py). Every tool is a thin shell over the same
service function as its HTTP route (skillcore/api/tools_*.py).
"""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

import functools
import os

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mcp_face import build_server, serve

from skillcore import VERSION
from skillcore.api import http, tools_capabilities, tools_core, tools_hosted
from skillcore.api.errors import answer
from skillcore.api.routes_capabilities import CapabilityRouteDeps
from skillcore.api.routes_hosted import HostedRouteDeps
from skillcore.api.routes_skills import SkillDeps
from skillcore.api.toolbox import Toolbox
from skillcore.capabilities import offline_drafter
from skillcore.capabilities.catalog import CatalogDeps
from skillcore.capabilities.drafts import DRAFT_MAX_TOKENS, DRAFT_READ_TIMEOUT_S, DraftDeps
from skillcore.capabilities.service import CapabilityDeps
from skillcore.clock import system_clock
from skillcore.db.dynamo import make_db
from skillcore.egress.settings import EgressSettings
from skillcore.errors import Unauthenticated
from skillcore.hosted import secrets
from skillcore.hosted.service import HostedDeps
from skillcore.invocation import InvocationBudget
from skillcore.model.factory import make_model
from skillcore.observability import logger, metrics
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS
from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS

settings = Settings.from_env()
budget = InvocationBudget()
db = make_db(settings, time_left=budget.seconds_left)
toolbox = Toolbox()
tools_core.register(toolbox, SkillDeps(db=db, skills=SKILLS, clock=system_clock))
# The catalog and the creation flow, built as RpcFunction builds them for its routes (functions/rpc/app.py): the
# draft generator's model (offline: the deterministic drafter) is made on the first draft request.
capability_deps = CapabilityDeps(db=db, registered=frozenset(m.skill_id for m in SKILLS.manifests()))
draft_model = functools.cache(lambda: make_model(settings, read_timeout=DRAFT_READ_TIMEOUT_S,
                                                 tool_planner=offline_drafter.plan))
tools_capabilities.register(toolbox, CapabilityRouteDeps(
    capabilities=capability_deps, catalog=CatalogDeps(db=db, skills=SKILLS), clock=system_clock,
    drafts=DraftDeps(capabilities=capability_deps, model=draft_model,
                     max_tokens=max(settings.bedrock_max_tokens, DRAFT_MAX_TOKENS))))
# call_hosted_tool: the hosted endpoint calls, built as HostedFunction builds them (functions/hosted/app.py).
tools_hosted.register(toolbox, HostedRouteDeps(hosted=HostedDeps(
    db=db, keys=secrets.keys_from_env(os.environ, local=settings.local, region=settings.region),
    egress=EgressSettings.from_env(), skill=HOSTED_WORKFLOWS, time_left=budget.seconds_left), clock=system_clock))
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
