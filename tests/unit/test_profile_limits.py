"""The limits the profile answers (`GET /rpc/me` `limits`, read by the page) are the ones the API validates with:
each equals the bound the request body's schema in openapi.json states for its field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec

from skillcore.api.limits import LIMITS

DOCUMENT = json.loads((Path(__file__).resolve().parents[2] / "openapi.json").read_text(encoding="utf-8"))
SCHEMAS: dict[str, Any] = DOCUMENT["components"]["schemas"]

# limit (camelCase, as on the wire) -> (schema, path of properties, keyword) that states it in the document
WHERE = {
    "timezone": ("PutProfile", ["timezone"], "maxLength"),
    "agentName": ("CreateAgent", ["name"], "maxLength"),
    "agentPersona": ("CreateAgent", ["persona"], "maxLength"),
    "chatMessage": ("PostMessage", ["text"], "maxLength"),
    "memoryTitle": ("CreateMemory", ["title"], "maxLength"),
    "memoryContent": ("CreateMemory", ["content"], "maxLength"),
    "reminderNote": ("CreateBackgroundJob", ["note"], "maxLength"),
    "automationTitle": ("CreateAutomationJob", ["title"], "maxLength"),
    "automationPrompt": ("AutomationConfigBody", ["prompt"], "maxLength"),
    "capabilityName": ("CreateUserCapability", ["name"], "pattern"),
    "capabilityDisplayName": ("CreateUserCapability", ["displayName"], "maxLength"),
    "capabilityTriggers": ("CreateUserCapability", ["whenToUse"], "maxItems"),
    "capabilityTrigger": ("CreateUserCapability", ["whenToUse", "items"], "maxLength"),
    "capabilityText": ("WorkflowInput", ["objective"], "maxLength"),
    "capabilitySteps": ("WorkflowInput", ["steps"], "maxItems"),
    "capabilityBindings": ("CreateUserCapability", ["toolBindings"], "maxItems"),
    "draftDescription": ("StartDraft", ["description"], "maxLength"),
    "draftAnswer": ("DraftAnswerInput", ["text"], "maxLength"),
    "endpointName": ("RegisterEndpoint", ["name"], "pattern"),
    "endpointDisplayName": ("RegisterEndpoint", ["displayName"], "maxLength"),
    "endpointUrl": ("RegisterEndpoint", ["url"], "maxLength"),
    "endpointToken": ("RegisterEndpoint", ["authToken"], "maxLength"),
}


def _bound(schema: dict[str, Any], keyword: str) -> int | None:
    """The keyword's value in `schema` or in one of its anyOf branches (an optional field is `X | null`)."""
    for branch in [schema, *schema.get("anyOf", [])]:
        if keyword in branch:
            if keyword == "pattern":  # ^[a-z][a-z0-9_]{2,39}$: one letter, then at most 39
                return 1 + int(re.search(r"\{\d+,(\d+)\}\$$", branch["pattern"]).group(1))  # type: ignore[union-attr]
            return int(branch[keyword])
    return None


def _field(schema_name: str, path: list[str]) -> dict[str, Any]:
    node: dict[str, Any] = SCHEMAS[schema_name]
    for part in path:
        node = node["properties"][part] if part != "items" else node["items"]
        if "$ref" in node:
            node = SCHEMAS[node["$ref"].rsplit("/", 1)[1]]
    return node


def test_each_documented_limit_is_the_bound_the_request_schema_states() -> None:
    served = msgspec.to_builtins(LIMITS)
    for name, (schema_name, path, keyword) in WHERE.items():
        assert _bound(_field(schema_name, path), keyword) == served[name], name


def test_the_counts_come_from_the_domain_constants() -> None:
    from skillcore.capabilities import models as capabilities
    from skillcore.hosted import models as hosted

    assert LIMITS.capabilities == capabilities.MAX_CAPABILITIES_PER_USER
    assert LIMITS.hosted_endpoints == hosted.MAX_ENDPOINTS_PER_USER


def test_the_profile_documents_its_limits() -> None:
    profile = SCHEMAS["Profile"]
    assert "limits" in profile["required"]
    assert set(SCHEMAS["Limits"]["required"]) == set(msgspec.to_builtins(LIMITS))
