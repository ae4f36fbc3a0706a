"""A package opened: its archive read within the limits (packages/archive.py), its SKILL.md and skillcore.json
parsed, its evals read, and the files it may hold checked. Shared by the publisher's tool (skillcore_pack), the
import of a package as a user capability and the release review; structure only: the defences, the permission
check and the evals are the release check's (packages/checks.py).

The files a package may hold, inside its one folder named after the skill:
`SKILL.md` and `skillcore.json` (required), `LICENSE`, `LICENSE.txt`, `README.md`, `evals/*.json`,
`references/*.md`, and `tools/<name>.wasm` for each code tool skillcore.json lists (its SHA-256 as listed, its
manifest read by the sandbox's `decode_manifest`; a module no tool lists is `tool_unlisted`, a listed one
missing `required`); any other file is `file_not_allowed`. The module itself is the release check's
(packages/code_check.py: exports, imports, size, the tool's evals).
"""

from __future__ import annotations

import json
import re
from typing import Any

from msgspec import Struct
from pydantic import ValidationError

from skillcore.errors import PackageInvalid
from skillcore.packages import archive, limits, skill_md
from skillcore.packages.digest import package_digest
from skillcore.packages.manifest import PATH as MANIFEST
from skillcore.packages.manifest import PackageManifest
from skillcore.packages.skill_md import SkillMd

TOP_FILES = frozenset({skill_md.PATH, MANIFEST, "LICENSE", "LICENSE.txt", "README.md"})
FOLDERS = {"evals": re.compile(r"^evals/[a-z0-9][a-z0-9_-]{0,63}\.json$"),
           "references": re.compile(r"^references/[A-Za-z0-9][A-Za-z0-9_-]{0,63}\.md$")}
TOOLS = re.compile(r"^tools/[a-z][a-z0-9-]{1,38}[a-z0-9]\.wasm$")
EVAL_INPUT_MAX = 500
EVAL_EXPECT_MAX = 200


class EvalCase(Struct, frozen=True, kw_only=True):
    """One case of `evals/*.json`: a user message the offline model answers with the package's protocol in
    its system blocks; the reply must contain every `replyContains` text and none of `replyNotContains`.
    A code tool's case names the `tool` instead: its `arguments` run in the sandbox, and the output must hold
    every member of `output` with that value."""

    source: str  # the file it came from
    case_id: str
    input: str = ""
    reply_contains: tuple[str, ...] = ()
    reply_not_contains: tuple[str, ...] = ()
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    output: dict[str, Any] | None = None


class Package(Struct, frozen=True, kw_only=True):
    folder: str
    files: dict[str, bytes]
    skill: SkillMd
    manifest: PackageManifest
    evals: tuple[EvalCase, ...]
    digest: str  # the canonical digest (packages/digest.py), what a signature signs


def _json(path: str, data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise PackageInvalid("a JSON file of the package is not valid UTF-8 JSON", path=path, rule="json") from None


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def pointer(loc: tuple[Any, ...]) -> str:
    return "/" + "/".join(str(part) for part in loc) if loc else ""


def parse_manifest(data: bytes) -> PackageManifest:
    raw = _json(MANIFEST, data)
    try:
        return PackageManifest.model_validate(raw)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        rule = "required" if first["type"] == "missing" else (
            "unknown_field" if first["type"] == "extra_forbidden" else "schema")
        raise PackageInvalid(f"skillcore.json: {first['msg']}", path=f"{MANIFEST}#{pointer(first['loc'])}",
                             rule=rule) from None


def _text_list(raw: Any, path: str, key: str, limit: int) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or len(value) > 10 or not all(
            isinstance(v, str) and 0 < len(v) <= limit for v in value):
        raise PackageInvalid("an eval's expectation is a list of at most 10 texts", path=f"{path}#/{key}",
                             rule="eval_case")
    return tuple(value)


def parse_evals(files: dict[str, bytes]) -> tuple[EvalCase, ...]:
    cases: list[EvalCase] = []
    for path in sorted(p for p in files if p.startswith("evals/")):
        raw = _json(path, files[path])
        if not isinstance(raw, dict) or set(raw) != {"cases"} or not isinstance(raw["cases"], list):
            raise PackageInvalid("an evals file is {\"cases\": [...]}", path=path, rule="eval_file")
        for i, case in enumerate(raw["cases"]):
            at = f"{path}#/cases/{i}"
            if isinstance(case, dict) and "tool" in case:
                cases.append(_tool_case(path, at, case))
                if len(cases) > limits.MAX_EVAL_CASES:
                    raise PackageInvalid(f"a package has at most {limits.MAX_EVAL_CASES} eval cases", path=path,
                                         rule="too_many_evals")
                continue
            if not isinstance(case, dict) or not set(case) <= {"id", "input", "replyContains", "replyNotContains"}:
                raise PackageInvalid("an eval case is {id, input, replyContains?, replyNotContains?}", path=at,
                                     rule="eval_case")
            case_id, text = case.get("id"), case.get("input")
            if not isinstance(case_id, str) or not re.match(r"^[A-Za-z0-9_-]{1,64}$", case_id):
                raise PackageInvalid("an eval case needs an id", path=f"{at}/id", rule="eval_case")
            if not isinstance(text, str) or not text.strip() or len(text) > EVAL_INPUT_MAX:
                raise PackageInvalid("an eval case needs an input of 1..500 characters", path=f"{at}/input",
                                     rule="eval_case")
            cases.append(EvalCase(source=path, case_id=case_id, input=text,
                                  reply_contains=_text_list(case, at, "replyContains", EVAL_EXPECT_MAX),
                                  reply_not_contains=_text_list(case, at, "replyNotContains", EVAL_EXPECT_MAX)))
            if len(cases) > limits.MAX_EVAL_CASES:
                raise PackageInvalid(f"a package has at most {limits.MAX_EVAL_CASES} eval cases", path=path,
                                     rule="too_many_evals")
    return tuple(cases)


def _tool_case(path: str, at: str, case: dict[str, Any]) -> EvalCase:
    """A code tool's eval case: {id, tool, arguments, output}."""
    if set(case) != {"id", "tool", "arguments", "output"}:
        raise PackageInvalid("a code tool's eval case is {id, tool, arguments, output}", path=at, rule="eval_case")
    case_id, tool = case["id"], case["tool"]
    if not isinstance(case_id, str) or not re.match(r"^[A-Za-z0-9_-]{1,64}$", case_id):
        raise PackageInvalid("an eval case needs an id", path=f"{at}/id", rule="eval_case")
    if not isinstance(tool, str) or not isinstance(case["arguments"], dict) or not isinstance(case["output"], dict):
        raise PackageInvalid("a code tool's eval case names a tool, its arguments and the output's members",
                             path=at, rule="eval_case")
    return EvalCase(source=path, case_id=case_id, tool=tool, arguments=case["arguments"], output=case["output"])


def check_layout(files: dict[str, bytes]) -> None:
    for path in sorted(files):
        if path in TOP_FILES or any(p.match(path) for p in FOLDERS.values()) or TOOLS.match(path):
            continue
        raise PackageInvalid("a package may not hold this file", path=path, rule="file_not_allowed")
    for required in (skill_md.PATH, MANIFEST):
        if required not in files:
            raise PackageInvalid(f"a package needs {required}", path=required, rule="required")


def check_tools(manifest: PackageManifest, files: dict[str, bytes]) -> None:
    """Each listed code tool's module is in the package with its SHA-256, its manifest reads as the sandbox's,
    and every module in `tools/` is listed (structure only: the module itself is the release check's)."""
    import hashlib

    from skillcore.sandbox.manifest import decode_manifest

    listed = {t.module for t in manifest.tools}
    for path in sorted(files):
        if path.startswith("tools/") and path not in listed:
            raise PackageInvalid("skillcore.json lists no code tool with this module", path=path, rule="tool_unlisted")
    for i, tool in enumerate(manifest.tools):
        at = f"{MANIFEST}#/tools/{i}"
        if tool.module not in files:
            raise PackageInvalid("a code tool's module is missing", path=tool.module, rule="required")
        if hashlib.sha256(files[tool.module]).hexdigest() != tool.sha256:
            raise PackageInvalid("a code tool's module does not match its sha256", path=f"{at}/sha256",
                                 rule="checksum")
        try:
            decode_manifest(tool.sandbox_manifest())
        except ValueError:
            raise PackageInvalid("a code tool's manifest is not valid", path=at, rule="tool_manifest") from None


def from_files(folder: str, files: dict[str, bytes]) -> Package:
    """A package from its files (the zip's, or a folder's on disk)."""
    check_layout(files)
    try:
        text = files[skill_md.PATH].decode("utf-8")
    except UnicodeDecodeError:
        raise PackageInvalid("SKILL.md is not UTF-8", path=skill_md.PATH, rule="encoding") from None
    skill = skill_md.parse(text, folder=folder)
    manifest = parse_manifest(files[MANIFEST])
    if manifest.skill_id != skill.name:
        raise PackageInvalid("skillId must equal SKILL.md's name", path=f"{MANIFEST}#/skillId", rule="name_mismatch")
    check_tools(manifest, files)
    return Package(folder=folder, files=files, skill=skill, manifest=manifest, evals=parse_evals(files),
                   digest=package_digest(files))


def open_package(data: bytes) -> Package:
    """A package from its zip's bytes, or PackageInvalid naming the path and the rule."""
    folder, files = archive.read_zip(data)
    return from_files(folder, files)

