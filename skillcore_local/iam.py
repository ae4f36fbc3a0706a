"""The functions' DynamoDB permissions, enforced in the local stack as IAM enforces them in AWS.

DynamoDB Local and moto accept every request, so a function whose code starts using a table or an action its
role does not grant (a BatchWriteItem where the template allows PutItem, a read of one more table) passes every
local test and fails in AWS with AccessDeniedException. The local stack therefore loads each function with a
guard on its DynamoDB client (`guard`): before a request is sent, the IAM actions it needs are worked out from the
request itself (`needed`) and checked against the Allow statements of the function's `Policies` in template.yaml
(`grants`); a request the role would not allow is refused with the same AccessDeniedException, before it leaves.

What AWS checks, and this module with it:
- an item or query operation needs `dynamodb:<Operation>` on the table, or on `<table>/index/<name>` when it
  names an index;
- BatchGetItem and BatchWriteItem need `dynamodb:BatchGetItem` / `dynamodb:BatchWriteItem` on each table;
- TransactWriteItems needs, per item, `PutItem`, `UpdateItem`, `DeleteItem` or `ConditionCheckItem` on its table,
  and TransactGetItems `GetItem` (transactions are not IAM actions of their own).
Resources are the template's `!GetAtt <Table>.Arn` and `!Sub "${<Table>.Arn}/index/*"`; anything else (another
resource type, a wildcard, a Deny) is not modelled and counts as no grant.

The other AWS ports a function's Root builds are guarded too (`port_guard`, taken by skillcore/bootstrap.py's Root
while the local stack loads the function):
- the secrets key (hosted/secrets.py's KeyPort; locally the key file): sealing needs `kms:GenerateDataKey` and
  opening `kms:Decrypt`, on the key the function's template environment names (`SKILLS_HOSTED_KEY_ID:
  !Ref <Key>`), allowed by both the function's IAM statements (its Policies, and AWS::IAM::Policy resources
  attached to its role `<Function>Role`) and the key's KeyPolicy naming that role, each with its conditions
  met by the call's encryption context (`StringEquals`, `ForAllValues:`/`ForAnyValue:StringEquals`, `Null` on
  `kms:EncryptionContextKeys` and `kms:EncryptionContext:<key>`; any other operator fails);
- the work queue (work/sqs_queue.py; locally skillcore_local/sqs.py's LocalQueue): a send (SendMessageBatch)
  needs `sqs:SendMessage` on the queue its environment names (`SKILLS_WORK_QUEUE_URL: !Ref <Queue>`).
A function whose template environment names no key or queue has none in AWS: its calls are refused too.
Bedrock calls, and what SAM grants by itself (the SQS event source's receive and delete), are not guarded.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from skillcore_local.template import load_template, table_env

_INDEX_ARN = re.compile(r"\$\{(\w+)\.Arn\}/index/\*")
_TRANSACT_WRITE_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                           "ConditionCheck": "ConditionCheckItem"}


class Need(NamedTuple):
    """One IAM permission: the action, the table's logical id (or its physical name when it is no table of the
    template), and whether it is on the table's indexes."""

    action: str
    table: str
    on_index: bool = False

    def __str__(self) -> str:
        return f"{self.action} on {self.table}{'/index/*' if self.on_index else ''}"


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _resource(arn: Any) -> tuple[str, bool] | None:
    """(table logical id, on its indexes) of a resource the template writes as `!GetAtt T.Arn` or
    `!Sub "${T.Arn}/index/*"`; None for anything else."""
    if isinstance(arn, dict) and "Fn::GetAtt" in arn:
        target = arn["Fn::GetAtt"]
        parts = target if isinstance(target, list) else target.split(".")
        return (parts[0], False) if len(parts) == 2 and parts[1] == "Arn" else None
    if isinstance(arn, dict) and "Fn::Sub" in arn and isinstance(arn["Fn::Sub"], str):
        match = _INDEX_ARN.fullmatch(arn["Fn::Sub"])
        return (match.group(1), True) if match else None
    return None


def _statements(function: str, template: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The Allow statements of the function's role: its Policies, and the AWS::IAM::Policy resources attached to
    the role SAM makes for it (`<Function>Role`)."""
    properties = template["Resources"][function].get("Properties") or {}
    documents = [policy for policy in properties.get("Policies") or [] if isinstance(policy, dict)]
    # (a managed policy by name: none of the functions uses one for what is guarded here)
    for resource in template["Resources"].values():
        props = resource.get("Properties") or {}
        if resource.get("Type") == "AWS::IAM::Policy" and {"Ref": f"{function}Role"} in _as_list(props.get("Roles")):
            documents.append(props.get("PolicyDocument") or {})
    for document in documents:
        for statement in document.get("Statement") or []:
            if statement.get("Effect") == "Allow":
                yield statement


def grants(function: str, template: dict[str, Any] | None = None) -> frozenset[Need]:
    """What the function's role allows on the template's tables."""
    template = template or load_template()
    allowed: set[Need] = set()
    for statement in _statements(function, template):
        if "Condition" in statement:
            continue
        actions = [a for a in _as_list(statement.get("Action")) if str(a).startswith("dynamodb:")]
        for arn in _as_list(statement.get("Resource")):
            resource = _resource(arn)
            if resource is not None:
                allowed.update(Need(action, resource[0], on_index=resource[1]) for action in actions)
    return frozenset(allowed)


def needed(operation: str, params: Mapping[str, Any], tables: Mapping[str, str]) -> list[Need]:
    """The permissions a DynamoDB request needs; `tables` maps physical table names to logical ids."""

    def table(name: str) -> str:
        return tables.get(name, name)

    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [Need(f"dynamodb:{operation}", table(name)) for name in params.get("RequestItems") or {}]
    if operation in ("TransactWriteItems", "TransactGetItems"):
        found = []
        for item in params.get("TransactItems") or []:
            for kind, body in item.items():
                action = "GetItem" if kind == "Get" else _TRANSACT_WRITE_ACTIONS[kind]
                found.append(Need(f"dynamodb:{action}", table(body["TableName"])))
        return found
    if "TableName" in params:
        return [Need(f"dynamodb:{operation}", table(params["TableName"]), "IndexName" in params)]
    return [Need(f"dynamodb:{operation}", "*")]  # ListTables and the like: no function is granted one


def refused(allowed: frozenset[Need], operation: str, params: Mapping[str, Any],
            tables: Mapping[str, str]) -> list[Need]:
    return [need for need in needed(operation, params, tables) if need not in allowed]


def physical_tables(env: Mapping[str, str]) -> dict[str, str]:
    """Physical table name -> logical id, from the SKILLS_TABLE_* variables the functions are given."""
    return {env[variable]: logical for variable, logical in table_env().items() if env.get(variable)}


def access_denied(function: str, operation: str, missing: Iterable[Need], why: str = "") -> Exception:
    from botocore.exceptions import ClientError

    text = ", ".join(str(need) for need in missing) + (f" ({why})" if why else "")
    return ClientError({"Error": {"Code": "AccessDeniedException",
                                  "Message": f"{function}'s role in template.yaml does not allow {text}"},
                        "ResponseMetadata": {"HTTPStatusCode": 400}}, operation)


def guard(client: Any, function: str, env: Mapping[str, str], *, template: dict[str, Any] | None = None) -> None:
    """Refuses, on this boto3 DynamoDB client, every request the function's role would not allow in AWS. The
    refusal is printed too: a handler turns it into a 500 whose body says nothing of it."""
    allowed = grants(function, template)
    tables = physical_tables(env)

    def check(params: dict[str, Any], model: Any, **_: Any) -> None:
        missing = refused(allowed, model.name, params, tables)
        if missing:
            error = access_denied(function, model.name, missing)
            print(f"IAM (template.yaml) refused {model.name}: {error}", file=sys.stderr, flush=True)
            raise error

    client.meta.events.register_first("before-parameter-build.dynamodb", check, unique_id=f"skillcore-iam-{function}")


# ---------------------------------------------------------------------------------------------- KMS and SQS


def _condition_holds(condition: Mapping[str, Any] | None, request: Mapping[str, Sequence[str]]) -> bool:
    """Whether an IAM Condition block holds for a request whose condition keys (lower-cased) have these values.
    Only the operators the template uses are modelled; any other one does not hold."""
    for operator, tests in (condition or {}).items():
        for key, expected in (tests or {}).items():
            values = request.get(str(key).lower())
            wanted = {str(v).lower() if isinstance(v, bool) else str(v) for v in _as_list(expected)}
            if operator == "Null":
                if (values is None) != ("true" in wanted):
                    return False
            elif operator == "StringEquals":
                if values is None or len(values) != 1 or values[0] not in wanted:
                    return False
            elif operator == "ForAllValues:StringEquals":
                if values is not None and not set(values) <= wanted:
                    return False
            elif operator == "ForAnyValue:StringEquals":
                if values is None or not set(values) & wanted:
                    return False
            else:
                return False
    return True


def _encryption_context(context: Mapping[str, str]) -> dict[str, list[str]]:
    request = {"kms:encryptioncontextkeys": sorted(context)}
    request.update({f"kms:encryptioncontext:{key}".lower(): [value] for key, value in context.items()})
    return request


def _names(statement: Mapping[str, Any], action: str) -> bool:
    return any(pattern == "*" or fnmatch.fnmatchcase(action.lower(), str(pattern).lower())
               for pattern in _as_list(statement.get("Action")))


def _arn_of(value: Any) -> str | None:
    resource = _resource(value)
    return resource[0] if resource is not None and not resource[1] else None


def env_target(function: str, variable: str, template: dict[str, Any] | None = None) -> str | None:
    """The resource the function's template environment names in `variable` (`!Ref <Resource>`), if any."""
    template = template or load_template()
    variables = ((template["Resources"][function].get("Properties") or {}).get("Environment") or {}).get(
        "Variables") or {}
    value = variables.get(variable)
    return str(value["Ref"]) if isinstance(value, dict) and set(value) == {"Ref"} else None


def allows(function: str, action: str, resource: str, request: Mapping[str, Sequence[str]] | None = None,
           template: dict[str, Any] | None = None) -> bool:
    """Whether the function's IAM statements allow `action` on the template resource `resource` (`!GetAtt
    <resource>.Arn`) for a request with these condition values."""
    template = template or load_template()
    return any(_names(statement, action) and resource in [_arn_of(arn) for arn in _as_list(statement.get("Resource"))]
               and _condition_holds(statement.get("Condition"), request or {})
               for statement in _statements(function, template))


def key_policy_allows(function: str, action: str, key: str, request: Mapping[str, Sequence[str]],
                      template: dict[str, Any] | None = None) -> bool:
    """Whether the key's KeyPolicy allows the function's role (`!GetAtt <Function>Role.Arn`) `action`."""
    template = template or load_template()
    policy = ((template["Resources"].get(key) or {}).get("Properties") or {}).get("KeyPolicy") or {}
    role = f"{function}Role"
    for statement in policy.get("Statement") or []:
        principals = _as_list((statement.get("Principal") or {}).get("AWS"))
        if (statement.get("Effect") == "Allow" and _names(statement, action)
                and role in [_arn_of(p) for p in principals]
                and _condition_holds(statement.get("Condition"), request)):
            return True
    return False


def _refuse(function: str, operation: str, need: Need, why: str = "") -> Exception:
    error = access_denied(function, operation, [need], why)
    print(f"IAM (template.yaml) refused {operation}: {error}", file=sys.stderr, flush=True)
    return error


class GuardedKeys:
    """The function's secrets key (hosted/secrets.py KeyPort), refusing what its role and the key policy would."""

    def __init__(self, inner: Any, function: str, template: dict[str, Any] | None = None) -> None:
        self.inner = inner
        self.function = function
        self.template = template or load_template()
        self.key = env_target(function, "SKILLS_HOSTED_KEY_ID", self.template)

    def _check(self, action: str, operation: str, context: Mapping[str, str]) -> None:
        need = Need(action, self.key or "(no key in its template environment)")
        request = _encryption_context(context)
        if self.key is None:
            raise _refuse(self.function, operation, need, "SKILLS_HOSTED_KEY_ID is not set for it")
        if not allows(self.function, action, self.key, request, self.template):
            raise _refuse(self.function, operation, need, f"encryption context {sorted(context)}")
        if not key_policy_allows(self.function, action, self.key, request, self.template):
            raise _refuse(self.function, operation, need,
                          f"{self.key}'s key policy does not name its role for it with context {sorted(context)}")

    def generate_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        self._check("kms:GenerateDataKey", "GenerateDataKey", context)
        return self.inner.generate_data_key(context)

    def decrypt_data_key(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        self._check("kms:Decrypt", "Decrypt", context)
        return self.inner.decrypt_data_key(wrapped, context)


class GuardedQueue:
    """The function's work queue (work/sqs_queue.py WorkQueue): a send its role may not make is refused the way
    SqsWorkQueue reports SQS's refusal."""

    def __init__(self, inner: Any, function: str, template: dict[str, Any] | None = None) -> None:
        self.inner = inner
        self.function = function
        self.template = template or load_template()
        self.queue = env_target(function, "SKILLS_WORK_QUEUE_URL", self.template)

    def send(self, bodies: Sequence[str]) -> None:
        from skillcore.db.errors import StoreUnavailable

        need = Need("sqs:SendMessage", self.queue or "(no queue in its template environment)")
        if self.queue is None or not allows(self.function, need.action, self.queue, template=self.template):
            why = "SKILLS_WORK_QUEUE_URL is not set for it" if self.queue is None else ""
            raise StoreUnavailable("SendMessageBatch failed", code="ClientError",
                                   operation="send_message_batch") from _refuse(
                self.function, "SendMessageBatch", need, why)
        self.inner.send(bodies)


def port_guard(function: str, template: dict[str, Any] | None = None) -> Any:
    """What skillcore/bootstrap.py's Root passes each AWS port it builds through (bootstrap.PORT_GUARD)."""
    template = template or load_template()

    def wrap(kind: str, port: Any) -> Any:
        if kind == "kms":
            return GuardedKeys(port, function, template)
        if kind == "sqs":
            return GuardedQueue(port, function, template)
        return port

    return wrap
