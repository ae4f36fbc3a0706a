"""The example package's module is the build of its source: `make code-tools` (the project's pinned AssemblyScript
compiler) gives the very bytes checked in at examples/packages/streak-coach/tools/, and skillcore.json names
their SHA-256; the publisher's tool builds, signs and verifies the folder."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from tests import code_package_support as cps
from tests.support import ROOT


def test_the_checked_in_module_is_the_build_of_its_source(tmp_path: Path) -> None:
    subprocess.run(["make", "-s", "code-tools", f"CODE_TOOLS_OUT={tmp_path}"], cwd=ROOT, check=True,
                   capture_output=True, text=True, timeout=300)
    built = (tmp_path / "streak-score.wasm").read_bytes()
    checked_in = (cps.EXAMPLE / cps.MODULE).read_bytes()
    assert built == checked_in
    manifest = json.loads((cps.EXAMPLE / "skillcore.json").read_text("utf-8"))
    assert manifest["tools"][0]["sha256"] == hashlib.sha256(built).hexdigest()


def test_the_publishers_tool_builds_signs_and_verifies_the_example(tmp_path: Path) -> None:
    def pack(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "skillcore_pack", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)

    assert pack("keygen", "--out", str(tmp_path / "keys")).returncode == 0
    assert pack("build", str(cps.EXAMPLE), "--out", str(tmp_path / "p.zip")).returncode == 0
    assert pack("sign", str(tmp_path / "p.zip"), "--key", str(tmp_path / "keys" / "publisher.key")).returncode == 0
    verified = pack("verify", str(tmp_path / "p.zip"), "--pub", str(tmp_path / "keys" / "publisher.pub"))
    assert verified.returncode == 0, verified.stderr
    assert "streak-coach 1.0.0" in verified.stdout
