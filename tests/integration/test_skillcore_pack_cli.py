"""The publisher's tool as its users run it: `python -m skillcore_pack ...` in a process of its own, from the
repository root. Exit 0 only for what is valid; otherwise non-zero and one line naming what is wrong."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from skillcore_local.template import ROOT


def pack(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the tool finds the layer itself
    return subprocess.run([sys.executable, "-m", "skillcore_pack", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env=env)


def ok(*args: str | Path) -> str:
    done = pack(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def signed(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(folder, zip, keys dir) of a package built and signed with the tool."""
    ok("keygen", "--out", tmp_path / "keys")
    ok("init", tmp_path / "my-folder", "--name", "note-tidy")
    out = tmp_path / "note-tidy.zip"
    ok("build", tmp_path / "my-folder", "--out", out)
    ok("sign", out, "--key", tmp_path / "keys" / "publisher.key")
    return tmp_path / "my-folder", out, tmp_path / "keys"


def test_keygen_init_build_sign_verify(signed: tuple[Path, Path, Path]) -> None:
    folder, out, keys = signed
    assert stat.S_IMODE((keys / "publisher.key").stat().st_mode) == 0o600
    assert (keys / "publisher.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "SKILL.md", "evals/basic.json", "skillcore.json"]
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == ["note-tidy/SKILL.md", "note-tidy/evals/basic.json",
                                              "note-tidy/skillcore.json"]
    signature = json.loads(out.with_name(out.name + ".sig").read_text())
    assert signature["format"] == "skillcore-signature/1" and len(signature["keyId"]) == 32
    assert "ok: note-tidy 0.1.0" in ok("verify", out, "--pub", keys / "publisher.pub")
    # the same folder builds the same bytes
    again = out.with_name("again.zip")
    ok("build", folder, "--out", again)
    assert again.read_bytes() == out.read_bytes()


def test_verify_fails_for_a_tampered_package_another_key_or_no_signature(
        signed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    folder, out, keys = signed
    ok("keygen", "--out", tmp_path / "other")
    done = pack("verify", out, "--pub", tmp_path / "other" / "publisher.pub")
    assert done.returncode == 1 and "signature_invalid" in done.stderr and "other_key" in done.stderr

    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "\nmore\n")
    tampered = tmp_path / "tampered.zip"
    ok("build", folder, "--out", tampered)
    tampered.with_name("tampered.zip.sig").write_text(out.with_name(out.name + ".sig").read_text())
    done = pack("verify", tampered, "--pub", keys / "publisher.pub")
    assert done.returncode == 1 and "digest_mismatch" in done.stderr

    out.with_name(out.name + ".sig").unlink()
    done = pack("verify", out, "--pub", keys / "publisher.pub")
    assert done.returncode == 1 and "signature_invalid" in done.stderr and "missing" in done.stderr


def test_a_package_outside_the_format_names_its_path_and_rule(signed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    folder, _, keys = signed
    (folder / "references").mkdir()
    (folder / "references" / "link.md").symlink_to("/etc/passwd")
    done = pack("build", folder, "--out", tmp_path / "x.zip")
    assert done.returncode == 1 and "package_invalid at 'references/link.md' (symlink)" in done.stderr
    (folder / "references" / "link.md").unlink()

    manifest = json.loads((folder / "skillcore.json").read_text())
    manifest["version"] = "one"
    (folder / "skillcore.json").write_text(json.dumps(manifest))
    done = pack("build", folder, "--out", tmp_path / "x.zip")
    assert done.returncode == 1 and "'skillcore.json#/version' (schema)" in done.stderr

    slip = tmp_path / "slip.zip"
    with zipfile.ZipFile(slip, "w") as archive:
        archive.writestr("note-tidy/../../evil.sh", "x")
    done = pack("verify", slip, "--pub", keys / "publisher.pub")
    assert done.returncode == 1 and "path_traversal" in done.stderr


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    ok("keygen", "--out", tmp_path)
    assert pack("keygen", "--out", tmp_path).returncode == 2  # never overwrites a key
    assert pack("init", tmp_path / "x", "--name", "Bad_Name").returncode == 2
    assert pack("build", tmp_path / "missing", "--out", tmp_path / "x.zip").returncode == 2
    assert pack("verify", tmp_path / "missing.zip", "--pub", tmp_path / "publisher.pub").returncode == 2
