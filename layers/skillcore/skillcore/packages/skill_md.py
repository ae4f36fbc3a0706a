"""SKILL.md under the Agent Skills specification: YAML front matter between `---` lines, then a Markdown body.

Front matter fields (the specification's): `name` (1..64 lowercase letters, digits and hyphens, no leading,
trailing or double hyphen, equal to the skill's folder), `description` (1..1024 characters), and optionally
`license`, `compatibility` (1..500), `metadata` (a map of string keys to string values) and `allowed-tools`
(a space-separated string). Nothing else.

The layer carries no YAML library, and a package's YAML is untrusted: the front matter is read as the plain
subset the specification's examples use, `key: value` lines with plain, single- or double-quoted scalars, and
`metadata:` followed by indented `key: value` lines. Anchors, aliases, tags, flow collections, block scalars and
multi-line values are refused (`package_invalid`, rule `front_matter`); `skillcore_pack init` writes this form.
"""

from __future__ import annotations

import json
import re

from msgspec import Struct

from skillcore.errors import PackageInvalid

PATH = "SKILL.md"
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
LICENSE_MAX = 200
METADATA_MAX = 32
METADATA_VALUE_MAX = 500
FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
KEY = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]{0,63}):(?: (.*))?$")


class SkillMd(Struct, frozen=True, kw_only=True):
    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = {}
    allowed_tools: tuple[str, ...] = ()
    body: str = ""


def _bad(pointer: str, rule: str, message: str) -> PackageInvalid:
    return PackageInvalid(message, path=f"{PATH}#{pointer}" if pointer else PATH, rule=rule)


def _scalar(raw: str, pointer: str) -> str:
    text = raw.strip()
    if not text:
        raise _bad(pointer, "front_matter", "a field needs a value on its line")
    if text[0] == '"':
        try:
            value = json.loads(text)
        except ValueError:
            raise _bad(pointer, "front_matter", "a double-quoted value must be closed on its line") from None
        if not isinstance(value, str):
            raise _bad(pointer, "front_matter", "a value must be a string")
        return value
    if text[0] == "'":
        if len(text) < 2 or text[-1] != "'" or "'" in text[1:-1].replace("''", ""):
            raise _bad(pointer, "front_matter", "a single-quoted value must be closed on its line")
        return text[1:-1].replace("''", "'")
    if text[0] in "&*!|>[{@`%" or text.startswith(("- ", "? ")) or " #" in text:
        raise _bad(pointer, "front_matter", "only plain or quoted one-line values are accepted")
    if ": " in text:
        raise _bad(pointer, "front_matter", "a plain value must not hold ': ' (quote it)")
    return text


def parse(text: str, *, folder: str) -> SkillMd:
    """The SKILL.md of a package whose folder is `folder`, or PackageInvalid naming the field."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        raise _bad("", "front_matter", "SKILL.md must begin with a '---' line (YAML front matter)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise _bad("", "front_matter", "the front matter must end with a '---' line") from None
    fields: dict[str, object] = {}
    current_map: dict[str, str] | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith((" ", "\t")):
            if current_map is None or line.startswith("\t"):
                raise _bad("", "front_matter", "only metadata's entries may be indented (with spaces)")
            found = KEY.match(line.strip())
            if not found:
                raise _bad("/metadata", "front_matter", "a metadata entry is `key: value`")
            key = found.group(1)
            if key in current_map or len(current_map) >= METADATA_MAX:
                raise _bad(f"/metadata/{key}", "front_matter", "metadata keys are unique, at most 32")
            value = _scalar(found.group(2) or "", f"/metadata/{key}")
            if len(value) > METADATA_VALUE_MAX:
                raise _bad(f"/metadata/{key}", "too_long", "a metadata value is at most 500 characters")
            current_map[key] = value
            continue
        found = KEY.match(line)
        if not found:
            raise _bad("", "front_matter", "a front matter line is `key: value`")
        key, raw = found.group(1), found.group(2)
        if key not in FIELDS:
            raise _bad(f"/{key}", "unknown_field", "a field the Agent Skills specification does not define")
        if key in fields:
            raise _bad(f"/{key}", "front_matter", "a field is given twice")
        if key == "metadata":
            if raw and raw.strip():
                raise _bad("/metadata", "front_matter", "metadata's entries go on indented lines below it")
            current_map = {}
            fields[key] = current_map
            continue
        current_map = None
        fields[key] = _scalar(raw or "", f"/{key}")
    return _checked(fields, "\n".join(lines[end + 1:]), folder)


def _checked(fields: dict[str, object], body: str, folder: str) -> SkillMd:
    name = fields.get("name")
    if not isinstance(name, str):
        raise _bad("/name", "required", "SKILL.md needs a name")
    if len(name) > NAME_MAX or not NAME.match(name):
        raise _bad("/name", "name_format", "a name is 1..64 lowercase letters, digits and single hyphens")
    if name != folder:
        raise _bad("/name", "name_folder", "the name must equal the skill's folder name")
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        raise _bad("/description", "required", "SKILL.md needs a description")
    if len(description) > DESCRIPTION_MAX:
        raise _bad("/description", "too_long", "a description is at most 1024 characters")
    license_ = fields.get("license")
    if isinstance(license_, str) and len(license_) > LICENSE_MAX:
        raise _bad("/license", "too_long", "a license is at most 200 characters")
    compatibility = fields.get("compatibility")
    if isinstance(compatibility, str) and len(compatibility) > COMPATIBILITY_MAX:
        raise _bad("/compatibility", "too_long", "compatibility is at most 500 characters")
    tools = fields.get("allowed-tools")
    metadata = fields.get("metadata") or {}
    assert isinstance(metadata, dict)
    return SkillMd(
        name=name, description=description, license=license_ if isinstance(license_, str) else None,
        compatibility=compatibility if isinstance(compatibility, str) else None, metadata=dict(metadata),
        allowed_tools=tuple(tools.split()) if isinstance(tools, str) else (), body=body,
    )


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def render(skill: SkillMd) -> str:
    """SKILL.md text in the subset `parse` reads (values double-quoted)."""
    lines = ["---", f"name: {skill.name}", f"description: {_quote(skill.description)}"]
    if skill.license:
        lines.append(f"license: {_quote(skill.license)}")
    if skill.compatibility:
        lines.append(f"compatibility: {_quote(skill.compatibility)}")
    if skill.metadata:
        lines.append("metadata:")
        lines += [f"  {k}: {_quote(v)}" for k, v in skill.metadata.items()]
    if skill.allowed_tools:
        lines.append(f"allowed-tools: {_quote(' '.join(skill.allowed_tools))}")
    lines.append("---")
    return "\n".join(lines) + "\n" + skill.body
