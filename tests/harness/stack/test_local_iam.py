"""The local stack holds each function's DynamoDB client to its role in template.yaml (skillcore_local/iam.py):
what IAM would refuse in AWS is refused here too, so a stack test that takes a path whose function lacks a
permission fails locally instead of in AWS."""

from __future__ import annotations

from typing import Any

import pytest

from skillcore.db.errors import StoreError
from skillcore_local import iam
from skillcore_local.invoke import function_specs
from skillcore_local.template import table_env, table_resources
from tests.local_stack import StackClient


def _query_it_may_make(function: str, physical: dict[str, str]) -> dict[str, Any]:
    """A Query the function's role allows (every function has one): on the table, or on its first index."""
    need = next(n for n in sorted(iam.grants(function)) if n.action == "dynamodb:Query")
    props = table_resources()[need.table]
    indexes = (props.get("GlobalSecondaryIndexes") or []) + (props.get("LocalSecondaryIndexes") or [])
    index = indexes[0] if need.on_index else None
    schema = index["KeySchema"] if index else props["KeySchema"]
    hash_key = next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")
    kind = next(a["AttributeType"] for a in props["AttributeDefinitions"] if a["AttributeName"] == hash_key)
    query = {"TableName": physical[need.table], "KeyConditionExpression": "#h = :h",
             "ExpressionAttributeNames": {"#h": hash_key}, "ExpressionAttributeValues": {":h": {kind: "0"}},
             "Limit": 1}
    return query | ({"IndexName": index["IndexName"]} if index else {})


@pytest.mark.parametrize("function", sorted(function_specs()))
def test_a_request_outside_the_role_is_refused_and_one_inside_goes_through(stack: StackClient,
                                                                           function: str) -> None:
    db = stack.local.registry.module(function).db
    with pytest.raises(StoreError) as refused:  # no function may Scan a table
        db.client.scan(TableName=db.tables.audit, Limit=1)
    assert refused.value.code == "AccessDeniedException"
    with pytest.raises(StoreError) as refused:  # nor reach a table the template does not declare
        db.client.get_item(TableName="not-a-table", Key={"pk": {"S": "x"}, "sk": {"S": "x"}})
    assert refused.value.code == "AccessDeniedException"
    physical = {logical: stack.env[variable] for variable, logical in table_env().items()}
    assert db.client.query(**_query_it_may_make(function, physical))["Items"] == []


def _root(stack: StackClient, function: str) -> Any:
    module = stack.local.registry.module(function)
    return module.root if hasattr(module, "root") else module.scan.root


@pytest.mark.parametrize("function", sorted(function_specs()))
def test_the_secrets_key_and_the_work_queue_are_held_to_the_role_too(stack: StackClient, function: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Each function's Root built its key and its queue through the guard (bootstrap.PORT_GUARD): only
    HostedFunction seals, only the hosted callers open, only the scan and the worker send."""
    from botocore.exceptions import ClientError

    from skillcore.hosted.secrets import context_of

    root = _root(stack, function)
    keys, queue = root.hosted.keys, root.work_queue
    assert isinstance(keys, iam.GuardedKeys) and isinstance(queue, iam.GuardedQueue)
    context = context_of("iam-user", "iam-endpoint")
    data_key, wrapped = keys.inner.generate_data_key(context)  # the key file itself, unguarded
    if function == "HostedFunction":
        assert keys.generate_data_key(context)[1] != wrapped
    else:
        with pytest.raises(ClientError, match="kms:GenerateDataKey"):
            keys.generate_data_key(context)
    if function in ("HostedFunction", "ChatTurnFunction", "McpFunction"):
        assert keys.decrypt_data_key(wrapped, context) == data_key
        with pytest.raises(ClientError, match="kms:Decrypt"):  # only in the endpoint's context
            keys.decrypt_data_key(wrapped, {"userId": "iam-user"})
    else:
        with pytest.raises(ClientError, match="kms:Decrypt"):
            keys.decrypt_data_key(wrapped, context)
    sent: list[str] = []
    monkeypatch.setattr(queue.inner, "send", sent.extend)  # nothing reaches the stack's queue
    if function in ("ScanFunction", "WorkerFunction"):
        queue.send(["{}"])
        assert sent == ["{}"]
    else:
        with pytest.raises(StoreError) as refused:
            queue.send(["{}"])
        assert "sqs:SendMessage" in str(refused.value.__cause__)
        assert sent == []
