"""RpcFunction: the /rpc/* routes. Composition root: settings, clients and services are built once per
cold start; the handler only resolves the request."""

from skillcore import init_phase

init_phase.begin()  # before the other imports: the collector is paused for init (see skillcore/init_phase.py)

import functools

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.api import (
    routes_automation,
    routes_background,
    routes_capabilities,
    routes_core,
    routes_skills,
)
from skillcore.api.app import new_app
from skillcore.automation.service import default_job_op
from skillcore.capabilities import offline_drafter
from skillcore.capabilities.catalog import CatalogDeps
from skillcore.capabilities.drafts import DRAFT_MAX_TOKENS, DRAFT_READ_TIMEOUT_S, DraftDeps
from skillcore.capabilities.service import CapabilityDeps
from skillcore.clock import system_clock
from skillcore.conversations.profile import ProfileDeps
from skillcore.db.dynamo import make_db
from skillcore.invocation import InvocationBudget
from skillcore.model.factory import make_model
from skillcore.observability import logger, metrics
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS

settings = Settings.from_env()
budget = InvocationBudget()  # a store attempt ends before the invocation does (db/dynamo.py StoreTimeouts)
db = make_db(settings, time_left=budget.seconds_left)
routes = new_app()
# The first PUT /rpc/me also creates the user's default daily memory job.
profile_deps = ProfileDeps(db=db, created_with=default_job_op(db, SKILLS))
routes_core.register(routes, routes_core.CoreDeps(db=db, clock=system_clock, profile=profile_deps))
skill_deps = routes_skills.SkillDeps(db=db, skills=SKILLS, clock=system_clock)
# Background routes first: their static paths must win over PATCH /rpc/skills/{skillId}.
routes_background.register(routes, skill_deps)
routes_skills.register(routes, skill_deps)
routes_automation.register(routes, skill_deps)
capability_deps = CapabilityDeps(db=db, registered=frozenset(m.skill_id for m in SKILLS.manifests()))
# The draft generator's model (offline: the deterministic drafter), built on the first draft request. A
# proposal of 20 steps is a few thousand tokens of tool input, more than a chat reply's budget.
draft_model = functools.cache(lambda: make_model(settings, read_timeout=DRAFT_READ_TIMEOUT_S,
                                                 tool_planner=offline_drafter.plan))
draft_deps = DraftDeps(capabilities=capability_deps, model=draft_model,
                       max_tokens=max(settings.bedrock_max_tokens, DRAFT_MAX_TOKENS))
routes_capabilities.register(routes, routes_capabilities.CapabilityRouteDeps(
    capabilities=capability_deps, catalog=CatalogDeps(db=db, skills=SKILLS), clock=system_clock, drafts=draft_deps))
# The ChatTurnFunction's route (template.yaml): a 405 on that path must still list POST in its Allow.
routes.served_elsewhere("POST", "/rpc/conversations/<conversationId>/messages")
# HostedFunction's routes: another method on their paths reaches this function through /rpc/{proxy+}, and its
# 405 must name the methods that do exist there.
for method, path in (("GET", "/rpc/approvals"), ("POST", "/rpc/approvals/<approvalId>"),
                     ("GET", "/rpc/hosted-endpoints"), ("POST", "/rpc/hosted-endpoints"),
                     ("GET", "/rpc/hosted-endpoints/<endpointId>"), ("PATCH", "/rpc/hosted-endpoints/<endpointId>"),
                     ("DELETE", "/rpc/hosted-endpoints/<endpointId>"),
                     ("POST", "/rpc/hosted-endpoints/<endpointId>/calls"),
                     ("POST", "/rpc/hosted-endpoints/<endpointId>/refresh"),
                     ("POST", "/rpc/hosted-endpoints/<endpointId>/snapshot/accept")):
    routes.served_elsewhere(method, path)

init_phase.end()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    with budget.invocation(context):
        return routes.resolve(event, context)
