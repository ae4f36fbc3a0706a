"""Domain errors of the chat turn (docs/contract.md "Chat")."""

from __future__ import annotations

from skillcore.errors import Conflict


class ClientMessageConflict(Conflict):
    code = "client_message_conflict"
    default_message = "clientMessageId was already used with a different text"
