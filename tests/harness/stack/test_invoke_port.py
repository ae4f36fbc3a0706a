"""`make invoke` finds the stack's DynamoDB where `make dev` put it: SKILLS_LOCAL_DDB_PORT, not always 8000."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from skillcore_local.invoke import local_endpoint
from tests.local_stack import StackClient

ROOT = Path(__file__).resolve().parents[3]


def test_the_endpoint_comes_from_the_port_variable() -> None:
    assert local_endpoint({}) == "http://127.0.0.1:8000"
    assert local_endpoint({"SKILLS_LOCAL_DDB_PORT": "8100"}) == "http://127.0.0.1:8100"
    assert local_endpoint({"SKILLS_LOCAL_DDB_PORT": " "}) == "http://127.0.0.1:8000"
    assert local_endpoint({"SKILLS_LOCAL_DDB_PORT": "8100", "SKILLS_DYNAMODB_ENDPOINT": "http://h:1"}) == "http://h:1"
    for bad in ("80a", "0", "70000", "-1", "８１００"):
        with pytest.raises(SystemExit):
            local_endpoint({"SKILLS_LOCAL_DDB_PORT": bad})


def test_make_invoke_runs_against_dynamodb_local_on_another_port(stack: StackClient) -> None:
    port = urlsplit(stack.local.ddb_endpoint).port
    assert port != 8000
    env = {k: v for k, v in os.environ.items() if k != "SKILLS_DYNAMODB_ENDPOINT"}
    env["SKILLS_LOCAL_DDB_PORT"] = str(port)
    result = subprocess.run(
        [sys.executable, "-m", "skillcore_local.invoke", "RpcFunction", "events/rpc_health.json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(json.loads(result.stdout)["body"])["status"] == "ok"
