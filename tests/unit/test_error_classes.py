"""Errors as classes: the registry of error classes (skillcore/errors.py and the features' errors.py), what
the routes and tools document with them, the OpenAPI envelope read off them, and that no code of the layer or
the functions tells errors apart by their code strings."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_type_hints
from unittest.mock import MagicMock

import pytest

from skillcore.api import errors as documented
from skillcore.api import tools_capabilities, tools_core, tools_hosted
from skillcore.api.app import Caller, Routes
from skillcore.api.toolbox import Toolbox
from skillcore.capabilities.errors import CapabilityNotActive, ProtocolNotActive
from skillcore.db.errors import StoreUnavailable
from skillcore.errors import (
    RETRY_AFTER_SECONDS,
    Conflict,
    DomainError,
    NotFound,
    RuleViolation,
    StoreUnavailableError,
    registry,
)
from skillcore_local import openapi
from skillcore_local.template import ROOT

CODE = re.compile(r"^[a-z][a-z0-9_]*$")
# The one code two classes share, as docs/contract.md gives it: 422 when deactivating, 409 for a draft's protocol.
SHARED_CODES = {"capability_not_active": {CapabilityNotActive, ProtocolNotActive}}


def all_tools() -> list[Any]:
    box = Toolbox()
    for module in (tools_core, tools_capabilities, tools_hosted):
        module.register(box, MagicMock())  # the handlers are never called here
    return list(box.tools)


def test_every_class_has_a_code_of_its_own_a_status_and_a_kind() -> None:
    classes = registry()
    assert len(classes) >= 40
    for cls in classes:
        assert CODE.match(cls.code), cls
        assert 400 <= cls.status < 600, cls
    # the kinds have no code: a caller never receives "a Conflict", always one of its classes
    assert not Conflict.concrete() and not RuleViolation.concrete() and not DomainError.concrete()
    assert NotFound.concrete()  # and the plain one, for a resource without a class of its own
    with pytest.raises(TypeError):
        Conflict("which one?")


def test_every_code_is_unique_but_the_one_api_md_gives_two_statuses() -> None:
    by_code: dict[str, set[type[DomainError]]] = {}
    for cls in registry():
        by_code.setdefault(cls.code, set()).add(cls)
    shared = {code: classes for code, classes in by_code.items() if len(classes) > 1}
    assert shared == SHARED_CODES
    pairs = [(cls.status, cls.code) for cls in registry()]
    assert len(pairs) == len(set(pairs))


def test_details_are_typed_where_a_class_has_them() -> None:
    """A class whose constructor takes details declares their TypedDict; its instances' details are JSON."""
    for cls in registry():
        hints = get_type_hints(cls)
        assert "details" in hints, cls
    error = documented.ApprovalRequired({"approvalId": "a-1"})
    assert error.details["approvalId"] == "a-1"
    assert json.loads(json.dumps(documented.error_body(error))) == {
        "error": {"code": "approval_required", "message": "this call needs your approval first",
                  "details": {"approvalId": "a-1"}}}


def test_what_routes_and_tools_document_is_in_the_registry() -> None:
    known = set(registry())
    for route in openapi.all_routes():
        assert set(route.documented_errors()) <= known, route.operation_id
        assert (StoreUnavailableError in route.documented_errors()) == route.store, route.operation_id
    for tool in all_tools():
        assert set(tool.documented_errors()) <= known, tool.name
        assert StoreUnavailableError in tool.documented_errors()
    assert documented.__all__ == sorted(documented.__all__)
    assert {getattr(documented, name) for name in documented.__all__} <= known


def test_the_openapi_envelope_lists_each_routes_classes_by_status() -> None:
    document = openapi.build()
    for route in openapi.all_routes():
        responses = document["paths"][route.path][route.method.lower()]["responses"]
        expected: dict[str, list[str]] = {}
        for cls in route.documented_errors():
            expected.setdefault(str(cls.status), []).append(cls.code)
        listed = {status: response["content"]["application/json"]["schema"]["allOf"][1]["properties"]["error"]
                  ["properties"]["code"]["enum"]
                  for status, response in responses.items() if status != str(route.status)}
        assert listed == expected, route.operation_id
        if route.store:
            assert "Retry-After" in responses["503"]["headers"]


def test_a_store_that_stays_unavailable_is_503_with_retry_after() -> None:
    routes = Routes()

    def stalled(caller: Caller) -> Any:
        raise StoreUnavailable("transact_write_items: ReadTimeoutError", code="ReadTimeoutError",
                               operation="transact_write_items")

    routes.route("POST", "/rpc/stalled", response=dict)(stalled)
    response = routes.resolve({"rawPath": "/rpc/stalled", "requestContext": {
        "http": {"method": "POST", "path": "/rpc/stalled"}, "authorizer": {"jwt": {"claims": {"sub": "u-1"}}}}})
    assert response["statusCode"] == 503
    assert response["headers"]["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert json.loads(response["body"]) == {"error": {
        "code": "store_unavailable", "message": "the store is unavailable; retry shortly",
        "details": {"retryAfterSeconds": RETRY_AFTER_SECONDS}}}


def test_a_tool_answers_a_stalled_store_with_the_same_envelope() -> None:
    box = all_tools_box_raising(StoreUnavailable("query: ReadTimeoutError", code="ReadTimeoutError"))
    answer = box.call(Caller("u-1", admin=False), "stalled", {})
    assert answer.is_error and answer.body["error"]["code"] == "store_unavailable"
    assert answer.body["error"]["details"] == {"retryAfterSeconds": RETRY_AFTER_SECONDS}


def all_tools_box_raising(error: Exception) -> Toolbox:
    from skillcore.shapes import Strict

    class NoArguments(Strict):
        pass

    box = Toolbox()

    def stalled(caller: Caller, arguments: NoArguments) -> Any:
        """Stalls."""
        raise error

    box.tool("stalled", arguments=NoArguments)(stalled)
    return box


# -- no branch on a code string ---------------------------------------------------------------------------

SOURCES = [*sorted((ROOT / "layers" / "skillcore" / "skillcore").rglob("*.py")),
           *sorted((ROOT / "functions").rglob("*.py"))]


def _offences(text: str, codes: set[str]) -> list[str]:
    alternatives = "|".join(sorted(codes, key=len, reverse=True))
    patterns = [
        rf"[\(,]\s*code\s*=\s*[\"']({alternatives})[\"']",  # a code passed to a constructor
        rf"\.code\s*(==|!=)\s*[\"']({alternatives})[\"']",  # error.code == "approval_required"
        rf"[\"']({alternatives})[\"']\s*(==|!=)\s*\w+\.code\b",
        rf"\.code\s+(not\s+)?in\s*[\(\[\{{][^\)\]\}}]*[\"']({alternatives})[\"']",
        r"details\.get\([\"']status[\"'],\s*\w+\.code\)",
    ]
    return [found.group(0) for pattern in patterns for found in re.finditer(pattern, text)]


def test_the_scan_finds_code_string_branches() -> None:
    codes = {"approval_required", "agent_not_found"}
    assert _offences('if error.code == "approval_required":', codes)
    assert _offences('raise NotFound("x", code="agent_not_found")', codes)
    assert _offences('if error.code in ("agent_not_found", "x"):', codes)
    assert not _offences('code = "agent_not_found"', codes)  # a class's own code


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(Path(p).relative_to(ROOT)))
def test_no_code_branches_on_a_code_string(path: Path) -> None:
    codes = {cls.code for cls in registry()}
    assert _offences(path.read_text(encoding="utf-8"), codes) == []
