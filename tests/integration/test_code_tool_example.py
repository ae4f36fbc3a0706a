"""The example code tool in AssemblyScript (examples/code-tools/streak-score.ts), built by `make code-tools` with
the project's pinned compiler, run through the sandbox with its schemas checked, compiled and precompiled."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from skillcore.sandbox import modules, runtime
from skillcore.sandbox.code_tool import CodeTool
from skillcore.sandbox.host import HostBridge
from skillcore.sandbox.manifest import decode_manifest
from tests.sandbox_support import SKILL, ports
from tests.support import ROOT

MANIFEST = {
    "name": "streak-score", "module": "tools/streak-score.wasm",
    "inputSchema": {"type": "object", "required": ["days"], "additionalProperties": False,
                    "properties": {"days": {"type": "array", "maxItems": 366, "items": {"enum": [0, 1]}}}},
    "outputSchema": {"type": "object", "required": ["current", "longest", "done", "days"],
                     "properties": {k: {"type": "integer", "minimum": 0}
                                    for k in ("current", "longest", "done", "days")}},
    "limits": {"fuel": 5_000_000, "memoryBytes": 1 << 20, "timeoutMs": 200, "outputBytes": 256, "hostCalls": 0},
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("code-tools")
    subprocess.run(["make", "-s", "code-tools", f"CODE_TOOLS_OUT={out}"], cwd=ROOT, check=True,
                   capture_output=True, text=True, timeout=300)
    return (Path(out) / "streak-score.wasm").read_bytes()


def call(tool: CodeTool, wasm: bytes, arguments: dict[str, Any], artifact: bytes | None = None) -> Any:
    parsed = tool.input_model.model_validate(arguments)
    module = modules.load(wasm, precompiled=artifact)
    output = runtime.invoke(module, tool.manifest, parsed.model_dump(mode="json"),
                            HostBridge(tool.manifest, SKILL, ports()))
    return tool.output_model.model_validate(output).model_dump()


def test_the_assemblyscript_tool_builds_to_the_abi_and_imports_nothing(built: bytes) -> None:
    modules.clear_cache()
    module = modules.load(built)
    assert list(module.imports) == []
    assert {e.name for e in module.exports} == {"memory", "alloc", "run"}


def test_the_assemblyscript_tool_scores_a_streak(built: bytes) -> None:
    tool = CodeTool(SKILL, decode_manifest(MANIFEST), built)
    assert call(tool, built, {"days": [1, 1, 0, 1, 1, 1]}) == {"current": 3, "longest": 3, "done": 5, "days": 6}
    assert call(tool, built, {"days": []}) == {"current": 0, "longest": 0, "done": 0, "days": 0}
    year = [1, 0] * 183
    assert call(tool, built, {"days": year}, modules.precompile(built)) == {
        "current": 0, "longest": 1, "done": 183, "days": 366}
