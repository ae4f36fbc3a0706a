"""What the owner types in a single chat about hosted tools (hosted/chat.py): the `/hosted` command and the
answer to a pending approval.

The offline model calls a hosted tool only when the message names it: `/hosted <endpointName>.<toolName>
{json arguments}` (arguments optional, default `{}`); see `plan_offline`.

An approval asked in the chat is answered `批准` / `approve` (or `批准 <code>` / `approve <code>`) or `拒绝` /
`deny` (with or without the code); without a code the latest pending call of the conversation is meant.
"""

from __future__ import annotations

import json
import re
from typing import Any

from msgspec import Struct

from skillcore.hosted.chat_tools import wire_name
from skillcore.model.port import ModelRequest, ToolCall

COMMAND = re.compile(r"\s*/hosted\s+([a-z][a-z0-9_]{2,39})\.(\S+)(?:\s+(.*?))?\s*", re.S)
ANSWER = re.compile(r"\s*(批准|同意|approve|拒绝|deny)(?:\s+([A-Za-z0-9]{6}))?\s*[。.!！]?\s*", re.I)
APPROVE_WORDS = ("批准", "同意", "approve")


class Command(Struct, frozen=True):
    endpoint_name: str
    tool_name: str
    arguments: dict[str, Any] | None  # None: the text after the name is not a JSON object


def parse_command(text: str) -> Command | None:
    found = COMMAND.fullmatch(text)
    if found is None:
        return None
    raw = (found.group(3) or "").strip()
    arguments: dict[str, Any] | None = {}
    if raw:
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        arguments = parsed if isinstance(parsed, dict) else None
    return Command(found.group(1), found.group(2), arguments)


def plan_offline(request: ModelRequest) -> tuple[ToolCall, ...]:
    """The offline model's tool planner for chat turns: a `/hosted` command naming an offered tool, else none."""
    last = next((m.text for m in reversed(request.messages) if m.role == "user" and m.text), "")
    command = parse_command(last)
    if command is None or command.arguments is None:
        return ()
    name = wire_name(command.endpoint_name, command.tool_name)
    if name not in {t.name for t in request.tools}:
        return ()
    return (ToolCall(call_id="offline-0", name=name, input=command.arguments),)


class Answer(Struct, frozen=True):
    approve: bool
    code: str | None


def parse_answer(text: str) -> Answer | None:
    found = ANSWER.fullmatch(text)
    if found is None:
        return None
    return Answer(found.group(1).lower() in APPROVE_WORDS, found.group(2).upper() if found.group(2) else None)
