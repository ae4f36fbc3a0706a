"""The check that stands in for schemathesis' positive_data_acceptance lets through only what it names."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from scripts.contract_hooks import _with_known_agents, refused_by_a_rule


def _case(method: str, path: str, codes: list[str]) -> Any:
    schema = {
        "allOf": [
            {"$ref": "#/components/schemas/ErrorEnvelope"},
            {"properties": {"error": {"properties": {"code": {"enum": codes}}}}},
        ]
    }
    raw = {"responses": {"422": {"content": {"application/json": {"schema": schema}}}}}
    return SimpleNamespace(
        method=method, path=path, operation=SimpleNamespace(definition=SimpleNamespace(raw=raw))
    )


def _error(code: str, *paths: str) -> bytes:
    details = {"errors": [{"path": p, "message": "m"} for p in paths]} if paths else {}
    return json.dumps({"error": {"code": code, "message": "m", "details": details}}).encode()


JOBS = _case(
    "POST", "/rpc/skills/background-jobs", ["validation_error", "permission_required", "run_at_out_of_range"]
)
LIST = _case("GET", "/rpc/agents", ["validation_error"])
GENERATE = _case("POST", "/rpc/user-capability-drafts/{draftId}/generate", ["validation_error"])


@pytest.mark.parametrize(
    ("case", "status", "body", "allowed"),
    [
        (JOBS, 422, _error("permission_required"), True),  # a documented rule the schema cannot state
        (JOBS, 422, _error("run_at_out_of_range"), True),
        (JOBS, 422, _error("skill_disabled"), False),  # a rule, but this operation does not document it
        (JOBS, 422, _error("validation_error", "note"), False),  # the schema was wrong, or the server
        (LIST, 422, _error("validation_error", "cursor"), True),  # a cursor the server did not mint
        (LIST, 422, _error("validation_error", "cursor", "limit"), False),
        (LIST, 422, _error("validation_error"), False),
        (GENERATE, 422, _error("validation_error", "answers/3/gapId"), True),  # not a gap of the stored draft
        (GENERATE, 422, _error("validation_error", "answers/3/text"), False),
        (JOBS, 422, _error("validation_error", "answers/0/gapId"), False),  # only where the state decides
        (JOBS, 400, _error("permission_required"), False),  # only a 422 is a rule's answer
        (JOBS, 422, b"not json", False),
    ],
)
def test_only_documented_rules_and_unminted_cursors_pass(
    case: Any, status: int, body: bytes, allowed: bool
) -> None:
    assert refused_by_a_rule(case, status, body) is allowed


def test_known_agents_replace_only_valid_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLS_CONTRACT_AGENT_ID", "agent-a")
    monkeypatch.setenv("SKILLS_CONTRACT_OTHER_AGENT_ID", "agent-b")
    assert _with_known_agents({"agentId": "x1", "agentIds": ["p", "q"]}) == {
        "agentId": "agent-a",
        "agentIds": ["agent-a", "agent-b"],
    }
    # A value that is invalid on purpose stays: the case must stay invalid.
    assert _with_known_agents({"agentId": "not an id!"}) == {"agentId": "not an id!"}
    assert _with_known_agents({"agentId": 7}) == {"agentId": 7}
    assert _with_known_agents({"scope": {"type": "agent", "agentId": ""}})["scope"]["agentId"] == ""
