"""skillcore.json: what a package is to skillcore (docs/packages.md "skillcore.json").

- `skillId` (the SKILL.md `name`), `version` (semver), `publisher` (a registered publisher's id; a package a
  user exports names none), `compatibility.skillcore` (a semver range the server's version must satisfy);
- `permissions`: each `{code, riskLevel, approvalMode}`, the most the skill may ever ask for;
- `protocol`: the user-capability structure itself (the body of `POST /rpc/user-capabilities`: name,
  displayName, whenToUse, workflow, platformCapabilityIds, toolBindings), never free Markdown: the server
  renders the protocol from it, quoting every text (capabilities/protocol.py);
- `remotes`: the hosted endpoints it needs, as the MCP registry's server.json `remotes` (`type`
  `streamable-http` or `sse`, an `https` `url`);
- `tools`: code tools (`tools/<name>.wasm`, the WebAssembly runtime's): the module's path and SHA-256, and the
  sandbox's manifest of the tool (schemas, host functions, limits: sandbox/manifest.py), checked as structure
  here and against the module by the release check (packages/code_check.py).

A pydantic model: a package is input from outside (no `from __future__ import annotations`, see shapes.py).
"""

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator

from skillcore.capabilities.structure import CreateUserCapability
from skillcore.packages import semver
from skillcore.shapes import Strict
from skillcore.skills.manifest import ApprovalMode, RiskLevel

PATH = "skillcore.json"
SCHEMA_VERSION = 1
MAX_PERMISSIONS = 10
MAX_REMOTES = 5
MAX_TOOLS = 16

SkillId = Annotated[str, StringConstraints(max_length=64, pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
PublisherId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{1,38}[a-z0-9]$")]
PermissionCode = Annotated[str, StringConstraints(pattern=r"^[a-z_]+:[a-z_]+$", max_length=64)]


class PermissionDeclaration(Strict):
    code: PermissionCode
    risk_level: RiskLevel
    approval_mode: ApprovalMode


class Compatibility(Strict):
    skillcore: str = Field(min_length=1, max_length=semver.RANGE_MAX)

    @field_validator("skillcore")
    @classmethod
    def _range(cls, value: str) -> str:
        semver.check_range(value)
        return value


class Remote(Strict):
    """One entry of server.json's `remotes`."""

    type: Literal["streamable-http", "sse"]
    url: str = Field(min_length=9, max_length=2048, pattern=r"^https://[^\s]+$")


class CodeTool(Strict):
    """A code tool for the WebAssembly runtime: its module in the package's `tools/` (`tools/<name>.wasm`, with its
    SHA-256) and the sandbox's manifest fields (docs/code-skills.md "The manifest"), which `decode_manifest`
    checks when the package opens (packages/package.py)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{1,38}[a-z0-9]$")
    module: str = Field(pattern=r"^tools/[a-z][a-z0-9-]{1,38}[a-z0-9]\.wasm$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    host_functions: list[str] = Field(default_factory=list, max_length=3)
    hosted_tools: list[str] = Field(default_factory=list, max_length=16)
    limits: dict[str, int] = Field(default_factory=dict, max_length=5)

    def sandbox_manifest(self) -> dict[str, Any]:
        """The tool as the sandbox's manifest reads it (sandbox/manifest.py `decode_manifest`)."""
        return {"name": self.name, "module": self.module, "inputSchema": self.input_schema,
                "outputSchema": self.output_schema, "hostFunctions": self.host_functions,
                "hostedTools": self.hosted_tools, "limits": self.limits}


class PackageManifest(Strict):
    schema_version: Literal[1]
    skill_id: SkillId
    version: str = Field(min_length=5, max_length=64)
    publisher: PublisherId | None = None
    compatibility: Compatibility
    permissions: list[PermissionDeclaration] = Field(default_factory=list, max_length=MAX_PERMISSIONS)
    protocol: CreateUserCapability
    remotes: list[Remote] = Field(default_factory=list, max_length=MAX_REMOTES)
    tools: list[CodeTool] = Field(default_factory=list, max_length=MAX_TOOLS)

    @field_validator("version")
    @classmethod
    def _semver(cls, value: str) -> str:
        semver.parse(value)
        return value

    @field_validator("permissions")
    @classmethod
    def _unique(cls, value: list[PermissionDeclaration]) -> list[PermissionDeclaration]:
        codes = [p.code for p in value]
        if len(set(codes)) != len(codes):
            raise ValueError("each permission code once")
        return value

    @field_validator("tools")
    @classmethod
    def _tools(cls, value: list[CodeTool]) -> list[CodeTool]:
        names = [t.name for t in value]
        if len(set(names)) != len(names):
            raise ValueError("each code tool name once")
        if any(t.module != f"tools/{t.name}.wasm" for t in value):
            raise ValueError("a code tool's module is tools/<name>.wasm")
        return value
