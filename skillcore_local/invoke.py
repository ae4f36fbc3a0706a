"""A stand-in for the Lambda runtime: load a function's handler from template.yaml and call it in-process.

`python -m skillcore_local.invoke <FunctionLogicalId> <event.json>` runs one handler once against the local
stack's DynamoDB and prints its response (`make invoke FN=RpcFunction EVENT=events/rpc_health.json`).
The gateway and the scan loop use the same FunctionRegistry, so a handler runs the same way everywhere.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from skillcore_local import iam
from skillcore_local.template import ROOT, ensure_tables, load_template

LAYER_DIR = ROOT / "layers" / "skillcore"
LOCAL_ACCOUNT = "123456789012"
LOCAL_REGION = "us-east-1"
# The work queue's URL locally: work/sqs_queue.py resolves it to the gateway's LocalQueue (skillcore_local/sqs.py).
LOCAL_WORK_QUEUE_URL = "local://WorkQueue"
LAMBDA_DEFAULT_TIMEOUT = 3  # seconds, Lambda's own default when neither the function nor Globals say
LAMBDA_DEFAULT_MEMORY = 128

Handler = Callable[[dict[str, Any], Any], Any]


class FunctionLoadError(RuntimeError):
    """The handler module is missing or fails to import; raised per invocation so a fix needs no restart."""


@dataclass(frozen=True)
class ScheduleSpec:
    event_name: str
    expression: str  # e.g. "rate(5 minutes)"


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    code_dir: Path
    handler: str  # "app.lambda_handler"
    timeout: int
    memory: int
    schedules: tuple[ScheduleSpec, ...] = ()

    @property
    def function_name(self) -> str:
        return f"skillcore-local-{self.logical_id}"

    @property
    def module_file(self) -> Path:
        module, _, _ = self.handler.rpartition(".")
        return self.code_dir / (module.replace(".", "/") + ".py")

    @property
    def attribute(self) -> str:
        return self.handler.rpartition(".")[2]


def function_specs(template: dict[str, Any] | None = None) -> dict[str, FunctionSpec]:
    """Every AWS::Serverless::Function, with Globals applied the way SAM applies them."""
    template = template or load_template()
    globals_ = (template.get("Globals") or {}).get("Function") or {}
    specs: dict[str, FunctionSpec] = {}
    for logical_id, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource.get("Properties") or {}
        schedules = tuple(
            ScheduleSpec(name, str((event.get("Properties") or {}).get("Schedule", "")))
            for name, event in (props.get("Events") or {}).items()
            if event.get("Type") in ("Schedule", "ScheduleV2")
        )
        specs[logical_id] = FunctionSpec(
            logical_id=logical_id,
            code_dir=(ROOT / str(props["CodeUri"])).resolve(),
            handler=str(props.get("Handler") or globals_.get("Handler")),
            timeout=int(props.get("Timeout") or globals_.get("Timeout") or LAMBDA_DEFAULT_TIMEOUT),
            memory=int(props.get("MemorySize") or globals_.get("MemorySize") or LAMBDA_DEFAULT_MEMORY),
            schedules=schedules,
        )
    return specs


def scheduled_function(specs: Mapping[str, FunctionSpec]) -> FunctionSpec:
    """The function the EventBridge rule targets (the scan); the template has exactly one."""
    targets = [spec for spec in specs.values() if spec.schedules]
    if len(targets) != 1:
        raise LookupError(
            f"expected one function with a Schedule event, found {[s.logical_id for s in targets]}"
        )
    return targets[0]


# ---------------------------------------------------------------------------------------------- environment


def ensure_layer_on_path() -> None:
    """Lambda puts the layer on sys.path (/opt/python); here the layer's source directory plays that part."""
    layer = str(LAYER_DIR)
    if layer not in sys.path:
        sys.path.insert(0, layer)


def _resolve(value: Any, parameters: Mapping[str, Any]) -> str | None:
    if isinstance(value, str | int | float | bool):
        return str(value)
    if isinstance(value, dict) and set(value) == {"Ref"} and value["Ref"] in parameters:
        default = (parameters[value["Ref"]] or {}).get("Default")
        return None if default is None else str(default)
    return None  # other intrinsics (table Refs, Sub, GetAtt) are filled in by the caller or not at all


HOSTED_PASS_THROUGH = ("SKILLS_HOSTED_ALLOWED_DOMAINS", "SKILLS_LOCAL_HOSTED_RESOLVE",
                       "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES", "SKILLS_LOCAL_HOSTED_CA_BUNDLE",
                       "SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS", "SKILLS_LOCAL_HOSTED_CONNECT_PORT")


def function_env(
    table_env: Mapping[str, str],
    dynamodb_endpoint: str,
    *,
    template: dict[str, Any] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables a deployed function sees, adapted to the local stack.

    Starts from the template's Globals (parameter defaults resolved), then: table names from the local tables,
    the DynamoDB Local endpoint, the offline model unless SKILLS_MODEL says otherwise, and dummy AWS settings.
    `base` (default: os.environ) lets a developer override SKILLS_MODEL, POWERTOOLS_LOG_LEVEL and credentials.
    """
    template = template or load_template()
    base = os.environ if base is None else base
    parameters = template.get("Parameters") or {}
    variables = (
        ((template.get("Globals") or {}).get("Function") or {}).get("Environment", {}).get("Variables", {})
    )
    env: dict[str, str] = {}
    for name, value in variables.items():
        resolved = _resolve(value, parameters)
        if resolved is not None:
            env[name] = resolved
    env.update(table_env)
    # Hosted endpoints (docs/contract.md "The local stack"): the allow-list, and the local-only settings that let a test server on
    # a loopback address stand in for a public endpoint; passed through from the developer's environment.
    for name in HOSTED_PASS_THROUGH:
        if base.get(name):
            env[name] = base[name]
    env.update(
        {
            "SKILLS_DYNAMODB_ENDPOINT": dynamodb_endpoint,
            "SKILLS_LOCAL": "1",
            "SKILLS_WORK_QUEUE_URL": LOCAL_WORK_QUEUE_URL,
            "SKILLS_MODEL": base.get("SKILLS_MODEL") or "offline",
            # The local agent host's client (jwt_local.HOST_CLIENT_ID): `make token KIND=host` names it.
            "SKILLS_HOST_CLIENT_IDS": "skillcore-local-host",
            "AWS_REGION": base.get("AWS_REGION") or LOCAL_REGION,
            "AWS_DEFAULT_REGION": base.get("AWS_REGION") or base.get("AWS_DEFAULT_REGION") or LOCAL_REGION,
            # DynamoDB Local runs with -sharedDb and ignores credentials; boto3 still needs some to sign.
            "AWS_ACCESS_KEY_ID": base.get("AWS_ACCESS_KEY_ID") or "local",
            "AWS_SECRET_ACCESS_KEY": base.get("AWS_SECRET_ACCESS_KEY") or "local",
            "POWERTOOLS_LOG_LEVEL": base.get("POWERTOOLS_LOG_LEVEL")
            or env.get("POWERTOOLS_LOG_LEVEL", "INFO"),
            # No X-Ray daemon and no CloudWatch here: tracing off, metrics not printed as EMF on every request.
            "POWERTOOLS_TRACE_DISABLED": base.get("POWERTOOLS_TRACE_DISABLED") or "true",
            "POWERTOOLS_METRICS_DISABLED": base.get("POWERTOOLS_METRICS_DISABLED") or "true",
        }
    )
    return env


# ---------------------------------------------------------------------------------------------- context


class LambdaContext:
    """The attributes of the Python runtime's context object, with the same types (memory is a string there)."""

    def __init__(
        self, spec: FunctionSpec, *, region: str = LOCAL_REGION, account: str = LOCAL_ACCOUNT
    ) -> None:
        self.function_name = spec.function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:{region}:{account}:function:{spec.function_name}"
        self.memory_limit_in_mb = str(spec.memory)
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{spec.function_name}"
        self.log_stream_name = f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]{uuid.uuid4().hex}"
        self.identity = None
        self.client_context = None
        self.tenant_id = None
        self.timeout_seconds = spec.timeout
        self._deadline = time.monotonic() + spec.timeout

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


# ---------------------------------------------------------------------------------------------- registry


def _guard_dynamodb(module: ModuleType, logical_id: str) -> None:
    """The function's DynamoDB client (its composition root's `db`) refuses what its role in template.yaml would
    not allow in AWS (skillcore_local/iam.py). Every function of the template has one
    (tests/harness/stack/test_local_iam.py); a module without one reaches no table through it."""
    raw = getattr(getattr(getattr(module, "db", None), "client", None), "raw", None)
    if raw is not None:
        iam.guard(raw, logical_id, os.environ)


class FunctionRegistry:
    """Loads each handler lazily, by file path, under a module name of its own (every function has an `app.py`).

    Loading is lazy so the environment is in place first (handlers read it at import) and so a handler that
    does not import yet fails its requests, not the whole stack. Tests may swap a handler with override().
    """

    def __init__(self, specs: Mapping[str, FunctionSpec] | None = None) -> None:
        self.specs: dict[str, FunctionSpec] = dict(specs if specs is not None else function_specs())
        self._modules: dict[str, ModuleType] = {}
        self._overrides: dict[str, Handler] = {}
        self._lock = threading.Lock()

    def spec(self, logical_id: str) -> FunctionSpec:
        try:
            return self.specs[logical_id]
        except KeyError:
            raise LookupError(
                f"no function {logical_id!r} in template.yaml; known: {sorted(self.specs)}"
            ) from None

    def handler(self, logical_id: str) -> Handler:
        override = self._overrides.get(logical_id)
        if override is not None:
            return override
        spec = self.spec(logical_id)
        module = self._load(spec)
        handler = getattr(module, spec.attribute, None)
        if not callable(handler):
            raise FunctionLoadError(f"{spec.module_file} has no callable {spec.attribute!r}")
        return handler

    def module(self, logical_id: str) -> ModuleType:
        """The function's handler module, loaded (its composition root: `db`, the services it wired)."""
        return self._load(self.spec(logical_id))

    def _load(self, spec: FunctionSpec) -> ModuleType:
        with self._lock:  # one import per function even when the first requests arrive together
            module = self._modules.get(spec.logical_id)
            if module is not None:
                return module
            path = spec.module_file
            if not path.is_file():
                raise FunctionLoadError(f"{spec.logical_id}: handler file {path} does not exist")
            ensure_layer_on_path()
            name = f"skillcore_local_fn_{spec.logical_id}"
            module_spec = importlib.util.spec_from_file_location(name, path)
            if module_spec is None or module_spec.loader is None:
                raise FunctionLoadError(f"{spec.logical_id}: cannot load {path}")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            # Lambda's task root is the code directory: sibling modules import as top-level names.
            sys.path.insert(0, str(spec.code_dir))
            # The Root the module builds passes its secrets key and work queue through the function's IAM guard.
            from skillcore import bootstrap

            guarded = bootstrap.PORT_GUARD.set(iam.port_guard(spec.logical_id))
            try:
                module_spec.loader.exec_module(module)
            except BaseException as error:
                sys.modules.pop(name, None)
                # The handler's init paused the collector (skillcore.init_phase) and never reached its end;
                # Lambda would drop this process, the local stack lives on, so the collector resumes here.
                gc.enable()
                raise FunctionLoadError(f"{spec.logical_id}: importing {path} failed: {error!r}") from error
            finally:
                bootstrap.PORT_GUARD.reset(guarded)
                sys.path.remove(str(spec.code_dir))
            _guard_dynamodb(module, spec.logical_id)
            self._modules[spec.logical_id] = module
            return module

    @contextmanager
    def override(self, logical_id: str, handler: Handler) -> Iterator[None]:
        self.spec(logical_id)
        previous = self._overrides.get(logical_id)
        self._overrides[logical_id] = handler
        try:
            yield
        finally:
            if previous is None:
                self._overrides.pop(logical_id, None)
            else:
                self._overrides[logical_id] = previous

    def invoke(self, logical_id: str, event: dict[str, Any]) -> Any:
        """Calls the handler once; exceptions propagate (the caller decides what Lambda's caller would see)."""
        handler = self.handler(logical_id)
        context = LambdaContext(self.spec(logical_id))
        result = handler(event, context)
        if context.get_remaining_time_in_millis() == 0:
            # Nothing can stop a thread here; say loudly that Lambda would have killed this invocation.
            print(
                f"WARNING: {logical_id} ran longer than its {context.timeout_seconds} s timeout; "
                "in Lambda this invocation would have been killed",
                file=sys.stderr,
                flush=True,
            )
        return result


# ---------------------------------------------------------------------------------------------- CLI

DEFAULT_DDB_PORT = "8000"


def local_endpoint(env: Mapping[str, str]) -> str:
    """The DynamoDB the running stack uses: an explicit endpoint, else DynamoDB Local on the port `make dev`
    was started with (SKILLS_LOCAL_DDB_PORT, the same variable and default as skillcore_local.stack)."""
    explicit = env.get("SKILLS_DYNAMODB_ENDPOINT")
    if explicit:
        return explicit
    port = (env.get("SKILLS_LOCAL_DDB_PORT") or "").strip() or DEFAULT_DDB_PORT
    if not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise SystemExit(f"SKILLS_LOCAL_DDB_PORT must be a TCP port number, not {port!r}")
    return f"http://127.0.0.1:{int(port)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m skillcore_local.invoke", description=__doc__.splitlines()[0]
    )
    parser.add_argument("function", help="logical id in template.yaml, e.g. RpcFunction")
    parser.add_argument("event", type=Path, help="a JSON event file, e.g. events/rpc_health.json")
    args = parser.parse_args(argv)

    registry = FunctionRegistry()
    if args.function not in registry.specs:
        parser.error(f"unknown function {args.function!r}; choose from {', '.join(sorted(registry.specs))}")
    try:
        event = json.loads(args.event.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        parser.error(f"cannot read event {args.event}: {error}")

    from skillcore_local.ddb_local import client, ping

    endpoint = local_endpoint(os.environ)
    if not ping(endpoint):
        print(
            f"DynamoDB is not answering at {endpoint}: start the stack (`make dev`) first, with the same "
            "SKILLS_LOCAL_DDB_PORT",
            file=sys.stderr,
        )
        return 2
    tables = ensure_tables(client(endpoint))
    os.environ.update(function_env(tables, endpoint))
    # The catalog's package bytes, where `make dev` keeps them (skillcore_local/stack.py).
    data_dir = Path(os.environ.get("SKILLS_LOCAL_DATA_DIR") or ".local")
    os.environ.setdefault("SKILLS_LOCAL_PACKAGE_DIR", str(data_dir / "packages"))
    result = registry.invoke(args.function, event)
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
