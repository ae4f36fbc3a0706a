"""The route table (skillcore/api/route_table.py) is the one declaration of which function serves what: plain data
that imports no route module, every group wired by bootstrap, no route served twice, and each function's handler
imports exactly the groups the table gives it (each handler in a fresh interpreter, as deployed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import cached_property

import pytest

from skillcore import bootstrap
from skillcore.api import route_table
from skillcore_local.invoke import LAYER_DIR, function_env, function_specs
from skillcore_local.template import ROOT, table_env

GROUPS = ("skillcore.api.routes_", "skillcore.api.tools_")

IMPORT_PROBE = r"""
import json, sys
sys.path[:0] = [sys.argv[1]]
import skillcore.bootstrap
print(json.dumps(sorted(sys.modules)))
"""

HANDLER_PROBE = r"""
import importlib.util, json, sys
code_dir, layer_dir, path = sys.argv[1:4]
sys.path[:0] = [code_dir, layer_dir]
spec = importlib.util.spec_from_file_location("app", path)
module = importlib.util.module_from_spec(spec)
sys.modules["app"] = module
spec.loader.exec_module(module)
print(json.dumps(sorted(name for name in sys.modules if name.startswith(("skillcore.api.routes_", "skillcore.api.tools_")))))
"""


def test_the_table_and_bootstrap_import_no_route_module_and_no_model_library() -> None:
    done = subprocess.run([sys.executable, "-I", "-c", IMPORT_PROBE, str(LAYER_DIR)], capture_output=True, text=True,
                          timeout=60, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout)
    assert [name for name in loaded if name.startswith(GROUPS)] == []
    assert {"pydantic", "msgspec", "boto3", "aws_lambda_powertools"} & {name.split(".")[0] for name in loaded} == set()


def test_the_table_names_every_function_of_the_template() -> None:
    assert set(route_table.FUNCTIONS) == set(function_specs())


def test_bootstrap_wires_every_group_of_the_table_and_no_other() -> None:
    declared = {group for served in route_table.FUNCTIONS.values() for group in (*served.routes, *served.tools)}
    assert declared == set(bootstrap.GROUP_DEPS)
    for group in declared:
        assert isinstance(getattr(bootstrap.Root, bootstrap.GROUP_DEPS[group]), cached_property)


def test_no_route_is_served_by_two_functions() -> None:
    seen: dict[tuple[str, str], str] = {}
    for logical_id in route_table.http_functions():
        for route in route_table.routes(logical_id).operations:
            assert seen.setdefault((route.method, route.path), logical_id) == logical_id, (route.method, route.path)
    api = [(route.method, route.path) for route in route_table.api_routes()]
    assert len(api) == len(set(api))


def test_a_greedy_function_names_the_other_functions_routes_and_only_those() -> None:
    elsewhere = set(route_table.served_elsewhere("RpcFunction"))
    assert ("POST", "/rpc/conversations/{conversationId}/messages") in elsewhere
    assert ("GET", "/rpc/approvals") in elsewhere
    assert not elsewhere & {(r.method, r.path) for r in route_table.routes("RpcFunction").operations}


def loaded_groups(logical_id: str) -> set[str]:
    spec = function_specs()[logical_id]
    env = function_env(dict(table_env()), "http://127.0.0.1:9", base={})
    env.pop("SKILLS_DYNAMODB_ENDPOINT", None)
    env.update({"SKILLS_MODEL": "bedrock", "SKILLS_HOSTED_KEY_ID": "alias/test-hosted-secrets", "AWS_REGION": "us-east-1",
                "PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"})
    done = subprocess.run([sys.executable, "-I", "-c", HANDLER_PROBE, str(spec.code_dir), str(LAYER_DIR),
                           str(spec.module_file)], env=env, capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("logical_id", sorted(route_table.FUNCTIONS))
def test_each_function_imports_exactly_the_groups_it_serves(logical_id: str) -> None:
    served = route_table.FUNCTIONS[logical_id]
    # A tool group imports the route groups whose collaborators and errors it shares (tools_core: SkillDeps).
    shared = {name for group in served.tools
              for name in re.findall(r"^from (skillcore\.api\.routes_\w+) import", source(group), re.MULTILINE)}
    assert {*served.routes, *served.tools} <= loaded_groups(logical_id) <= {*served.routes, *served.tools, *shared}


def source(module: str) -> str:
    return (LAYER_DIR / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8")
