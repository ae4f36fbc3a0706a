"""The house rules, read from the layer's imports (docs/architecture.md):

- nothing below api/ imports it (only the composition root, bootstrap.py, stands above it);
- db/ is DynamoDB mechanics: it imports no feature, only itself and the shared kernel (floor 1);
- boto3 and botocore live only in db/ and the named AWS adapters (Bedrock, SQS, KMS);
- no import cycle, between files or between the layer's folders.

Every import counts, function-local ones too, and a module a route group's handlers load on first use
(`lazy.module("skillcore.x")`, skillcore/lazy.py): a lazy import keeps a cold start light, it does not make a
dependency run the other way.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

LAYER = Path(__file__).resolve().parents[2] / "layers" / "skillcore" / "skillcore"
AWS = {"boto3", "botocore"}
AWS_ALLOWED = ("db/", "model/bedrock.py", "model/factory.py", "hosted/aws_kms.py", "work/sqs_queue.py",
               "packages/s3_blobs.py")
ABOVE_API = ("api/", "bootstrap.py")


def imports_of(source: str) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in `source`, at any depth; `from a import b` gives a and a.b
    (b may be a module); `lazy.module("a.b")` gives a.b."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif (lazy := lazy_module(node)) is not None:
            found.append((node.lineno, lazy))
    return found


def lazy_module(node: ast.AST) -> str | None:
    """The module named by a `lazy.module("...")` call, else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "module"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "lazy"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return None


def type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """Name -> the module it binds, for each `import` under a module-level `if TYPE_CHECKING:`."""
    bound: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
                    bound |= {a.asname or a.name: f"{statement.module}.{a.name}" for a in statement.names}
                elif isinstance(statement, ast.Import):
                    bound |= {a.asname or a.name: a.name for a in statement.names if a.asname}
    return bound


def layer_modules() -> dict[str, Path]:
    """skillcore.x.y -> its file, for every module of the layer."""
    modules = {}
    for path in sorted(LAYER.rglob("*.py")):
        parts = path.relative_to(LAYER.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def layer_graph() -> dict[str, set[str]]:
    """Module -> the layer modules it imports (a name imported from a module counts as that module)."""
    modules = layer_modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for _, imported in imports_of(path.read_text(encoding="utf-8")):
            target = imported if imported in modules else imported.rpartition(".")[0]
            if target in modules and target != name and target != "skillcore":
                graph[name].add(target)
    return graph


def relative(module: str) -> str:
    path = layer_modules()[module]
    return path.relative_to(LAYER).as_posix()


def room(module: str) -> str:
    """The top-level folder (or kernel file) of a layer module: skillcore.hosted.calls -> hosted."""
    return module.split(".")[1]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(graph) | {n for targets in graph.values() for n in targets}):
        if node not in index:
            visit(node)
    return found


# -- the finder itself ----------------------------------------------------------------------------------

def test_the_finder_sees_every_form_of_import() -> None:
    source = (
        "import json\nimport boto3\nfrom botocore.exceptions import ClientError\nimport botocore.session as s\n"
        "def f():\n    from boto3.dynamodb.types import TypeSerializer\n"
        "from . import botocore\nfrom skillcore import boto3_like\n"
    )
    assert [m for _, m in imports_of(source)] == [
        "json", "boto3", "botocore.exceptions", "botocore.exceptions.ClientError", "botocore.session",
        "skillcore", "skillcore.boto3_like", "boto3.dynamodb.types", "boto3.dynamodb.types.TypeSerializer",
    ]
    assert {m for _, m in imports_of(source) if m.split(".")[0] in AWS} >= {
        "boto3", "botocore.exceptions", "botocore.session", "boto3.dynamodb.types"}


def test_the_finder_sees_a_module_loaded_on_first_use() -> None:
    source = ('if TYPE_CHECKING:\n    from skillcore.automation import service as automation\n'
              'else:\n    automation = lazy.module("skillcore.automation.service")\n'
              'other = importlib.import_module(name)\n')
    assert [m for _, m in imports_of(source)] == [
        "skillcore.automation", "skillcore.automation.service", "skillcore.automation.service"]
    assert type_checking_imports(ast.parse(source)) == {"automation": "skillcore.automation.service"}


def test_the_cycle_finder_finds_a_loop_and_nothing_else() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []


# -- the rules ------------------------------------------------------------------------------------------

def test_no_module_outside_db_and_the_named_aws_adapters_imports_boto3_or_botocore() -> None:
    modules = layer_modules()
    assert len(modules) > 50, f"the layer was not found at {LAYER}"
    offenders = []
    for path in modules.values():
        rel = path.relative_to(LAYER).as_posix()
        if rel.startswith(AWS_ALLOWED):
            continue
        offenders += [f"skillcore/{rel}:{line} imports {module}"
                      for line, module in imports_of(path.read_text(encoding="utf-8")) if module.split(".")[0] in AWS]
    assert offenders == [], "boto3/botocore outside db/ and the AWS adapters:\n" + "\n".join(offenders)


def test_the_allowed_places_do_use_aws() -> None:
    # The boundary is real only if the allowed places do use it (else the list above would be stale).
    for allowed in ("db/dynamo.py", "db/errors.py", "db/aws.py", "model/bedrock.py", "model/factory.py",
                    "work/sqs_queue.py"):
        source = (LAYER / allowed).read_text(encoding="utf-8")
        assert any(m.split(".")[0] in AWS for _, m in imports_of(source)), allowed


def test_nothing_below_api_imports_it() -> None:
    graph = layer_graph()
    offenders = [f"{relative(src)} imports {dst}" for src, targets in graph.items() for dst in sorted(targets)
                 if room(dst) == "api" and not relative(src).startswith(ABOVE_API)]
    assert offenders == [], "\n".join(offenders)


def test_db_imports_no_feature() -> None:
    graph = layer_graph()
    features = {p.name for p in LAYER.iterdir() if p.is_dir() and (p / "__init__.py").exists()} - {"db"}
    offenders = [f"{relative(src)} imports {dst}" for src, targets in graph.items() if room(src) == "db"
                 for dst in sorted(targets) if room(dst) in features]
    assert offenders == [], "\n".join(offenders)


def test_no_import_cycle_between_files() -> None:
    assert cycles(layer_graph()) == []


def test_no_import_cycle_between_the_layers_folders() -> None:
    folders: dict[str, set[str]] = defaultdict(set)
    for src, targets in layer_graph().items():
        folders[room(src)] |= {room(dst) for dst in targets if room(dst) != room(src)}
    assert cycles(folders) == [], "folders that import each other (a feature's code sits on the wrong floor)"


def test_a_module_loaded_on_first_use_is_one_the_type_checker_sees_under_the_same_name() -> None:
    # `x = lazy.module("skillcore.a.b")` is typed Any: its TYPE_CHECKING twin `from skillcore.a import b as x`
    # gives mypy the real module, so a misspelt attribute fails the lint, not a request.
    modules = layer_modules()
    offenders, uses = [], 0
    for path in modules.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared = type_checking_imports(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and (target := lazy_module(node.value)) is not None:
                uses += 1
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if target not in modules or any(declared.get(name) != target for name in names) or not names:
                    offenders.append(f"skillcore/{path.relative_to(LAYER).as_posix()}:{node.lineno} {names} = {target}")
    assert uses >= 10, "the route groups load their services on first use"
    assert offenders == [], "\n".join(offenders)
