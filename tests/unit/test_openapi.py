"""The OpenAPI document: generated from the routes, checked in, valid 3.1, covering every route of the contract
(docs/contract.md, "Resources"), and never imported by the code that a cold start loads."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from openapi_spec_validator import validate

from skillcore.api.app import PATH_ID
from skillcore_local import openapi

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "docs" / "contract.md"


def shape(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi.build()


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, op) for path, ops in document["paths"].items() for method, op in ops.items()]


def test_the_checked_in_document_is_the_generated_one(document: dict[str, Any]) -> None:
    checked_in = openapi.DOCUMENT.read_text(encoding="utf-8") if openapi.DOCUMENT.is_file() else ""
    assert checked_in == openapi.render(document), "openapi.json is out of date: run `make openapi` and commit it"


def test_the_check_mode_fails_on_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "openapi.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert openapi.main(["--check", "--out", str(stale)]) == 1
    assert openapi.main(["--out", str(stale)]) == 0
    assert openapi.main(["--check", "--out", str(stale)]) == 0


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    validate(document)


def contract_routes() -> set[tuple[str, str]]:
    """Every `METHOD /rpc/...` the contract's "Resources" section names. Path parameter names are not compared
    (`{id}` = `{userCapabilityId}`)."""
    section = CONTRACT.read_text(encoding="utf-8").split("\n## Resources", 1)[1].split("\n## ", 1)[0]
    routes = {(m, shape(p)) for m, p in re.findall(r"`(GET|PUT|POST|PATCH|DELETE) (/rpc/[^`?\s]*)", section)}
    assert len(routes) > 20, "docs/contract.md's Resources no longer lists its routes as `METHOD /rpc/...`"
    return routes


def test_every_route_of_the_contract_is_documented(document: dict[str, Any]) -> None:
    documented = {(method, shape(path)) for method, path, _ in operations(document)}
    missing = contract_routes() - documented
    assert not missing, f"routes of docs/contract.md missing from openapi.json: {sorted(missing)}"


def test_every_route_of_both_functions_is_an_operation(document: dict[str, Any]) -> None:
    routes = {(r.method, r.path) for r in openapi.all_routes()}
    assert routes == {(method, path) for method, path, _ in operations(document)}
    assert ("POST", "/rpc/conversations/{conversationId}/messages") in routes  # ChatTurnFunction's
    ids = [op["operationId"] for _, _, op in operations(document)]
    assert len(ids) == len(set(ids))


def test_security_on_every_route_but_health(document: dict[str, Any]) -> None:
    assert document["security"] == [{"bearer": []}]
    assert document["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer",
                                                                   "bearerFormat": "JWT"}
    public = [(method, path) for method, path, op in operations(document) if op.get("security") == []]
    assert public == [("GET", "/rpc/health")]


def error_codes(op: dict[str, Any], status: str) -> list[str]:
    schema = op["responses"][status]["content"]["application/json"]["schema"]
    assert schema["allOf"][0] == {"$ref": "#/components/schemas/ErrorEnvelope"}
    return schema["allOf"][1]["properties"]["error"]["properties"]["code"]["enum"]


def test_every_status_a_route_can_answer_is_documented(document: dict[str, Any]) -> None:
    for method, path, op in operations(document):
        statuses = set(op["responses"])
        where = f"{method} {path}"
        assert "500" in statuses, where
        if path != "/rpc/health":
            assert "unauthenticated" in error_codes(op, "401"), where
        if path.startswith("/rpc/admin/"):
            assert "forbidden" in error_codes(op, "403"), where
        if "{" in path:
            assert "not_found" in error_codes(op, "404"), where
            params = [p for p in op["parameters"] if p["in"] == "path"]
            assert params and all(p["schema"]["pattern"] == PATH_ID.pattern and p["required"] for p in params)
        if "requestBody" in op:
            assert error_codes(op, "400") == ["bad_request"], where
            assert error_codes(op, "413") == ["payload_too_large"], where
            assert "validation_error" in error_codes(op, "422"), where
        if any(p["in"] == "query" for p in op.get("parameters", [])):
            assert "validation_error" in error_codes(op, "422"), where
        success = [s for s in statuses if s.startswith("2")]
        assert len(success) == 1, where
        if success == ["204"]:
            assert "content" not in op["responses"]["204"], where
        else:
            assert "content" in op["responses"][success[0]], where


def test_the_error_envelope_is_one_shared_component(document: dict[str, Any]) -> None:
    envelope = document["components"]["schemas"]["ErrorEnvelope"]
    assert envelope["required"] == ["error"]
    assert envelope["properties"]["error"]["required"] == ["code", "message", "details"]


def test_lists_take_limit_and_cursor(document: dict[str, Any]) -> None:
    for method, path, op in operations(document):
        success = op["responses"].get("200", {}).get("content", {}).get("application/json", {}).get("schema", {})
        ref = success.get("$ref", "")
        if not ref.split("/")[-1].startswith("Page_"):
            continue
        query = {p["name"]: p["schema"] for p in op["parameters"] if p["in"] == "query"}
        assert query["limit"]["minimum"] == 1 and query["limit"]["maximum"] == 100, f"{method} {path}"
        assert query["cursor"]["type"] == "string", f"{method} {path}"


def test_response_schemas_are_the_structs_the_router_encodes(document: dict[str, Any]) -> None:
    """Each operation's success schema is msgspec's schema of the route's declared response type."""
    for route in openapi.all_routes():
        op = document["paths"][route.path][route.method.lower()]
        if route.response is None:
            continue
        (schema,), _ = msgspec.json.schema_components([route.response], ref_template=openapi.REF)
        assert op["responses"][str(route.status)]["content"]["application/json"]["schema"] == schema


def test_request_bodies_forbid_unknown_fields(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    for method, path, op in operations(document):
        if "requestBody" in op:
            ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
            assert schemas[ref]["additionalProperties"] is False, f"{method} {path}"


# -- cold start: nothing a function loads imports the generator -----------------------------------------------


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def lambda_modules() -> list[Path]:
    return sorted((ROOT / "layers/skillcore/skillcore").rglob("*.py")) + sorted((ROOT / "functions").rglob("*.py"))


def test_no_function_or_layer_module_imports_the_generator() -> None:
    offenders = [
        str(path.relative_to(ROOT)) for path in lambda_modules()
        if any(name == "skillcore_local" or name.startswith("skillcore_local.") for name in imported_modules(path))
    ]
    assert offenders == []
    assert any("skillcore/api/" in str(p) for p in lambda_modules())


def test_the_walk_finds_an_import_of_the_generator(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from skillcore_local import openapi\n", encoding="utf-8")
    assert "skillcore_local.openapi" in imported_modules(module)


def test_the_document_holds_no_python_repr(document: dict[str, Any]) -> None:
    text = json.dumps(document)
    assert "<class" not in text and "UnsetType" not in text
