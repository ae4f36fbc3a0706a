"""The example package with a code tool (examples/packages/streak-coach/: the AssemblyScript tool's checked-in
build beside its manifest), as files to change, zip and sign in the tests."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from skillcore.packages import archive
from tests.local_stack import Caller, StackClient
from tests.support import ROOT

EXAMPLE = ROOT / "examples" / "packages" / "streak-coach"
SKILL_ID = "streak-coach"
TOOL = "streak-score"
MODULE = f"tools/{TOOL}.wasm"
# The hostile module's evals (tests/wasm/two_faced.wat passes them, and turns hostile on a longer input).
HOSTILE_EVALS = {"cases": [{"id": "no-days", "tool": "streak-score", "arguments": {"days": []},
                            "output": {"days": 0}}]}


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


def write_folder(root: Path, *, skill_id: str = SKILL_ID, publisher: str, version: str = "1.0.0",
                 wasm: bytes | None = None, evals: dict[str, Any] | None = None,
                 tool_changes: dict[str, Any] | None = None, **changes: Any) -> Path:
    """The example as a package folder under `root` (named after `skill_id`), for the publisher's tool to build."""
    found = files(publisher=publisher, version=version, wasm=wasm, tool_changes=tool_changes, **changes)
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


# -- on a running local stack: publish over HTTP with the publisher's tool, install

def pack(*args: str | Path) -> str:
    done = subprocess.run([sys.executable, "-m", "skillcore_pack", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


class Operator(Caller):
    prefix = "operator"

    def __init__(self, stack: StackClient) -> None:
        super().__init__(stack)
        self.auth = stack.token(self.user, admin=True)


def publish(stack: StackClient, tmp: Path, skill_id: str, *, approve: bool = True, **folder: Any) -> dict[str, Any]:
    """A publisher registered by an operator; the example folder built, signed and verified with the publisher's
    tool, submitted and (unless `approve` is False) approved over HTTP. The release."""
    operator, account = Operator(stack), Caller(stack, "publisher")
    publisher_id = f"pub-{uuid.uuid4().hex[:10]}"
    keys = tmp / f"keys-{skill_id}"
    pack("keygen", "--out", keys)
    operator.ok("POST", "/rpc/admin/publishers", {
        "publisherId": publisher_id, "displayName": "Streak Lab", "userId": account.user,
        "trustLevel": "community", "publicKey": (keys / "publisher.pub").read_text()}, status=201)
    source = write_folder(tmp / f"src-{skill_id}", skill_id=skill_id, publisher=publisher_id, **folder)
    out = tmp / f"{skill_id}.zip"
    pack("build", source, "--out", out)
    pack("sign", out, "--key", keys / "publisher.key")
    pack("verify", out, "--pub", keys / "publisher.pub")
    submitted = account.ok("POST", "/rpc/releases", {
        "package": base64.b64encode(out.read_bytes()).decode(),
        "signature": out.with_name(out.name + ".sig").read_text()}, status=201)
    assert submitted["state"] == "checked", submitted["report"]
    checks = {r["check"]: r for r in submitted["report"]["results"]}
    assert checks["code_tools"]["passed"] and checks["code_tools"]["cases"] >= 1
    if not approve:
        return dict(submitted)
    decided = operator.ok("POST", f"/rpc/admin/releases/{submitted['releaseId']}/decision",
                          {"decision": "approve", "reason": "reviewed"})
    assert decided["state"] == "published"
    return decided


def install(stack: StackClient, user: Caller | str, skill_id: str) -> dict[str, Any]:
    """The user installs the skill's published version over HTTP (POST /rpc/installs); grants nothing."""
    token = user.auth if isinstance(user, Caller) else stack.token(user)
    status, body = stack.call("POST", "/rpc/installs", {"skillId": skill_id}, token=token)
    assert status == 201, body
    return dict(body)
