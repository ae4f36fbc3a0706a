"""The WebAssembly runtime stays out of every cold start: no function's handler, imported as deployed, loads
wasmtime, and importing the sandbox's modules does not either (it loads on the first code tool call).
`make bench`'s sandbox section measures what that first call costs."""

from __future__ import annotations

import pytest

from tests.integration.test_lazy_imports import fresh, handler_modules, loaded

FUNCTIONS = ["RpcFunction", "ChatTurnFunction", "ScanFunction", "WorkerFunction", "HostedFunction", "McpFunction",
             "CatalogFunction"]


@pytest.mark.parametrize("logical_id", FUNCTIONS)
def test_no_function_imports_wasmtime_at_its_cold_start(logical_id: str) -> None:
    assert loaded(handler_modules(logical_id), "wasmtime", "skillcore.sandbox") == []


def test_importing_the_sandbox_does_not_load_wasmtime_until_a_call() -> None:
    code = ("import sys; import skillcore.sandbox.code_tool, skillcore.sandbox.runtime, skillcore.sandbox.modules, "
            "skillcore.sandbox.engine, skillcore.sandbox.host; print('wasmtime' in sys.modules); "
            "from skillcore.sandbox.engine import engine; engine(); print('wasmtime' in sys.modules)")
    assert fresh(code).split() == ["False", "True"]
