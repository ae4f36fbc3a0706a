"""The package format (skillcore/packages/): the archive's limits, SKILL.md under the Agent Skills
specification, skillcore.json, semver ranges, the canonical digest and Ed25519 signatures."""

from __future__ import annotations

import contextlib
import io
import json
import stat
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcore.errors import PackageInvalid, SignatureInvalid
from skillcore.packages import archive, limits, semver, signature, skill_md
from skillcore.packages.digest import package_digest
from skillcore.packages.package import open_package
from tests import package_support as ps


def raw_zip(entries: list[tuple[str, bytes]], *, mode: int | None = None, method: int = zipfile.ZIP_DEFLATED,
            symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as z:
        for name, body in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            if symlink == name:
                info.create_system = 3
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            elif mode is not None:
                info.create_system = 3
                info.external_attr = mode << 16
            z.writestr(info, body)
    return buffer.getvalue()


def refused(data: bytes) -> PackageInvalid:
    with pytest.raises(PackageInvalid) as caught:
        open_package(data)
    return caught.value


def valid_entries(name: str = "note-tidy") -> list[tuple[str, bytes]]:
    return [(f"{name}/{path}", body) for path, body in ps.files(name).items()]


def test_a_valid_package_opens_with_its_parts() -> None:
    package = open_package(ps.package_zip())
    assert package.folder == "note-tidy" and package.skill.name == "note-tidy"
    assert package.skill.license == "MIT" and package.skill.metadata == {"author": "Acme"}
    assert package.manifest.skill_id == "note-tidy" and package.manifest.version == "1.0.0"
    assert [c.case_id for c in package.evals] == ["trigger", "not-obeyed"]
    assert package.digest == package_digest(ps.files())


def test_the_same_folder_always_gives_the_same_zip_and_the_digest_ignores_the_zip() -> None:
    assert ps.package_zip() == ps.package_zip()
    stored = raw_zip(valid_entries(), method=zipfile.ZIP_STORED)
    assert stored != ps.package_zip()
    assert open_package(stored).digest == open_package(ps.package_zip()).digest


@pytest.mark.parametrize(("entries", "path", "rule"), [
    ([("note-tidy/../evil", b"x")], "note-tidy/../evil", "path_traversal"),
    ([("/etc/passwd", b"x")], "/etc/passwd", "path_traversal"),
    ([("note-tidy\\SKILL.md", b"x")], "note-tidy?SKILL.md", "path_traversal"),
    ([("C:/x/SKILL.md", b"x")], "C?/x/SKILL.md", "path_traversal"),
    ([("note-tidy/.hidden", b"x")], "note-tidy/.hidden", "path_invalid"),
    ([("note-tidy/a b.md", b"x")], "note-tidy/a?b.md", "path_invalid"),
    ([("note-tidy/SKILL.md", b"x"), ("other/SKILL.md", b"x")], "other/SKILL.md", "one_folder"),
    ([("SKILL.md", b"x")], "SKILL.md", "one_folder"),
    ([("note-tidy/SKILL.md", b"x"), ("note-tidy/skill.md", b"y")], "note-tidy/skill.md", "duplicate_name"),
])
def test_names_that_escape_or_collide_are_refused_with_their_path(
        entries: list[tuple[str, bytes]], path: str, rule: str) -> None:
    error = refused(raw_zip(entries))
    assert (error.details["path"], error.details["rule"]) == (path, rule)
    assert error.status == 422 and error.code == "package_invalid"


def test_a_duplicate_entry_name_is_refused() -> None:
    with pytest.warns(UserWarning):
        data = raw_zip([*valid_entries(), ("note-tidy/SKILL.md", b"again")])
    assert refused(data).details == {"path": "note-tidy/SKILL.md", "rule": "duplicate_name"}


def test_a_symlink_is_refused() -> None:
    data = raw_zip([*valid_entries(), ("note-tidy/references/link.md", b"/etc/passwd")],
                   symlink="note-tidy/references/link.md")
    assert refused(data).details == {"path": "note-tidy/references/link.md", "rule": "symlink"}


def test_a_zip_bomb_is_refused_before_it_is_inflated() -> None:
    bomb = raw_zip([*valid_entries(), ("note-tidy/references/bomb.md", b"a" * (limits.MAX_FILE_BYTES - 1))])
    assert len(bomb) < 2000
    assert refused(bomb).details == {"path": "note-tidy/references/bomb.md", "rule": "ratio_too_high"}


def test_a_header_that_lies_about_its_size_is_corrupt() -> None:
    data = bytearray(raw_zip(valid_entries(), method=zipfile.ZIP_STORED))
    # Shrink the central directory's uncompressed size of the first entry: inflating gives more than it says.
    at = data.rfind(b"PK\x01\x02")
    first = data.find(b"PK\x01\x02")
    assert at > 0 and first > 0
    size = int.from_bytes(data[first + 24:first + 28], "little")
    data[first + 24:first + 28] = (size - 1).to_bytes(4, "little")
    assert refused(bytes(data)).details["rule"] == "corrupt"


def test_a_broken_deflate_stream_is_corrupt_never_an_error_of_the_server() -> None:
    data = bytearray(ps.package_zip())
    body = data.find(b"note-tidy/SKILL.md") + len("note-tidy/SKILL.md")  # the first entry's compressed bytes
    data[body:body + 40] = bytes(40)
    assert refused(bytes(data)).details == {"path": "SKILL.md", "rule": "corrupt"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), min_size=1, max_size=8))
def test_any_damage_to_a_package_is_package_invalid_or_harmless(edits: list[tuple[int, int]]) -> None:
    data = bytearray(ps.package_zip())
    for at, value in edits:
        data[at % len(data)] = value
    with contextlib.suppress(PackageInvalid):  # anything else fails the test
        open_package(bytes(data))


def test_a_zip_bomb_by_size_alone_is_refused_from_its_declared_sizes() -> None:
    import os

    data = raw_zip([*valid_entries(), *[(f"note-tidy/references/f{i}.md", os.urandom(3000) + b"a" * 60_000)
                                        for i in range(5)]])
    assert len(data) <= limits.MAX_PACKAGE_BYTES
    assert refused(data).details["rule"] == "total_too_large"


@pytest.mark.parametrize(("entries", "rule"), [
    ([(f"note-tidy/references/r{i}.md", b"x") for i in range(limits.MAX_ENTRIES + 1)], "too_many_entries"),
    ([(f"note-tidy/references/r{i}.md", b"x") for i in range(limits.MAX_FILES + 1)], "too_many_files"),
])
def test_too_many_entries_or_files(entries: list[tuple[str, bytes]], rule: str) -> None:
    assert refused(raw_zip(entries)).details["rule"] == rule


def test_a_file_too_large_and_a_package_too_large() -> None:
    import os

    big = os.urandom(4000) + b"a" * (limits.MAX_FILE_BYTES + 1 - 4000)  # under the ratio, over the size
    assert refused(raw_zip([("note-tidy/references/big.md", big)])).details == {
        "path": "note-tidy/references/big.md", "rule": "file_too_large"}
    assert refused(b"PK" + b"\0" * limits.MAX_PACKAGE_BYTES).details == {"path": "", "rule": "too_large"}
    assert refused(b"not a zip at all").details == {"path": "", "rule": "not_a_zip"}


def test_only_the_files_of_the_format_are_accepted() -> None:
    extra = raw_zip([*valid_entries(), ("note-tidy/run.sh", b"#!/bin/sh")])
    assert refused(extra).details == {"path": "run.sh", "rule": "file_not_allowed"}
    wasm = raw_zip([*valid_entries(), ("note-tidy/tools/fmt.wasm", b"\0asm")])
    assert refused(wasm).details == {"path": "tools/fmt.wasm", "rule": "tool_unlisted"}
    missing = raw_zip([e for e in valid_entries() if not e[0].endswith("skillcore.json")])
    assert refused(missing).details == {"path": "skillcore.json", "rule": "required"}


@pytest.mark.parametrize(("text", "pointer", "rule"), [
    ("no front matter", "SKILL.md", "front_matter"),
    ("---\nname: note-tidy\n", "SKILL.md", "front_matter"),
    ("---\nname: Note_Tidy\ndescription: x\n---\n", "SKILL.md#/name", "name_format"),
    ("---\nname: other\ndescription: x\n---\n", "SKILL.md#/name", "name_folder"),
    ("---\nname: note-tidy\n---\n", "SKILL.md#/description", "required"),
    ("---\nname: note-tidy\ndescription: x\nauthor: me\n---\n", "SKILL.md#/author", "unknown_field"),
    ("---\nname: note-tidy\ndescription: &a x\n---\n", "SKILL.md#/description", "front_matter"),
    ("---\nname: note-tidy\ndescription: [a, b]\n---\n", "SKILL.md#/description", "front_matter"),
    ("---\nname: note-tidy\ndescription: " + "x" * 1025 + "\n---\n", "SKILL.md#/description", "too_long"),
    ("---\nname: note-tidy\ndescription: x\ncompatibility: " + "y" * 501 + "\n---\n", "SKILL.md#/compatibility",
     "too_long"),
])
def test_skill_md_follows_the_agent_skills_specification(text: str, pointer: str, rule: str) -> None:
    with pytest.raises(PackageInvalid) as caught:
        skill_md.parse(text, folder="note-tidy")
    assert caught.value.details == {"path": pointer, "rule": rule}


def test_skill_md_reads_its_optional_fields_and_renders_what_it_reads() -> None:
    text = ("---\nname: note-tidy\ndescription: 'It''s tidy: notes'\nlicense: MIT\ncompatibility: \"skillcore 0.x\"\n"
            "metadata:\n  author: Acme\n  version: \"1.0\"\nallowed-tools: Read Write\n---\n# Body\n")
    skill = skill_md.parse(text, folder="note-tidy")
    assert skill.description == "It's tidy: notes" and skill.compatibility == "skillcore 0.x"
    assert skill.metadata == {"author": "Acme", "version": "1.0"} and skill.allowed_tools == ("Read", "Write")
    assert skill_md.parse(skill_md.render(skill), folder="note-tidy") == skill


@pytest.mark.parametrize(("changes", "pointer", "rule"), [
    ({"version": "1.0"}, "/version", "schema"),
    ({"skillId": "other"}, "/skillId", "name_mismatch"),
    ({"compatibility": {"skillcore": ">=x"}}, "/compatibility/skillcore", "schema"),
    ({"permissions": [{"code": "memory:read", "riskLevel": "L9", "approvalMode": "persistent"}]},
     "/permissions/0/riskLevel", "schema"),
    ({"remotes": [{"type": "stdio", "url": "https://a.example/mcp"}]}, "/remotes/0/type", "schema"),
    ({"remotes": [{"type": "sse", "url": "http://a.example/mcp"}]}, "/remotes/0/url", "schema"),
    ({"extra": 1}, "/extra", "unknown_field"),
    ({"tools": [{"name": "fmt", "module": "tools/fmt.wasm", "sha256": "0" * 64}]}, "/tools/0/inputSchema", "required"),
])
def test_skillcore_json_is_checked_with_the_pointer_of_the_field(changes: dict, pointer: str, rule: str) -> None:
    files = ps.files()
    body = ps.manifest(**changes) if "skillId" not in changes else {**ps.manifest(), **changes}
    files["skillcore.json"] = json.dumps(body).encode()
    error = refused(archive.write_zip("note-tidy", files))
    assert error.details == {"path": f"skillcore.json#{pointer}", "rule": rule}


def test_semver_order_and_ranges() -> None:
    assert semver.compare("1.0.0-alpha", "1.0.0") < 0 < semver.compare("1.10.0", "1.9.9")
    assert semver.sort_key("1.10.0") > semver.sort_key("1.9.9") > semver.sort_key("1.9.9-rc.1")
    assert semver.satisfies("0.1.0", ">=0.1.0 <1.0.0") and not semver.satisfies("1.0.0", ">=0.1.0 <1.0.0")
    assert semver.satisfies("1.4.2", "^1.2.0") and not semver.satisfies("2.0.0", "^1.2.0")
    assert semver.satisfies("1.2.9", "~1.2.0") and not semver.satisfies("1.3.0", "~1.2.0")
    assert semver.satisfies("3.0.0", "^1.0.0 || >=3.0.0")
    with pytest.raises(ValueError):
        semver.check_range(">=one")


def test_a_signature_verifies_only_for_its_package_and_its_key() -> None:
    keys, other = ps.KeyPair(), ps.KeyPair()
    data = ps.package_zip()
    package = open_package(data)
    signed = signature.decode(keys.sign(data))
    signature.verify(signed, package.digest, keys.raw)
    tampered = ps.files()
    tampered["evals/basic.json"] = json.dumps({"cases": []}).encode()
    with pytest.raises(SignatureInvalid) as caught:
        signature.verify(signed, package_digest(tampered), keys.raw)
    assert caught.value.details == {"reason": "digest_mismatch"}
    with pytest.raises(SignatureInvalid) as caught:
        signature.verify(signed, package.digest, other.raw)
    assert caught.value.details == {"reason": "other_key"}
    forged = signature.Signature(key_id=keys.key_id, digest=package.digest, signature=other.private.sign(
        signature.message(package.digest)))
    with pytest.raises(SignatureInvalid) as caught:
        signature.verify(forged, package.digest, keys.raw)
    assert caught.value.details == {"reason": "bad_signature"}


@pytest.mark.parametrize(("text", "reason"), [(None, "missing"), ("", "missing"), ("{}", "malformed"),
                                              ("not json", "malformed"), ("x" * 2000, "malformed")])
def test_a_missing_or_malformed_signature_file(text: str | None, reason: str) -> None:
    with pytest.raises(SignatureInvalid) as caught:
        signature.decode(text)
    assert caught.value.details == {"reason": reason}


def test_public_keys_are_read_from_pem_without_a_crypto_library() -> None:
    keys = ps.KeyPair()
    assert signature.raw_public_key(keys.pem) == keys.raw
    from cryptography.hazmat.primitives import serialization

    assert serialization.load_pem_public_key(keys.pem.encode()).public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw) == keys.raw
    with pytest.raises(ValueError):
        signature.raw_public_key(keys.pem.replace("MCow", "MCox"))
