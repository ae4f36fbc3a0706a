"""Only McpFunction imports the MCP SDK (and the ASGI stack it runs on): every other function's handler
module loads without it, so their cold starts do not change. Each handler is imported in a fresh interpreter
with its environment as deployed, and the modules it loaded are read from sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from skillcore_local.invoke import LAYER_DIR, function_env, function_specs
from skillcore_local.template import ROOT, table_env

# The SDK's own packages and the ASGI server side it brings. Not httpx2 or anyio: general libraries the
# layer may use for its own reasons (egress), not a sign of the MCP face.
SDK = ("mcp", "mcp_types", "mangum", "starlette", "sse_starlette", "uvicorn")

PROBE = r"""
import importlib.util, json, sys
code_dir, layer_dir, path = sys.argv[1:4]
sys.path[:0] = [code_dir, layer_dir]
spec = importlib.util.spec_from_file_location("app", path)
module = importlib.util.module_from_spec(spec)
sys.modules["app"] = module
spec.loader.exec_module(module)
assert callable(module.lambda_handler)
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def loaded_packages(logical_id: str) -> set[str]:
    spec = function_specs()[logical_id]
    env = function_env(dict(table_env()), "http://127.0.0.1:9", base={})
    env.pop("SKILLS_DYNAMODB_ENDPOINT", None)
    env.update({"SKILLS_MODEL": "bedrock", "PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"})
    done = subprocess.run([sys.executable, "-I", "-c", PROBE, str(spec.code_dir), str(LAYER_DIR), str(spec.module_file)],
                          env=env, capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


OTHERS = sorted(set(function_specs()) - {"McpFunction"})


def test_the_template_has_the_mcp_function_and_others() -> None:
    assert "McpFunction" in function_specs() and {"RpcFunction", "ChatTurnFunction", "ScanFunction"} <= set(OTHERS)


@pytest.mark.parametrize("logical_id", OTHERS)
def test_no_other_function_imports_the_mcp_sdk(logical_id: str) -> None:
    assert loaded_packages(logical_id) & set(SDK) == set()


@pytest.mark.parametrize("logical_id", ["HostedFunction", "ChatTurnFunction"])
def test_the_functions_that_call_out_ship_the_sdk_they_import_lazily(logical_id: str) -> None:
    requirements = (function_specs()[logical_id].code_dir / "requirements.txt").read_text("utf-8")
    assert any(line.split("==")[0].split(">=")[0].strip() == "mcp" for line in requirements.splitlines())


def test_the_mcp_function_does_and_the_probe_would_see_it() -> None:
    # The check above can fail: the same probe sees the SDK where it is imported.
    assert {"mcp", "mangum", "starlette"} <= loaded_packages("McpFunction")


# The one exception: the client side of hosted endpoints (issue 12), imported inside its functions only, when a
# call is made, by HostedFunction and ChatTurnFunction (hosted tools in the chat), which ship the SDK in their
# own requirements.txt like McpFunction.
CLIENT_SIDE = "skillcore/egress/mcp_session.py"


def test_the_layer_never_imports_the_sdk() -> None:
    # The layer is shared by every function: the SDK stays in functions/mcp/ (its own requirements.txt).
    offenders = []
    for path in sorted((LAYER_DIR / "skillcore").rglob("*.py")):
        if path.relative_to(LAYER_DIR).as_posix() == CLIENT_SIDE:
            assert all(not line.startswith(("import mcp", "from mcp")) for line in path.read_text("utf-8").splitlines()), \
                "the MCP client is imported lazily, inside the functions that call out"
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.strip().split()
            if len(words) >= 2 and words[0] in ("import", "from") and words[1].split(".")[0] in SDK:
                offenders.append(f"{path.relative_to(LAYER_DIR)}: {line.strip()}")
    assert offenders == []
