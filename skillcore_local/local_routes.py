"""The local-only routes (never deployed): `POST /_local/scan` (the scan, then the work queue drained through
WorkerFunction) and `POST|DELETE /_local/faults` (skillcore/faults.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from skillcore_local.invoke import FunctionRegistry, ensure_layer_on_path, scheduled_function
from skillcore_local.payload import rule_name, scheduled_event
from skillcore_local.responses import (
    HttpResponse,
    error_response,
    json_response,
    log_failure,
    method_not_allowed,
)
from skillcore_local.sqs import EventSource

# docs/contract.md "The local stack": what `POST /_local/scan` answers (skillcore/work/scan.py's SUMMARY_KEYS).
SCAN_SUMMARY_KEYS = ("recovered", "claimed", "succeeded", "retried", "failed", "cancelled", "automationRuns",
                     "errors")


def parse_scan_time(payload: Any) -> datetime | None:
    """`{"time"?: ISO time with offset}` -> the time, or None for now. ValueError carries a field message."""
    if not isinstance(payload, dict):
        raise ValueError("body must be a JSON object")
    unknown = set(payload) - {"time"}
    if unknown:
        raise ValueError(f"unknown fields: {sorted(unknown)}")
    value = payload.get("time")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("time must be a string")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as error:
        raise ValueError("time must be an ISO 8601 time") from error
    if parsed.tzinfo is None:
        raise ValueError("time must carry an offset (Z or +hh:mm)")
    return parsed.astimezone(UTC)


def parse_fault(payload: Any) -> tuple[str, int, str]:
    ensure_layer_on_path()
    from skillcore.faults import FaultKind, FaultPoint

    if not isinstance(payload, dict):
        raise ValueError("body must be a JSON object")
    errors: list[dict[str, str]] = []
    unknown = set(payload) - {"point", "times", "kind"}
    errors += [{"path": name, "message": "unknown field"} for name in sorted(unknown)]
    point, times, kind = payload.get("point"), payload.get("times"), payload.get("kind")
    if point not in {p.value for p in FaultPoint}:
        errors.append({"path": "point", "message": f"one of {[p.value for p in FaultPoint]}"})
    if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= 10:
        errors.append({"path": "times", "message": "an integer from 1 to 10"})
    if kind not in {k.value for k in FaultKind}:
        errors.append({"path": "kind", "message": f"one of {[k.value for k in FaultKind]}"})
    if errors:
        raise FaultInputError(errors)
    assert isinstance(times, int)
    return str(point), times, str(kind)


class FaultInputError(ValueError):
    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__("fault is not valid")
        self.errors = errors



class LocalRoutes:
    """`/_local/scan` and `/_local/faults`; the scan is shared with the stack's schedule loop (run_scan)."""

    def __init__(self, registry: FunctionRegistry, work: EventSource) -> None:
        self.registry = registry
        self.work = work

    # -- the scan, shared by /_local/scan and the schedule loop
    def run_scan(self, when: datetime | None = None) -> Any:
        """The scan (it dispatches), then the work queue drained through WorkerFunction: the answer is the
        scan's own summary plus the workers' counts. A worker that crashed (an injected crash) fails the
        whole call, as the scan did when it worked itself; its messages were delivered again meanwhile."""
        spec = scheduled_function(self.registry.specs)
        result = self.registry.invoke(spec.logical_id, scheduled_event(when, rule_name=rule_name(spec)))
        worked, crashes = self.work.drain()
        if crashes:
            raise crashes[0]
        if not isinstance(result, dict):
            return result
        # The dispatcher's own summary (shards, messages) plus the counts its workers add up to.
        merged = {**dict.fromkeys(SCAN_SUMMARY_KEYS, 0), **result} if "messages" in result else dict(result)
        for key, value in worked.items():
            if key in merged and not isinstance(merged[key], int):
                continue
            merged[key] = int(merged.get(key, 0)) + value
        return merged


    def serve(self, method: str, path: str, body: bytes) -> HttpResponse:
        if path not in ("/_local/scan", "/_local/faults"):
            return error_response(404, "not_found", f"no local route {path}")
        allowed = ("POST",) if path == "/_local/scan" else ("DELETE", "POST")
        if method not in allowed:
            return method_not_allowed(method, path, allowed)
        if path == "/_local/faults" and method == "DELETE":
            ensure_layer_on_path()
            from skillcore import faults

            faults.clear()
            return json_response(200, {"cleared": True})
        try:
            payload = json.loads(body.decode("utf-8")) if body.strip() else {}
        # ValueError covers malformed JSON, bad UTF-8 and an integer past Python's digit limit; RecursionError
        # a deeply nested document. Uncaught, either would kill the request's thread and drop the connection.
        except (ValueError, RecursionError):
            return error_response(400, "bad_request", "body is not valid JSON")
        if path == "/_local/faults":
            return self._arm_fault(payload)
        return self._scan(payload)

    def _arm_fault(self, payload: Any) -> HttpResponse:
        try:
            point, times, kind = parse_fault(payload)
        except FaultInputError as error:
            return error_response(422, "validation_error", str(error), {"errors": error.errors})
        except ValueError as error:
            return error_response(400, "bad_request", str(error))
        from skillcore import faults

        faults.arm(point, times, kind)
        return json_response(200, {"armed": {"point": point, "times": times, "kind": kind}})

    def _scan(self, payload: Any) -> HttpResponse:
        try:
            when = parse_scan_time(payload)
        except ValueError as error:
            return error_response(
                422, "validation_error", str(error), {"errors": [{"path": "time", "message": str(error)}]}
            )
        try:
            result = self.run_scan(when)
            return json_response(200, result)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: B036 - an injected crash is a BaseException too
            log_failure("the scan handler", error)
            return error_response(
                500, "internal", "the scan handler failed; the local stack's log says where"
            )
