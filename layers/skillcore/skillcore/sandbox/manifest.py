"""The manifest of one code tool, as a package's skillcore.json embeds it (docs/code-skills.md, "The manifest").

    {"name": "streak-score", "module": "tools/streak-score.wasm",
     "inputSchema": {"type": "object", ...}, "outputSchema": {"type": "object", ...},
     "hostFunctions": ["memory.search", "log"], "hostedTools": [],
     "limits": {"fuel": 100000000, "memoryBytes": 67108864, "timeoutMs": 1000, "outputBytes": 65536,
                "hostCalls": 8}}

Every field is checked when decoded (`decode_manifest`), and a limit can only be lowered below its ceiling, never
raised past it. A host function needs the permission `HOST_PERMISSIONS` names, declared by the skill that carries
the tool (`check_permissions`); the person's grant for it is checked at every call (sandbox/host.py).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Final

import msgspec
from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore.skills.manifest import SkillManifest

TOOL_NAME: Final = re.compile(r"[a-z][a-z0-9-]{1,38}[a-z0-9]")
MODULE_PATH: Final = re.compile(r"tools/[a-z0-9][a-z0-9._-]{0,62}\.wasm")
HOSTED_TOOL: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
MAX_SCHEMA_BYTES: Final = 16 * 1024
MAX_HOSTED_TOOLS: Final = 16
MAX_MANIFEST_BYTES: Final = 64 * 1024


class HostFunction(StrEnum):
    """The only functions a module may import (module `skillcore`), each only when its manifest declares it."""

    MEMORY_SEARCH = "memory.search"
    HOSTED_CALL = "hosted.call"
    LOG = "log"


# The permission each host function is checked against at call time (None: no protected resource).
HOST_PERMISSIONS: Final[dict[HostFunction, str | None]] = {
    HostFunction.MEMORY_SEARCH: "memory:read",
    HostFunction.HOSTED_CALL: "hosted_workflow:invoke",
    HostFunction.LOG: None,
}


class Ceiling(Struct, frozen=True):
    default: int
    floor: int
    ceiling: int


# name -> (default, floor, ceiling). The defaults hold when a manifest gives no limit.
LIMITS: Final = {
    "fuel": Ceiling(100_000_000, 10_000, 1_000_000_000),   # instructions (wasmtime fuel units)
    "memory_bytes": Ceiling(64 << 20, 64 << 10, 128 << 20),  # linear memory, bytes
    "timeout_ms": Ceiling(1_000, 10, 10_000),                # wall clock, host calls included
    "output_bytes": Ceiling(64 << 10, 16, 1 << 20),          # the JSON the module answers
    "host_calls": Ceiling(8, 0, 32),                         # host function calls per invocation
}
MAX_INPUT_BYTES: Final = 64 << 10  # the JSON written into the module's memory


def _default(name: str) -> Any:
    return msgspec.field(default=LIMITS[name].default)


class CodeToolLimits(Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    fuel: int = _default("fuel")
    memory_bytes: int = _default("memory_bytes")
    timeout_ms: int = _default("timeout_ms")
    output_bytes: int = _default("output_bytes")
    host_calls: int = _default("host_calls")

    def __post_init__(self) -> None:
        for name, bound in LIMITS.items():
            value = getattr(self, name)
            if type(value) is not int or not bound.floor <= value <= bound.ceiling:
                raise ValueError(f"limits.{name} must be an integer from {bound.floor} to {bound.ceiling}")


class CodeToolManifest(Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    name: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    module: str | None = None  # the module's path inside the package (the package format's concern)
    host_functions: tuple[HostFunction, ...] = ()
    hosted_tools: tuple[str, ...] = ()  # the remote tool names hosted.call may name
    limits: CodeToolLimits = msgspec.field(default_factory=CodeToolLimits)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not TOOL_NAME.fullmatch(self.name):
            raise ValueError("name must be 3-40 of a-z, 0-9 and -, starting with a letter")
        if self.module is not None and not MODULE_PATH.fullmatch(self.module):
            raise ValueError("module must be a path tools/<name>.wasm")
        for field in ("input_schema", "output_schema"):
            schema = getattr(self, field)
            if not isinstance(schema, dict) or schema.get("type") != "object":
                raise ValueError(f"{field} must be a JSON schema of type object")
            if len(msgspec.json.encode(schema)) > MAX_SCHEMA_BYTES:
                raise ValueError(f"{field} must be at most {MAX_SCHEMA_BYTES} bytes")
        functions = tuple(HostFunction(f) for f in self.host_functions)
        if len(set(functions)) != len(functions):
            raise ValueError("hostFunctions must be unique")
        force_setattr(self, "host_functions", functions)
        hosted = tuple(self.hosted_tools)
        if len(hosted) > MAX_HOSTED_TOOLS or len(set(hosted)) != len(hosted) or not all(
            isinstance(t, str) and HOSTED_TOOL.fullmatch(t) for t in hosted
        ):
            raise ValueError(f"hostedTools must be at most {MAX_HOSTED_TOOLS} unique tool names")
        if hosted and HostFunction.HOSTED_CALL not in functions:
            raise ValueError("hostedTools needs the hosted.call host function")
        force_setattr(self, "hosted_tools", hosted)

    def declares(self, function: HostFunction) -> bool:
        return function in self.host_functions


def decode_manifest(raw: bytes | str | dict[str, Any]) -> CodeToolManifest:
    """A manifest from its JSON (or the object a package's `skillcore.json` holds); ValueError names what is wrong."""
    try:
        if isinstance(raw, dict):
            return msgspec.convert(raw, CodeToolManifest)
        if len(raw) > MAX_MANIFEST_BYTES:
            raise ValueError(f"a code tool manifest is at most {MAX_MANIFEST_BYTES} bytes")
        return msgspec.json.decode(raw, type=CodeToolManifest)
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from None


def check_permissions(tool: CodeToolManifest, skill: SkillManifest) -> None:
    """Every declared host function's permission must be one the skill declares (the package's own list):
    a tool cannot ask for more than its package shows the person before install."""
    for function in tool.host_functions:
        code = HOST_PERMISSIONS[function]
        if code is not None and skill.requirement(code) is None:
            raise ValueError(f"host function {function.value} needs the permission {code}, which the skill does not declare")
