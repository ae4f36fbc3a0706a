"""The example package with a code tool (examples/packages/streak-coach/: the AssemblyScript tool's checked-in
build beside its manifest), as files to change, zip and sign in the tests."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from skillcore.packages import archive
from tests.support import ROOT

EXAMPLE = ROOT / "examples" / "packages" / "streak-coach"
SKILL_ID = "streak-coach"
TOOL = "streak-score"
MODULE = f"tools/{TOOL}.wasm"


def example_files() -> dict[str, bytes]:
    return {p.relative_to(EXAMPLE).as_posix(): p.read_bytes() for p in sorted(EXAMPLE.rglob("*")) if p.is_file()}


def files(*, publisher: str = "streak-lab", version: str = "1.0.0", wasm: bytes | None = None,
          tool_changes: dict[str, Any] | None = None, **changes: Any) -> dict[str, bytes]:
    """The example's files with a publisher, a version, another module (its sha256 follows) or manifest changes."""
    found = example_files()
    body = json.loads(found["skillcore.json"])
    body.update(publisher=publisher, version=version, **changes)
    if wasm is not None:
        found[MODULE] = wasm
        body["tools"][0]["sha256"] = hashlib.sha256(wasm).hexdigest()
    body["tools"][0].update(tool_changes or {})
    found["skillcore.json"] = json.dumps(body).encode()
    return found


def package_zip(**kwargs: Any) -> bytes:
    return archive.write_zip(SKILL_ID, files(**kwargs))


def write_folder(root: Any, *, skill_id: str = SKILL_ID, publisher: str, version: str = "1.0.0",
                 wasm: bytes | None = None, evals: dict[str, Any] | None = None) -> Any:
    """The example as a package folder under `root` (named after `skill_id`), for the publisher's tool to build."""
    from pathlib import Path

    found = files(publisher=publisher, version=version, wasm=wasm)
    body = json.loads(found["skillcore.json"])
    body["skillId"] = skill_id
    found["skillcore.json"] = json.dumps(body).encode()
    found["SKILL.md"] = found["SKILL.md"].decode().replace(f"name: {SKILL_ID}", f"name: {skill_id}").encode()
    found["evals/basic.json"] = found["evals/basic.json"].decode().replace(SKILL_ID, skill_id).encode()
    if evals is not None:
        found["evals/streak-score.json"] = json.dumps(evals).encode()
    folder = Path(root) / skill_id
    for path, data in found.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    return folder
