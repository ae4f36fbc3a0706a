"""A package's code tools: the format takes `tools/*.wasm` with their manifests, the release check validates each
module against its manifest (exports, declared imports only, size), runs the tool's eval cases in the sandbox, and
publishing precompiles each module (packages/code_check.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from skillcore.errors import PackageInvalid
from skillcore.packages import archive, blobs, checks, code_check
from skillcore.packages.package import open_package
from skillcore.sandbox import modules
from skillcore.skills.builtin import SKILLS
from tests import code_package_support as cps
from tests.sandbox_support import wasm

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MANIFESTS = {m.skill_id: m for m in SKILLS.manifests()}


def report(data: bytes):
    return checks.run(open_package(data), manifests=MANIFESTS, now=NOW)


def tool_step(data: bytes):
    return next(r for r in report(data).results if r.check == "code_tools")


def test_the_example_package_passes_every_check_and_runs_its_tool_evals() -> None:
    found = report(cps.package_zip())
    assert found.passed
    step = next(r for r in found.results if r.check == "code_tools")
    assert step.cases == 2 and step.failed_cases == ()


def test_a_package_without_code_tools_has_no_code_tools_step() -> None:
    from tests import package_support as ps

    assert [r.check for r in report(ps.package_zip()).results] == [
        "structure", "compatibility", "defences", "permissions", "evals"]


def test_a_module_importing_what_its_manifest_does_not_declare_is_refused() -> None:
    step = tool_step(cps.package_zip(wasm=wasm("wasi_import")))
    assert not step.passed and ("tools/streak-score.wasm", "undeclared_import") in {
        (f.path, f.rule) for f in step.findings}


def test_a_module_without_the_abi_exports_is_refused() -> None:
    from wasmtime import wat2wasm

    bare = bytes(wat2wasm('(module (memory (export "memory") 1))'))
    step = tool_step(cps.package_zip(wasm=bare))
    assert {(f.path, f.rule) for f in step.findings} >= {("tools/streak-score.wasm", "abi_exports")}


def test_bytes_that_are_no_module_are_refused() -> None:
    step = tool_step(cps.package_zip(wasm=b"\0asm\x01\0\0\0garbage"))
    assert {(f.path, f.rule) for f in step.findings} == {("tools/streak-score.wasm", "module_invalid")}


def test_a_tool_whose_evals_fail_or_hit_a_limit_is_refused() -> None:
    # echo answers its input: the output lacks the expected members
    echo = tool_step(cps.package_zip(wasm=wasm("echo")))
    assert echo.failed_cases == ("evals/streak-score.json#a-week", "evals/streak-score.json#no-days")
    # an endless loop runs out of fuel within the tool's own limits
    loop = tool_step(cps.package_zip(wasm=wasm("loop")))
    assert not loop.passed and len(loop.failed_cases) == 2


def test_a_host_function_the_package_does_not_declare_a_permission_for_is_refused() -> None:
    step = tool_step(cps.package_zip(tool_changes={"hostFunctions": ["memory.search"]}))
    assert ("skillcore.json#/tools/0/hostFunctions", "permission_undeclared") in {
        (f.path, f.rule) for f in step.findings}


def test_a_tool_without_eval_cases_is_refused() -> None:
    files = cps.files()
    del files["evals/streak-score.json"]
    step = tool_step(archive.write_zip(cps.SKILL_ID, files))
    assert {(f.path, f.rule) for f in step.findings} == {("skillcore.json#/tools/0", "no_evals")}


@pytest.mark.parametrize(("change", "path", "rule"), [
    ("sha", "skillcore.json#/tools/0/sha256", "checksum"),
    ("missing", "tools/streak-score.wasm", "required"),
    ("unlisted", "tools/other-tool.wasm", "tool_unlisted"),
    ("limit", "skillcore.json#/tools/0", "tool_manifest"),
])
def test_the_format_checks_each_tool_module_and_manifest(change: str, path: str, rule: str) -> None:
    files = cps.files()
    body = json.loads(files["skillcore.json"])
    if change == "sha":
        body["tools"][0]["sha256"] = "0" * 64
    elif change == "missing":
        del files[cps.MODULE]
    elif change == "unlisted":
        files["tools/other-tool.wasm"] = files[cps.MODULE]
    else:
        body["tools"][0]["limits"]["fuel"] = 10**12  # past the ceiling
    files["skillcore.json"] = json.dumps(body).encode()
    with pytest.raises(PackageInvalid) as refused:
        open_package(archive.write_zip(cps.SKILL_ID, files))
    assert refused.value.details == {"path": path, "rule": rule}


def test_publishing_precompiles_each_module_for_this_engine() -> None:
    package = open_package(cps.package_zip())
    artifacts = code_check.precompiled(package)
    wasm_bytes = package.files[cps.MODULE]
    modules.clear_cache()
    module = modules.load(wasm_bytes, precompiled=artifacts[cps.TOOL])
    assert {e.name for e in module.exports} == {"memory", "alloc", "run"}
    key = blobs.artifact_key("packages/streak-coach/1.0.0/" + "a" * 64 + ".zip", cps.TOOL)
    assert key == "packages/streak-coach/1.0.0/" + "a" * 64 + ".streak-score.cwasm"
    assert blobs.BLOB_KEY.match(key)


def test_a_tool_with_host_functions_is_checked_in_an_empty_world_with_its_declared_permissions() -> None:
    # memory_search.wat calls memory.search three times and answers the last response: no memory in the check
    permissions = [{"code": "memory:read", "riskLevel": "L1", "approvalMode": "persistent"}]
    files = cps.files(wasm=wasm("memory_search"), permissions=permissions, tool_changes={
        "hostFunctions": ["memory.search"], "outputSchema": {"type": "object", "required": ["memories"]},
        "limits": {"hostCalls": 3}})
    files["evals/streak-score.json"] = json.dumps({"cases": [
        {"id": "empty", "tool": "streak-score", "arguments": {"days": []}, "output": {"memories": []}}]}).encode()
    step = tool_step(archive.write_zip(cps.SKILL_ID, files))
    assert step.passed and step.cases == 1
    # one host call more than its cap is a denial, and the case fails
    body = json.loads(files["skillcore.json"])
    body["tools"][0]["limits"] = {"hostCalls": 2}
    files["skillcore.json"] = json.dumps(body).encode()
    assert tool_step(archive.write_zip(cps.SKILL_ID, files)).failed_cases == ("evals/streak-score.json#empty",)


def test_a_release_whose_stored_package_changed_offers_no_tool_and_fails_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from skillcore.code_tools import registry, service
    from skillcore.code_tools.installed import InstalledSkill
    from skillcore.errors import PackageInvalid as Invalid

    calls: list[str] = []

    def broken(_deps: object, release_id: str) -> tuple[object, ...]:
        calls.append(release_id)
        raise Invalid("the stored package does not match its checksum", path="", rule="checksum")

    deps = service.CodeToolDeps(db=None, packages=lambda: None,  # type: ignore[arg-type]
                                installed=lambda _u: [InstalledSkill(skill_id="x-skill", version="1.0.0",
                                                                     release_id="r1")])
    monkeypatch.setattr(registry, "tools_of", broken)
    assert service.user_tools(deps, "u1") == [] and service.find(deps, "u1", "streak-score") is None
    assert calls == ["r1", "r1"]  # tried again on the next call
