"""Route: the chat turn (served by ChatTurnFunction)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models
from skillcore.api.views import chat as views
from skillcore.api.views.core import message
from skillcore.chat.service import ChatDeps, post_message
from skillcore.limits.models import RateClass

if TYPE_CHECKING:
    from skillcore.api.requests.chat import PostMessage

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.chat")


MESSAGES_PATH = "/rpc/conversations/<conversationId>/messages"


def register(routes: Routes, deps: ChatDeps) -> None:
    @routes.route("POST", MESSAGES_PATH, body=request("PostMessage"), response=views.Turn, rate=RateClass.CHAT, model=True,
                  errors=(e.AgentNotFound, e.ClientMessageConflict, e.VersionConflict, e.ConcurrentUpdate))
    def post_conversation_message(caller: Caller, conversationId: str, body: PostMessage) -> views.Turn:  # noqa: N803
        """A chat turn: the user's message, the agent's reply and the run that produced it."""
        turn = post_message(
            deps, user_id=caller.user_id, conversation_id=conversationId, client_message_id=body.client_message_id,
            text=body.text, agent_id=body.agent_id, from_person=caller.person,
        )
        return views.Turn(user_message=message(turn.user_message), reply=message(turn.reply), run=views.run(turn.run))
