"""The server's limits a client shows or enforces before it sends (`limits` of `GET /rpc/me`): each is the
constant a request model or the domain validates with, so the page keeps no copy. Built from every route
group's request models, so only the route that answers it imports this."""

from skillcore.api.requests import background as background_requests
from skillcore.api.requests import capabilities as capability_requests
from skillcore.api.requests import chat as chat_requests
from skillcore.api.requests import core as core_requests
from skillcore.api.requests import hosted as hosted_requests
from skillcore.api.views.core import Limits
from skillcore.automation import models as automation_models
from skillcore.capabilities import models as capability_models
from skillcore.capabilities import structure
from skillcore.hosted import models as hosted_models
from skillcore.shapes import TIMEZONE_MAX

LIMITS = Limits(
    timezone=TIMEZONE_MAX,
    agent_name=core_requests.AGENT_NAME_MAX,
    agent_persona=core_requests.AGENT_PERSONA_MAX,
    chat_message=chat_requests.MESSAGE_TEXT_MAX,
    memory_title=core_requests.MEMORY_TITLE_MAX,
    memory_content=core_requests.MEMORY_CONTENT_MAX,
    reminder_note=background_requests.NOTE_MAX,
    automation_title=automation_models.TITLE_MAX,
    automation_prompt=automation_models.PROMPT_MAX,
    capabilities=capability_models.MAX_CAPABILITIES_PER_USER,
    capability_name=structure.NAME_MAX,
    capability_display_name=structure.DISPLAY_NAME_MAX,
    capability_triggers=structure.MAX_TRIGGERS,
    capability_trigger=structure.TRIGGER_MAX,
    capability_text=structure.TEXT_MAX,
    capability_steps=capability_models.MAX_STEPS,
    capability_bindings=capability_models.MAX_BINDINGS_PER_CAPABILITY,
    draft_description=capability_requests.DESCRIPTION_MAX,
    draft_answer=structure.ANSWER_MAX,
    hosted_endpoints=hosted_models.MAX_ENDPOINTS_PER_USER,
    endpoint_name=hosted_requests.NAME_MAX,
    endpoint_display_name=hosted_requests.DISPLAY_NAME_MAX,
    endpoint_url=hosted_requests.URL_MAX,
    endpoint_token=hosted_requests.TOKEN_MAX,
)
