"""`make bench`'s validation section: a hosted call's argument check (hosted/schema_bounds.py) on the largest
arguments the caps allow against the costliest schemas the snapshot accepts. Budget: 50 ms for the worst.

    python -m scripts.bench --only validation

The schemas are built to the caps: a fan-out of MAX_FANOUT at every depth (MAX_FANOUT - 1 heavy leaves in an
`anyOf` beside one branch that goes on down, through acyclic `$defs`), enums of MAX_ENUM values, and
`uniqueItems` everywhere; the arguments fill the caps: MAX_ARRAY_ITEMS distinct objects, MAX_ARGUMENT_NODES
values, MAX_ARGUMENT_DEPTH levels, strings of MAX_STRING_LENGTH characters, all under MAX_ARGUMENT_BYTES.
Each pair is timed (best of a few runs, the validator built inside the timing as a call builds it) and the
worst is the figure. tests/unit/test_hosted_schema_bounds.py uses the same cases.
"""

from __future__ import annotations

import json
import time
from typing import Any

BUDGET_MS = 50.0
SECTION = "validation"


def _leaves(width: int, salt: int) -> list[dict[str, Any]]:
    from skillcore.hosted import schema_bounds as b

    enum = [{"k": f"value-{salt}-{i:03d}", "n": [i, i + 0.5]} for i in range(b.MAX_ENUM)]
    heavy = [
        {"enum": enum},
        {"type": ["string", "number", "array", "object"], "minLength": 3, "maxLength": 100, "minimum": 1,
         "multipleOf": 0.001, "minItems": 2, "uniqueItems": True, "minProperties": 3, "maxProperties": 9},
        {"const": {"k": "x" * 200, "n": list(range(50))}},
        {"type": "array", "uniqueItems": True, "maxItems": 5},
        {"type": "number", "multipleOf": 7.3, "exclusiveMaximum": 1e9},
    ]
    return [heavy[i % len(heavy)] for i in range(width)]


def _deep(branches: int) -> dict[str, Any]:
    from skillcore.hosted import schema_bounds as b

    levels = b.MAX_SCHEMA_DEPTH // 3 - 1  # a level is three deep: the branch, its child and the reference
    defs: dict[str, Any] = {}
    for level in range(levels):
        below = {"$ref": f"#/$defs/v{level + 1}"} if level + 1 < levels else {}
        defs[f"v{level}"] = {"anyOf": [*_leaves(branches - 1, level),
                                       {"type": ["array", "object", "string", "number", "boolean", "null"],
                                        "uniqueItems": True, "items": below, "additionalProperties": below}]}
    return {"type": "object", "$defs": defs, "additionalProperties": {"$ref": "#/$defs/v0"}}


def _chained(links: int) -> dict[str, Any]:
    from skillcore.hosted import schema_bounds as b

    defs: dict[str, Any] = {f"w{i}": {"allOf": [{"$ref": f"#/$defs/w{i + 1}"}], "uniqueItems": True}
                            for i in range(links)}
    defs[f"w{links}"] = {"type": "array", "uniqueItems": True, "items": {"enum": _leaves(1, 99)[0]["enum"]}}
    return {"type": "object", "$defs": defs, "properties": {"a": {"$ref": "#/$defs/w0"}},
            "additionalProperties": {"type": "array", "uniqueItems": True, "items": {
                "type": "object", "uniqueItems": True, "additionalProperties": {
                    "anyOf": _leaves(b.MAX_FANOUT - 2, 7)}}}}


def _largest_accepted(build: Any, top: int) -> dict[str, Any]:
    from skillcore.hosted import schema_bounds

    for size in range(top, 0, -1):
        schema: dict[str, Any] = build(size)
        try:
            schema_bounds.check(schema)
        except schema_bounds.SchemaRefused:
            continue
        return schema
    raise AssertionError("no accepted schema")


def worst_schemas() -> dict[str, dict[str, Any]]:
    """The costliest shapes the snapshot's caps let through (each passes schema_bounds.check): the widest
    `anyOf` at every depth, and the longest chain of references to one value."""
    from skillcore.hosted import schema_bounds as b

    enum = _leaves(1, 5)[0]["enum"]
    enums = {"type": "object", "additionalProperties": {
        "type": "array", "uniqueItems": True, "items": {
            "type": "array", "uniqueItems": True, "items": {"enum": enum, "minimum": 3, "maxLength": 2}}}}
    return {"widest anyOf at every depth": _largest_accepted(_deep, b.MAX_FANOUT),
            "longest reference chain": _largest_accepted(_chained, b.MAX_FANOUT),
            "largest enums everywhere": enums}


def largest_arguments() -> dict[str, Any]:
    """Arguments that fill the caps (each passes schema_bounds.limit_errors)."""
    from skillcore.hosted import schema_bounds as b

    count = min(b.MAX_ARRAY_ITEMS, b.MAX_ARGUMENT_NODES // 5 - 2)  # an object is 5 values
    distinct = [{"k": f"value-9-{i:03d}", "n": [i % 256, i + 0.5]} for i in range(count)]
    nested: Any = "leaf"
    for _ in range(b.MAX_ARGUMENT_DEPTH - 2):
        nested = [nested, {"k": 1}]
    grids = {}
    for rows in (b.MAX_ARRAY_ITEMS, b.MAX_ARRAY_ITEMS // 2, b.MAX_ARRAY_ITEMS // 8):
        per_row = (b.MAX_ARGUMENT_NODES - 2) // rows - 1
        grids[f"{rows} rows of {per_row} numbers"] = {"a": [[0] * per_row for _ in range(rows)]}
    text = "a" * (b.MAX_STRING_LENGTH - 10)
    return {
        f"{count} distinct objects": {"a": distinct},
        **grids,
        f"{b.MAX_ARGUMENT_DEPTH} levels": {"a": nested, "b": nested},
        "strings at the length cap": {"a": text, "b": [text, text[:-1], text[:-2]]},
    }


def measure(schema: dict[str, Any], arguments: Any, runs: int = 3) -> float:
    """Seconds of schema_bounds.validation_errors (the validator built inside, as a call builds it)."""
    from skillcore.hosted import schema_bounds

    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        schema_bounds.validation_errors(schema, arguments)
        best = min(best, time.perf_counter() - started)
    return best


def cases() -> list[tuple[str, str, dict[str, Any], Any]]:
    from skillcore.hosted import schema_bounds

    found = []
    for schema_name, schema in worst_schemas().items():
        schema_bounds.check(schema)
        for arguments_name, arguments in largest_arguments().items():
            assert not schema_bounds.limit_errors(arguments), arguments_name
            found.append((schema_name, arguments_name, schema, arguments))
    return found


def run(report: Any, *, quick: bool) -> float:
    from skillcore.hosted import schema_bounds

    report.heading("Hosted call arguments: validation on the caps' worst case")
    rows, worst = [], 0.0
    for schema_name, arguments_name, schema, arguments in cases():
        seconds = measure(schema, arguments, runs=2 if quick else 5)
        size = len(json.dumps(arguments, separators=(",", ":")).encode())
        rows.append((schema_name, arguments_name, f"{size / 1024:.1f}", f"{seconds * 1000:.2f}"))
        worst = max(worst, seconds)
    report.table(["schema", "arguments", "KiB", "ms"], rows, align="llrr")
    builds = []
    for schema in worst_schemas().values():
        schema_bounds._compiled.cache_clear()
        started = time.perf_counter()
        schema_bounds.validator_of(schema)
        builds.append(time.perf_counter() - started)
    report.line(f"  compiling a schema (a tool's first call in a function instance, then kept): at most "
                f"{max(builds) * 1000:.1f} ms for these schemas")
    worst_ms = worst * 1000
    verdict = report.verdict(SECTION, "worst validation (ms)", f"{worst_ms:.2f}", f"<= {BUDGET_MS:.0f}",
                             worst_ms <= BUDGET_MS)
    report.line(f"  worst case: {worst_ms:.2f} ms (budget {BUDGET_MS:.0f} ms, fan-out cap "
                f"{schema_bounds.MAX_FANOUT}, {schema_bounds.MAX_ARGUMENT_NODES} values): {verdict}")
    return worst
