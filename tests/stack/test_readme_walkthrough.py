"""The README's walkthrough, run as a reader runs it: its bash block, extracted from README.md, with bash and
curl against the local stack over HTTP. Only what a test cannot do is changed (the stack is already running
on a free port, and the token is minted by the module `make token` runs); every curl answer is recorded,
and the test checks what the README promises. Edit the walkthrough and this test runs the new one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from .conftest import JWT_SECRET, StackClient

ROOT = Path(__file__).resolve().parents[2]
START_DEV = "make dev"
MINT_TOKEN = "$(make -s token USER=alice)"
# Every curl of the walkthrough goes through this function: it fails the script on an HTTP error (a reader
# would have seen one) and appends each answer, one JSON document per line, to the log.
RECORDING_CURL = """
set -eo pipefail
curl() { command curl --fail-with-body -w '\\n' "$@" | tee -a "$WALKTHROUGH_LOG"; }
"""


def walkthrough_block(readme: str) -> str:
    section = readme.split("## Walkthrough with curl", 1)
    assert len(section) == 2, "README.md has no '## Walkthrough with curl' section"
    found = re.search(r"```bash\n(.*?)```", section[1], re.DOTALL)
    assert found, "the walkthrough section has no ```bash block"
    return found.group(1)


def runnable(block: str) -> str:
    lines = block.splitlines()
    dev = [line for line in lines if line.split("#")[0].strip() == START_DEV]
    assert len(dev) == 1, f"the walkthrough should start the stack with `{START_DEV}`"
    assert MINT_TOKEN in block, f"the walkthrough should get its token with `{MINT_TOKEN}`"
    script = "\n".join(line for line in lines if line not in dev)
    return RECORDING_CURL + script.replace(MINT_TOKEN, f'$("{sys.executable}" -m skillcore_local.token alice)')


def answers(log: Path) -> list[Any]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_readme_walkthrough_keeps_its_promises(stack: StackClient, tmp_path: Path) -> None:
    log = tmp_path / "answers.jsonl"
    env = {
        **os.environ, "SKILLS_LOCAL_PORT": str(urlsplit(stack.url).port), "SKILLS_LOCAL_JWT_SECRET": JWT_SECRET,
        "WALKTHROUGH_LOG": str(log), "PYTHONPATH": f"{ROOT}:{ROOT / 'layers' / 'skillcore'}",
    }
    script = runnable(walkthrough_block((ROOT / "README.md").read_text(encoding="utf-8")))
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the walkthrough failed:\n{done.stderr[-3000:]}\n{done.stdout[-3000:]}"
    got = answers(log)
    assert got[0] == got[0] | {"status": "ok"}

    turns = {a["userMessage"]["text"]: a for a in got if isinstance(a, dict) and "reply" in a}
    recalls = [a for a in got if isinstance(a, dict) and a.get("userMessage", {}).get("text") == "你还记得我喜欢什么吗"]
    # Without the grant: the notice, in Chinese, naming the permission, and no memory.
    assert len(recalls) == 2, "the walkthrough should ask once before the grant and once after it"
    denied, recalled = recalls
    assert denied["run"]["outcome"] == "denied" and "授权" in denied["reply"]["text"]
    assert "memory:read" in denied["reply"]["text"] and "爬山" not in denied["reply"]["text"]
    # With it: the memory, verbatim.
    assert recalled["run"] == recalled["run"] | {"kind": "tool", "outcome": "succeeded", "memoriesUsed": 1}
    assert recalled["reply"]["text"] == "我记得这些：\n我喜欢爬山"
    assert turns["/memory-recall"]["reply"]["text"] == "我记得这些：\n我喜欢爬山"
    # The workflow ran to its end, in Chinese, and took nothing else.
    assert turns["/goal 跑一次十公里"]["run"]["kind"] == "workflow"
    assert turns["是"]["reply"]["text"].startswith("目标已设定。") and "这个月底" in turns["是"]["reply"]["text"]

    (automation,) = [a for a in got if isinstance(a, dict) and a.get("items") and "isDefault" in a["items"][0]]
    assert automation["items"][0]["title"] == "每日记忆整理"
    scan = next(a for a in got if isinstance(a, dict) and "automationRuns" in a)
    assert scan["succeeded"] >= 1 and scan["errors"] == 0
    jobs = [a for a in got if isinstance(a, dict) and a.get("items") and "nextAttemptAt" in a["items"][0]]
    assert [j["status"] for j in jobs[-1]["items"]] == ["succeeded"]
    history = [a for a in got if isinstance(a, dict) and a.get("items") and "messageId" in a["items"][0]][-1]
    last = history["items"][-1]
    assert last["origin"] == "background" and last["text"].startswith("我们约定的目标复盘时间到了。") and "跑步" in last["text"]
    audit = got[-1]["items"]
    seen = {(e["action"], e["decision"]) for e in audit}
    assert {("permission.grant", "succeeded"), ("tool.execute", "denied"), ("tool.execute", "allowed"),
            ("tool.execute", "succeeded"), ("background.create", "allowed"), ("background.execute", "allowed"),
            ("background.execute", "succeeded")} <= seen, seen


def test_a_broken_walkthrough_is_noticed() -> None:
    """The extraction itself: the test cannot pass on a README that lost its block or its first steps."""
    with pytest.raises(AssertionError):
        walkthrough_block("# skillcore\n\n## Set-up\n")
    with pytest.raises(AssertionError):
        runnable("TOKEN=$(make -s token USER=alice)\ncurl -s $API/rpc/health\n")
    script = runnable("make dev   # one terminal\nTOKEN=$(make -s token USER=alice)\n")
    assert "make dev" not in script and "skillcore_local.token alice" in script
