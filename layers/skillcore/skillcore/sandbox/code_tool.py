"""A code tool as the ToolRunner runs it (tools/runner.py `RunnableTool`): PolicyGate over the skill's declared
permissions, the call cap, the input checked against the manifest's input schema, the execution record, the
module run in the sandbox, the output checked against the output schema, and the audit of the outcome with its
code (`sandbox_*`, `host_call_denied`, `invalid_input`, `invalid_output`), like any built-in tool.

    tool = CodeTool(skill_manifest, decode_manifest(raw), wasm_bytes, precompiled=artifact)
    outcome = runner.run(tool, skill_manifest, call, raw_input, grants, HostPorts(...))

`ports` is a `sandbox.host.HostPorts`, bound by the caller to the owner and the agent. The runner's own timeout
is the tool's wall-clock limit plus `RUNNER_GRACE_MS`, so the sandbox's epoch deadline (`sandbox_timeout`)
always ends a call first.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic import BaseModel, RootModel, model_validator

from skillcore.sandbox.host import HostBridge, HostPorts
from skillcore.sandbox.manifest import MAX_INPUT_BYTES, CodeToolManifest, check_permissions
from skillcore.skills.manifest import SkillManifest

RUNNER_GRACE_MS: Final = 2000  # a backstop: under CPU starvation the epoch check needs the thread to run


def schema_model(schema: dict[str, Any], name: str) -> type[RootModel[dict[str, Any]]]:
    """A pydantic model of a JSON object that `schema` (JSON Schema, draft 2020-12, offline) accepts, that is JSON
    (no NaN or infinity) and at most MAX_INPUT_BYTES as JSON."""
    state: dict[str, Any] = {}

    class Checked(RootModel[dict[str, Any]]):
        @model_validator(mode="after")
        def _schema(self) -> Checked:
            try:
                size = len(json.dumps(self.root, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode())
            except (ValueError, TypeError, RecursionError):
                raise ValueError(f"the {name} is not JSON") from None
            if size > MAX_INPUT_BYTES:
                raise ValueError(f"the {name} is larger than {MAX_INPUT_BYTES} bytes")
            validator = state.get("v")
            if validator is None:
                import jsonschema_rs

                validator = state["v"] = jsonschema_rs.Draft202012Validator(schema, validate_formats=False, offline=True)
            if not validator.is_valid(self.root):
                raise ValueError(f"the {name} does not match the tool's schema")
            return self

    Checked.__name__ = f"CodeTool{name.capitalize()}"
    return Checked


class CodeTool:
    def __init__(self, skill: SkillManifest, manifest: CodeToolManifest, wasm: bytes, *,
                 precompiled: bytes | None = None, max_calls_per_turn: int = 1) -> None:
        from skillcore.sandbox.modules import module_digest

        check_permissions(manifest, skill)
        self.skill = skill
        self.manifest = manifest
        self.digest = module_digest(wasm)
        self._wasm = wasm
        self._precompiled = precompiled
        self._max_calls = max_calls_per_turn
        self._input = schema_model(manifest.input_schema, "input")
        self._output = schema_model(manifest.output_schema, "output")

    @property
    def precompiled(self) -> bytes | None:
        return self._precompiled

    @property
    def tool_id(self) -> str:
        return self.manifest.name

    @property
    def timeout_ms(self) -> int:
        return self.manifest.limits.timeout_ms + RUNNER_GRACE_MS

    @property
    def max_calls_per_turn(self) -> int:
        return self._max_calls

    @property
    def input_model(self) -> type[BaseModel]:
        return self._input

    @property
    def output_model(self) -> type[BaseModel]:
        return self._output

    @property
    def execute(self) -> Any:
        return self._execute

    def _execute(self, parsed: BaseModel, ports: HostPorts) -> dict[str, Any]:
        from skillcore.sandbox import modules, runtime

        module = modules.load(self._wasm, precompiled=self._precompiled, digest=self.digest)
        arguments = parsed.model_dump(mode="json")
        return runtime.invoke(module, self.manifest, arguments, HostBridge(self.manifest, self.skill, ports))
