"""The OpenAPI 3.1 document of the HTTP API, generated from the routes' own declarations.

`make openapi` writes it to `openapi.json` (checked in; a unit test fails when it differs from what this module
generates). Every operation comes from a route the router serves, with the models the router parses and the
Struct it encodes: request schemas from pydantic (`model_json_schema`), response schemas from msgspec
(`schema_components`), errors from the route's documented list, all in the shared `ErrorEnvelope`.

Never imported by a function or by `skillcore/api/` (a unit test checks): building the document imports
pydantic's and msgspec's schema machinery, which a cold start has no use for.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import msgspec
from pydantic import BaseModel

from skillcore import VERSION
from skillcore.api import route_table
from skillcore.api.app import PATH_ID, Route, Routes

REF = "#/components/schemas/{name}"
DOCUMENT = Path(__file__).resolve().parent.parent / "openapi.json"

# What each status means, for the document's reader; the codes come from the routes.
ERROR_DESCRIPTIONS = {
    400: "The body is not JSON, or not a JSON object.",
    401: "Missing, expired or badly signed token.",
    403: "Operator route without the admin group.",
    404: "Missing, or someone else's.",
    409: "State conflict.",
    413: "Body over 64 KiB.",
    422: "Schema or rule violation (`validation_error` lists field paths in `details.errors`).",
    429: "A per-user limit is spent: `rate_limited` (the route class's requests per minute) or `budget_exhausted` "
         "(the day's model tokens, `details.resetsAt`); retry after `Retry-After` seconds.",
    500: "Unexpected; the message leaks nothing.",
    503: "The store stayed unavailable through its retries; retry after `Retry-After` seconds with the same ids.",
}
# Headers of an error response besides Content-Type, by status (the router sets them, api/errors.py).
ERROR_HEADERS = {
    429: {"Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}},
    503: {"Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}},
}

ERROR_ENVELOPE = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
        }
    },
}


def function_routes() -> dict[str, Routes]:
    """The routes of each HTTP function, registered as the functions register them (api/route_table.py).

    The handlers are never called here, so they get no collaborators (an integration test checks that the
    functions' own route tables are these)."""
    return {logical_id: route_table.routes(logical_id) for logical_id in route_table.http_functions()}


def all_routes() -> list[Route]:
    return [route for routes in function_routes().values() for route in routes.operations]


class Components:
    """`#/components/schemas`, filled from pydantic and msgspec; a name may be defined once only."""

    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {"ErrorEnvelope": ERROR_ENVELOPE}

    def add(self, name: str, schema: dict[str, Any]) -> None:
        known = self.schemas.get(name)
        if known is None or known == schema:
            self.schemas[name] = schema
        elif "enum" in known and sorted(known["enum"]) == sorted(schema.get("enum", [])):
            pass  # the same Enum seen by pydantic and by msgspec (JobStatus): one definition serves both
        else:
            raise ValueError(f"two different schemas are named {name!r}: rename one of the models")

    def model(self, model: type[BaseModel]) -> dict[str, Any]:
        """The validation schema of a request model, its definitions moved into the components."""
        schema = model.model_json_schema(by_alias=True, ref_template=REF.replace("{name}", "{model}"))
        for name, definition in schema.pop("$defs", {}).items():
            self.add(name, definition)
        return schema


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter is absent or a string: `X | None` is just X there."""
    options = schema.get("anyOf")
    if options and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        schema = {k: v for k, v in schema.items() if k not in ("anyOf", "default")} | (
            rest[0] if len(rest) == 1 else {"anyOf": rest}
        )
    return schema


def _query_parameters(model: type[BaseModel], components: Components) -> list[dict[str, Any]]:
    schema = components.model(model)
    required = set(schema.get("required", []))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": _without_null(prop)}
        for name, prop in schema["properties"].items()
    ]


def _error_responses(route: Route) -> dict[str, Any]:
    """The route's documented error classes grouped by their status, each status with its classes' codes."""
    by_status: dict[int, list[str]] = {}
    for error in route.documented_errors():
        by_status.setdefault(error.status, []).append(error.code)
    responses = {}
    for status, codes in sorted(by_status.items()):
        responses[str(status)] = {
            "description": ERROR_DESCRIPTIONS.get(status, "Error."),
            "content": {"application/json": {"schema": {"allOf": [
                {"$ref": REF.format(name="ErrorEnvelope")},
                {"properties": {"error": {"properties": {"code": {"enum": codes}}}}},
            ]}}},
        }
        if status in ERROR_HEADERS:
            responses[str(status)]["headers"] = ERROR_HEADERS[status]
    return responses


def _operation(route: Route, response_schema: dict[str, Any] | None, components: Components) -> dict[str, Any]:
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string", "pattern": PATH_ID.pattern}}
        for name in route.params
    ]
    if (query := route.query_model()) is not None:
        parameters += _query_parameters(query, components)
    success: dict[str, Any] = {"description": route.summary or "Success."}
    if response_schema is not None:
        success["content"] = {"application/json": {"schema": response_schema}}
    if route.headers:
        success["headers"] = {name: {"schema": {"type": "string", "enum": [value]}} for name, value in route.headers}
    operation: dict[str, Any] = {
        "operationId": route.operation_id,
        "summary": route.summary,
        "tags": [route.path.split("/")[2]],
        "responses": {str(route.status): success, **_error_responses(route)},
    }
    if parameters:
        operation["parameters"] = parameters
    if (body := route.body_model()) is not None:
        components.add(body.__name__, components.model(body))
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": REF.format(name=body.__name__)}}},
        }
    if not route.auth:
        operation["security"] = []
    return operation


def build() -> dict[str, Any]:
    routes = sorted(all_routes(), key=lambda r: (r.path, r.method))
    typed = [r for r in routes if r.response is not None]
    response_schemas, response_components = msgspec.json.schema_components(
        [r.response for r in typed], ref_template=REF
    )
    components = Components()
    for name, schema in response_components.items():
        components.add(name, schema)
    by_route = {id(r): s for r, s in zip(typed, response_schemas, strict=True)}
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, by_route.get(id(route)), components)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "skillcore",
            "version": VERSION,
            "description": "The skillcore HTTP API. Generated from the routes by `make openapi`; do not edit.",
        },
        "paths": paths,
        "components": {
            "schemas": components.schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        },
        "security": [{"bearer": []}],
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOCUMENT)
    parser.add_argument("--check", action="store_true", help="fail when the file differs instead of writing it")
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        if not args.out.is_file() or args.out.read_text(encoding="utf-8") != text:
            print(f"{args.out} is out of date: run `make openapi`", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
