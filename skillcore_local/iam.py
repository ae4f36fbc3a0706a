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
resource type, a wildcard, a Deny) is not modelled and counts as no grant. Only DynamoDB is guarded: KMS, SQS and
Bedrock calls are not.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
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


def grants(function: str, template: dict[str, Any] | None = None) -> frozenset[Need]:
    """What the function's role allows on the template's tables."""
    template = template or load_template()
    properties = template["Resources"][function].get("Properties") or {}
    allowed: set[Need] = set()
    for policy in properties.get("Policies") or []:
        if not isinstance(policy, dict):
            continue  # a managed policy by name: none of the functions uses one for DynamoDB
        for statement in policy.get("Statement") or []:
            if statement.get("Effect") != "Allow" or "Condition" in statement:
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


def access_denied(function: str, operation: str, missing: Iterable[Need]) -> Exception:
    from botocore.exceptions import ClientError

    text = ", ".join(str(need) for need in missing)
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
