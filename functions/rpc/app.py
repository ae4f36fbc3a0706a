"""RpcFunction: the /rpc/* routes. Composition root: settings, clients and services are built once per
cold start; the handler only resolves the request."""

import gc

# Init allocates over 100k long-lived objects and frees none: the cyclic collector would traverse them again
# and again while the modules load (~50 ms of a cold start, measured by `make bench`). It is paused for the
# init and re-enabled at the end, after freezing what init built so later collections skip it too.
gc.disable()

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from skillcore.api import routes_automation, routes_background, routes_core, routes_skills
from skillcore.api.app import new_app
from skillcore.clock import system_clock
from skillcore.db.dynamo import make_db
from skillcore.observability import logger
from skillcore.services.automation import default_job_op
from skillcore.services.profile import ProfileDeps
from skillcore.settings import Settings
from skillcore.skills.builtin import SKILLS

settings = Settings.from_env()
db = make_db(settings)
routes = new_app()
# The first PUT /rpc/me also creates the user's default daily memory job.
profile_deps = ProfileDeps(db=db, created_with=default_job_op(db))
routes_core.register(routes, routes_core.CoreDeps(db=db, clock=system_clock, profile=profile_deps))
skill_deps = routes_skills.SkillDeps(db=db, skills=SKILLS, clock=system_clock)
# Background routes first: their static paths must win over PATCH /rpc/skills/{skillId}.
routes_background.register(routes, skill_deps)
routes_skills.register(routes, skill_deps)
routes_automation.register(routes, skill_deps)

# Init is done: what it built lives as long as the process, so later collections need not traverse it.
gc.freeze()
gc.enable()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return routes.resolve(event, context)
