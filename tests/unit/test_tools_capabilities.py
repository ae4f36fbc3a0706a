"""The catalog and creation-flow MCP tools (skillcore/api/tools_capabilities.py): their names, input schemas and
documented errors, and argument validation, which refuses before any service (or table) is reached."""

from __future__ import annotations

from typing import Any

import pytest

from skillcore.api import errors as e
from skillcore.api import tools_capabilities
from skillcore.api.app import Caller
from skillcore.api.routes_capabilities import CapabilityRouteDeps
from skillcore.api.toolbox import Toolbox
from skillcore.capabilities.catalog import CatalogDeps
from skillcore.capabilities.drafts import DraftDeps
from skillcore.capabilities.service import CapabilityDeps
from skillcore.skills.builtin import SKILLS

CALLER = Caller("user-1", admin=False)


class Untouchable:
    """A db or model that fails the test if a service reaches it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a refused call reached the service ({name})")


@pytest.fixture
def box() -> Toolbox:
    untouchable: Any = Untouchable()
    capabilities = CapabilityDeps(db=untouchable, registered=frozenset(m.skill_id for m in SKILLS.manifests()))
    toolbox = Toolbox()
    tools_capabilities.register(toolbox, CapabilityRouteDeps(
        capabilities=capabilities, catalog=CatalogDeps(db=untouchable, skills=SKILLS), clock=untouchable,
        drafts=DraftDeps(capabilities=capabilities, model=untouchable)))
    return toolbox


def test_the_five_tools_and_their_input_schemas(box: Toolbox) -> None:
    by_name = {t.name: t for t in box.tools}
    assert list(by_name) == ["list_capabilities", "get_capability_protocol", "start_create", "generate_draft",
                             "confirm_draft"]
    schemas = {name: tool.input_schema() for name, tool in by_name.items()}
    assert all(s["type"] == "object" and s["additionalProperties"] is False for s in schemas.values())
    assert schemas["list_capabilities"].get("properties", {}) == {} and "required" not in schemas["list_capabilities"]
    assert set(schemas["get_capability_protocol"]["properties"]) == {"capabilityId", "hostProfile"}  # no preview
    assert schemas["get_capability_protocol"]["required"] == ["capabilityId"]
    assert schemas["start_create"]["required"] == ["description"]
    assert set(schemas["generate_draft"]["properties"]) == {"draftId", "answers"}
    assert schemas["generate_draft"]["required"] == ["draftId"]
    assert set(schemas["confirm_draft"]["required"]) == {"draftId", "revision"}


def test_the_tools_document_their_routes_errors(box: Toolbox) -> None:
    by_name = {t.name: t for t in box.tools}
    assert {e.NotFound, e.ProtocolNotActive, e.SkillDisabled} <= set(by_name["get_capability_protocol"].errors)
    assert e.UpstreamError in by_name["start_create"].errors
    assert {e.DraftRevisionConflict, e.SchemaNotAllowed} <= set(by_name["generate_draft"].errors)
    assert {e.DraftRevisionConflict, e.DraftHasGaps, e.CapabilityNameTaken, e.QuotaExceeded, e.UnsafeText} <= set(
        by_name["confirm_draft"].errors)


@pytest.mark.parametrize(("tool", "arguments", "path"), [
    ("list_capabilities", {"cursor": "x"}, "cursor"),
    ("get_capability_protocol", {}, "capabilityId"),
    ("get_capability_protocol", {"capabilityId": "user:x"}, "capabilityId"),  # name too short
    ("get_capability_protocol", {"capabilityId": "Memory-Recall"}, "capabilityId"),
    ("get_capability_protocol", {"capabilityId": "user:morning_review", "preview": True}, "preview"),
    ("get_capability_protocol", {"capabilityId": "user:morning_review", "hostProfile": "Laptop!"}, "hostProfile"),
    ("start_create", {}, "description"),
    ("start_create", {"description": " \n\u3000"}, "description"),
    ("start_create", {"description": "x" * 2001}, "description"),
    ("start_create", {"description": "ok", "userId": "user-2"}, "userId"),
    ("generate_draft", {"answers": []}, "draftId"),
    ("generate_draft", {"draftId": "../d1"}, "draftId"),
    ("generate_draft", {"draftId": "d1", "answers": [{"gapId": "g1"}]}, "answers"),
    ("generate_draft", {"draftId": "d1", "answers": [{"gapId": "g1", "text": "x"}] * 21}, "answers"),
    ("confirm_draft", {"draftId": "d1"}, "revision"),
    ("confirm_draft", {"draftId": "d1", "revision": 0}, "revision"),
    ("confirm_draft", {"draftId": "d1", "revision": "2"}, "revision"),
    ("confirm_draft", {"draftId": "d1", "revision": True}, "revision"),
])
def test_bad_arguments_are_a_validation_error_before_any_service(
    box: Toolbox, tool: str, arguments: dict[str, Any], path: str
) -> None:
    answer = box.call(CALLER, tool, arguments)
    assert answer.is_error is True
    error = answer.body["error"]
    assert error["code"] == "validation_error", error
    assert any(item["path"].split(".")[0] == path for item in error["details"]["errors"]), error["details"]


def test_valid_arguments_reach_the_service(box: Toolbox) -> None:
    # The same call with valid arguments gets past validation: here the untouchable db says it was reached.
    answer = box.call(CALLER, "get_capability_protocol", {"capabilityId": "user:morning_review"})
    assert answer.body == {"error": {"code": "internal", "message": "internal error", "details": {}}}
