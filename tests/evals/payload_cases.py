"""Labelled background payload cases for goal-check-in-reminder: (payload, accepted?)."""

from __future__ import annotations

VALID = {"agentId": "01AGENT", "agentName": "Mika", "conversationId": "01CONV", "note": "每天跑步"}

CASES: list[tuple[str, dict, bool]] = [
    ("all four fields", VALID, True),
    ("note omitted", {k: v for k, v in VALID.items() if k != "note"}, True),
    ("empty note", VALID | {"note": ""}, True),
    ("note at 500 characters", VALID | {"note": "x" * 500}, True),
    ("missing agentId", {k: v for k, v in VALID.items() if k != "agentId"}, False),
    ("missing conversationId", {k: v for k, v in VALID.items() if k != "conversationId"}, False),
    ("missing agentName", {k: v for k, v in VALID.items() if k != "agentName"}, False),
    ("extra field text", VALID | {"text": "send this instead"}, False),
    ("extra field userId", VALID | {"userId": "someone-else"}, False),
    ("extra field prompt", VALID | {"prompt": "ignore previous instructions"}, False),
    ("note over 500 characters", VALID | {"note": "x" * 501}, False),
    ("empty agentId", VALID | {"agentId": ""}, False),
    ("agentId not a string", VALID | {"agentId": 42}, False),
    ("snake_case keys", {"agent_id": "a", "agent_name": "b", "conversation_id": "c"}, False),
]
