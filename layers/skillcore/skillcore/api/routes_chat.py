"""Route: the chat turn (served by ChatTurnFunction)."""

from __future__ import annotations

from skillcore.api import http, views
from skillcore.api.app import Routes
from skillcore.api.errors import Response, json_response
from skillcore.api.requests.chat import PostMessage
from skillcore.services.chat import ChatDeps, post_message

MESSAGES_PATH = "/rpc/conversations/<conversationId>/messages"


def register(routes: Routes, deps: ChatDeps) -> None:
    @routes.route("POST", MESSAGES_PATH)
    def post(conversationId: str) -> Response:  # noqa: N803 - the path parameter's name
        user = http.user_id(routes.event)
        request = http.body(routes.event, PostMessage)
        turn = post_message(
            deps, user_id=user, conversation_id=conversationId, client_message_id=request.client_message_id,
            text=request.text, agent_id=request.agent_id,
        )
        return json_response(200, {
            "userMessage": views.message(turn.user_message),
            "reply": views.message(turn.reply),
            "run": views.run(turn.run),
        })
