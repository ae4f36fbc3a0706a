"""What a cold start does not load, each checked in a fresh interpreter (a process of its own, so this lane):
the model factory without boto3 (tests/unit/test_bedrock_model.py has the rest of the factory), the capability
defences without jsonschema (tests/unit/test_defence_schema_subset.py has the rest of the subset)."""

from __future__ import annotations

import os
import subprocess
import sys

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
