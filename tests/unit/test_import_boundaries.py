"""boto3 and botocore live only in the store modules (skillcore/db/) and the Bedrock adapter (model/bedrock.py,
and model/factory.py, which builds its client): the services, the worker, the runner and everything else
see DynamoDB through db/ and its typed errors. The Lambda handlers (functions/) build their clients and
are outside the layer; skillcore_local is the local stack, not the product.
"""

from __future__ import annotations

import ast
from pathlib import Path

LAYER = Path(__file__).resolve().parents[2] / "layers" / "skillcore" / "skillcore"
ALLOWED = ("db/", "model/bedrock.py", "model/factory.py", "hosted/aws_kms.py", "work/sqs_queue.py")
AWS = {"boto3", "botocore"}


def aws_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of every import of boto3/botocore in `source`, at any depth (function-local too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] in AWS]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in AWS:
            found.append((node.lineno, node.module or ""))
    return found


def test_the_finder_sees_every_form_of_import() -> None:
    source = (
        "import json\nimport boto3\nfrom botocore.exceptions import ClientError\nimport botocore.session as s\n"
        "def f():\n    from boto3.dynamodb.types import TypeSerializer\n"
        "from . import botocore\nfrom skillcore import boto3_like\n"
    )
    assert aws_imports(source) == [
        (2, "boto3"), (3, "botocore.exceptions"), (4, "botocore.session"), (6, "boto3.dynamodb.types"),
    ]


def test_no_module_outside_db_and_the_bedrock_adapter_imports_boto3_or_botocore() -> None:
    modules = sorted(LAYER.rglob("*.py"))
    assert len(modules) > 50, f"the layer was not found at {LAYER}"
    offenders = []
    for path in modules:
        relative = path.relative_to(LAYER).as_posix()
        if relative.startswith(ALLOWED):
            continue
        offenders += [f"skillcore/{relative}:{line} imports {module}"
                      for line, module in aws_imports(path.read_text(encoding="utf-8"))]
    assert offenders == [], "boto3/botocore outside db/ and model/bedrock:\n" + "\n".join(offenders)


def test_the_store_modules_are_where_boto3_is() -> None:
    # The boundary is real only if the allowed places do use it (else the list above would be stale).
    for allowed in ("db/dynamo.py", "db/errors.py", "model/bedrock.py"):
        assert aws_imports((LAYER / allowed).read_text(encoding="utf-8")), allowed
