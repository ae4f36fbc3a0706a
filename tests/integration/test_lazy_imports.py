"""What a cold start does not load, each checked in a fresh interpreter (a process of its own, so this lane):
the model factory without boto3 (tests/unit/test_bedrock_model.py has the rest of the factory), the capability
defences without jsonschema (tests/unit/test_defence_schema_subset.py has the rest of the subset), and what a
function's handler, imported as deployed, leaves out (`make bench`'s cold-import section measures the time)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

from tests.support import ROOT


def fresh(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "layers" / "skillcore")}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout


def test_importing_the_factory_does_not_load_boto3() -> None:
    code = (
        "import sys, skillcore.model.factory; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore')))"
    )
    assert fresh(code).strip() == "[]"


def test_jsonschema_is_not_imported_with_the_module() -> None:
    # ~100 ms at import: it must load only when a schema is checked (cold starts never pay it)
    code = ("import sys; import skillcore.capabilities.defences.schema_subset, skillcore.capabilities.defences.text_filter, "
            "skillcore.capabilities.defences.references; print('jsonschema' in sys.modules)")
    assert fresh(code).strip() == "False"


def handler_modules(logical_id: str) -> set[str]:
    """The modules loaded by importing a function's handler as deployed (scripts/bench_cold.py's environment:
    SKILLS_MODEL=bedrock, dummy credentials, no local endpoint), in a fresh interpreter."""
    from scripts.bench_cold import handler_env, handler_file, python

    code = (
        "import importlib.util, sys\n"
        "code_dir, layer_dir, path = sys.argv[1:4]\n"
        "sys.path[:0] = [code_dir, layer_dir]\n"
        "spec = importlib.util.spec_from_file_location('app', path)\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules['app'] = module\n"
        "spec.loader.exec_module(module)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    code_dir, path = handler_file(logical_id)
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run([python(), "-I", "-c", code, str(code_dir), str(ROOT / "layers" / "skillcore"), str(path)],
                              env=handler_env(home), capture_output=True, text=True, check=True, cwd=str(ROOT))
    return set(done.stdout.split())


def loaded(modules: set[str], *prefixes: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_the_scan_imports_the_stores_probes_only() -> None:
    # The scan only dispatches: no request or tool models (pydantic), no workers, executor or skills.
    modules = handler_modules("ScanFunction")
    assert loaded(modules, "pydantic", "skillcore.executor", "skillcore.skills", "skillcore.api.requests",
                  "skillcore.automation.runner", "skillcore.background.worker", "asyncio") == []
    assert "skillcore.background.job_store" in modules and "skillcore.automation.store" in modules


def test_the_worker_does_not_import_powertools_batch_utility() -> None:
    # skillcore/work/batch.py answers the partial batch: Powertools' utility (with asyncio) cost ~17 ms of cold start.
    modules = handler_modules("WorkerFunction")
    assert loaded(modules, "aws_lambda_powertools.utilities.batch", "aws_lambda_powertools.utilities.data_classes",
                  "asyncio") == []


def test_rpc_defines_no_request_models_of_groups_it_does_not_serve() -> None:
    modules = handler_modules("RpcFunction")
    assert loaded(modules, "skillcore.api.requests.chat", "skillcore.api.requests.hosted",
                  "skillcore.api.requests.approvals", "skillcore.executor", "skillcore.egress",
                  "skillcore.api.routes_packages", "skillcore.api.routes_installs", "skillcore.api.routes_code_tools",
                  "skillcore.api.requests.packages") == []


def test_the_catalog_imports_its_groups_only() -> None:
    # CatalogFunction serves the packages, installs and code tools groups: none of RpcFunction's, chat or hosted.
    modules = handler_modules("CatalogFunction")
    assert {"skillcore.api.routes_packages", "skillcore.api.routes_installs",
            "skillcore.api.routes_code_tools"} <= modules
    assert loaded(modules, "skillcore.api.routes_core", "skillcore.api.routes_skills",
                  "skillcore.api.routes_capabilities", "skillcore.api.routes_automation",
                  "skillcore.api.routes_background", "skillcore.api.requests.chat", "skillcore.api.requests.hosted",
                  "skillcore.executor", "skillcore.egress") == []


@pytest.mark.parametrize("logical_id", ["RpcFunction", "ChatTurnFunction", "ScanFunction", "WorkerFunction",
                                        "HostedFunction", "CatalogFunction"])
def test_no_function_imports_boto3(logical_id: str) -> None:
    # Their clients are botocore's (skillcore/db/aws.py): boto3's import (its session, resources, s3transfer,
    # multiprocessing) was 10-15 ms of every cold start.
    assert loaded(handler_modules(logical_id), "boto3", "s3transfer", "multiprocessing") == []


def test_rpc_loads_the_routes_contracts_and_no_feature_service() -> None:
    # An Rpc instance answers whichever route comes first; each route's feature code comes with its first request
    # (skillcore/lazy.py): the skills registry and the services behind the skills, automation, capabilities,
    # background and memory routes are not loaded by the cold start.
    modules = handler_modules("RpcFunction")
    assert {"skillcore.api.routes_core", "skillcore.api.routes_skills", "skillcore.api.routes_capabilities",
            "skillcore.api.views.skills", "skillcore.api.views.capabilities"} <= modules
    assert loaded(modules, "skillcore.skills.builtin", "skillcore.automation.service", "skillcore.background.service",
                  "skillcore.capabilities.service", "skillcore.capabilities.drafts", "skillcore.capabilities.catalog",
                  "skillcore.policy.permissions", "skillcore.memory.service", "skillcore.conversations.agents") == []


def test_chat_turn_builds_at_init_what_every_turn_uses() -> None:
    # One route, the turn: its request model, the built-in skills, the executor and the model client are the
    # cold start's, not the first turn's.
    modules = handler_modules("ChatTurnFunction")
    assert {"skillcore.api.requests.chat", "skillcore.skills.builtin", "skillcore.chat.service",
            "skillcore.executor.assembly", "skillcore.model.bedrock", "skillcore.hosted.chat"} <= modules


def test_hosted_builds_its_calls_collaborators_at_init() -> None:
    # Both its groups work through the hosted calls' collaborators (the egress settings, the KMS key's client).
    modules = handler_modules("HostedFunction")
    assert {"skillcore.hosted.service", "skillcore.egress.settings", "skillcore.hosted.aws_kms"} <= modules
