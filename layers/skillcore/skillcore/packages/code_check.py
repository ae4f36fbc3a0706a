"""The release check's step for code tools (`code_tools`) and what publishing adds for them.

For each tool skillcore.json lists (its module's SHA-256 and its manifest were checked when the package opened):

- the module compiles within the sandbox's size limit (`module_invalid`, `module_too_large`);
- it exports `memory`, `alloc` and `run` of the ABI's types (`abi_exports`);
- it imports only the host functions its manifest declares (`undeclared_import`);
- each host function's permission is one the package declares (`permission_undeclared`);
- the package's eval cases for the tool pass: the arguments run in the sandbox with the tool's own limits, in an
  empty world: the package's declared permissions held, no memory (`memory.search` answers none) and no hosted
  endpoint (`hosted.call` answers `unavailable`), so a tool's evals test its computation and its handling of an
  empty answer; the output must hold every member the case names with that value (`eval_failed`,
  `<file>#<case id>`); a tool with no case is `no_evals`.

Publishing precompiles every tool's module (`skillcore.sandbox.modules.precompile`) and the service stores the
artifact beside the package's bytes: native code made here from the reviewed module, never taken from a package.

Findings name paths and rules only, as every check's. The sandbox (and wasmtime) load with the first package that
has a code tool.
"""

from __future__ import annotations

from typing import Any

from skillcore.errors import SandboxFailure
from skillcore.packages.models import CheckResult, Finding
from skillcore.packages.package import Package
from skillcore.skills.manifest import PermissionRequirement, SkillKind, SkillManifest

MANIFEST = "skillcore.json"
RELEASE_CHECK = "release-check"


def skill_manifest(package: Package) -> SkillManifest:
    """The skill a package's code tools run as: its id, version and declared permissions (PolicyGate reads these),
    as an installed skill's serving version (`source` package: the ToolRunner counts its outcomes for its canary).
    Named by its id: a publisher's texts are never a name the server speaks."""
    manifest = package.manifest
    return SkillManifest(
        skill_id=manifest.skill_id, version=manifest.version, kind=SkillKind.TOOL, source="package",
        name=manifest.skill_id[:60], description=f"{manifest.skill_id} (code tools)",
        permissions=tuple(PermissionRequirement(code=p.code, risk_level=p.risk_level, approval_mode=p.approval_mode)
                          for p in manifest.permissions),
    )


def _tool_findings(package: Package, skill: SkillManifest, index: int) -> list[Finding]:
    from skillcore.sandbox import modules, runtime
    from skillcore.sandbox.manifest import check_permissions, decode_manifest

    listed = package.manifest.tools[index]
    at = f"{MANIFEST}#/tools/{index}"
    tool = decode_manifest(listed.sandbox_manifest())
    try:
        check_permissions(tool, skill)
    except ValueError:
        return [Finding(path=f"{at}/hostFunctions", rule="permission_undeclared")]
    wasm = package.files[listed.module]
    try:
        module = modules.load(wasm)
        runtime.check_imports(module, tool)
        runtime.check_exports(module, tool)
    except SandboxFailure as failure:
        reason = failure.details.get("reason", failure.code)
        rule = {"invalid_module": "module_invalid"}.get(reason, reason)
        return [Finding(path=listed.module, rule=rule)]
    return []


def _run_case(package: Package, skill: SkillManifest, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    from skillcore.sandbox import modules, runtime
    from skillcore.sandbox.code_tool import CodeTool
    from skillcore.sandbox.host import HostBridge, HostPorts
    from skillcore.sandbox.manifest import decode_manifest

    listed = next(t for t in package.manifest.tools if t.name == name)
    tool = decode_manifest(listed.sandbox_manifest())
    wasm = package.files[listed.module]
    checked = CodeTool(skill, tool, wasm)
    try:
        parsed = checked.input_model.model_validate(arguments)
        held = _declared_grants(skill)
        ports = HostPorts(user_id=RELEASE_CHECK, agent_id=RELEASE_CHECK, call_id=RELEASE_CHECK,
                          grants=lambda: held, memories=list)
        output = runtime.invoke(modules.load(wasm), tool, parsed.model_dump(mode="json"),
                                HostBridge(tool, skill, ports))
        return checked.output_model.model_validate(output).model_dump()
    except (SandboxFailure, ValueError):
        return None


def _declared_grants(skill: SkillManifest) -> tuple[Any, ...]:
    """The package's declared permissions as grants of the release check's own empty world."""
    from datetime import UTC, datetime

    from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant

    at = datetime(2000, 1, 1, tzinfo=UTC)
    return tuple(PermissionGrant(grant_id=f"{RELEASE_CHECK}-{p.code}", user_id=RELEASE_CHECK, skill_id=skill.skill_id,
                                 skill_version=skill.version, permission_code=p.code, scope=GrantScope.user(),
                                 status=GrantStatus.ACTIVE, granted_at=at, updated_at=at)
                 for p in skill.permissions)


def check(package: Package) -> CheckResult | None:
    """The `code_tools` step, or None for a package without code tools."""
    tools = package.manifest.tools
    if not tools:
        return None
    skill = skill_manifest(package)
    found: list[Finding] = []
    failed: list[str] = []
    ran = 0
    names = {t.name for t in tools}
    for i, listed in enumerate(tools):
        problems = _tool_findings(package, skill, i)
        found += problems
        cases = [c for c in package.evals if c.tool == listed.name]
        if not cases:
            found.append(Finding(path=f"{MANIFEST}#/tools/{i}", rule="no_evals"))
        if problems:
            continue
        for case in cases:
            ran += 1
            output = _run_case(package, skill, listed.name, case.arguments or {})
            expected = case.output or {}
            if output is None or any(output.get(k) != v for k, v in expected.items()):
                failed.append(f"{case.source}#{case.case_id}")
    for case in package.evals:
        if case.tool is not None and case.tool not in names:
            found.append(Finding(path=f"{case.source}#{case.case_id}", rule="unknown_tool"))
    found += [Finding(path=f, rule="eval_failed") for f in failed]
    return CheckResult(check="code_tools", passed=not found, findings=tuple(found), cases=ran,
                       failed_cases=tuple(failed))


def precompiled(package: Package) -> dict[str, bytes]:
    """Each code tool's module precompiled for this engine, by tool name (the publish step's)."""
    from skillcore.sandbox.modules import precompile

    return {t.name: precompile(package.files[t.module]) for t in package.manifest.tools}
