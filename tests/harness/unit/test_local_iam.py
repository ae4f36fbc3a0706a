"""skillcore_local/iam.py: the permissions a DynamoDB request needs, what each function's role grants in
template.yaml, and the guard the local stack puts on a function's client (a real boto3 client that sends
nothing)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from skillcore_local import iam
from skillcore_local.iam import Need

TABLES = {"p-Audit": "AuditTable", "p-Hosted": "HostedEndpointsTable", "p-Approvals": "ApprovalsTable"}


def test_item_and_query_operations_need_their_action_on_the_table_or_its_indexes() -> None:
    assert iam.needed("GetItem", {"TableName": "p-Audit", "Key": {}}, TABLES) == [Need("dynamodb:GetItem", "AuditTable")]
    assert iam.needed("Query", {"TableName": "p-Approvals"}, TABLES) == [Need("dynamodb:Query", "ApprovalsTable")]
    assert iam.needed("Query", {"TableName": "p-Approvals", "IndexName": "byStatus"}, TABLES) == [
        Need("dynamodb:Query", "ApprovalsTable", on_index=True)]
    # a table the template does not declare keeps its physical name, which no grant names
    assert iam.needed("PutItem", {"TableName": "other"}, TABLES) == [Need("dynamodb:PutItem", "other")]
    assert iam.needed("ListTables", {}, TABLES) == [Need("dynamodb:ListTables", "*")]


def test_batches_need_the_batch_action_on_each_table() -> None:
    request = {"RequestItems": {"p-Hosted": [{"PutRequest": {"Item": {}}}], "p-Audit": [{"PutRequest": {"Item": {}}}]}}
    assert iam.needed("BatchWriteItem", request, TABLES) == [
        Need("dynamodb:BatchWriteItem", "HostedEndpointsTable"), Need("dynamodb:BatchWriteItem", "AuditTable")]
    assert iam.needed("BatchGetItem", {"RequestItems": {"p-Approvals": {"Keys": []}}}, TABLES) == [
        Need("dynamodb:BatchGetItem", "ApprovalsTable")]


def test_transactions_need_each_item_s_own_action() -> None:
    items = [{"Put": {"TableName": "p-Hosted"}}, {"Update": {"TableName": "p-Approvals"}},
             {"Delete": {"TableName": "p-Hosted"}}, {"ConditionCheck": {"TableName": "p-Audit"}}]
    assert iam.needed("TransactWriteItems", {"TransactItems": items}, TABLES) == [
        Need("dynamodb:PutItem", "HostedEndpointsTable"), Need("dynamodb:UpdateItem", "ApprovalsTable"),
        Need("dynamodb:DeleteItem", "HostedEndpointsTable"), Need("dynamodb:ConditionCheckItem", "AuditTable")]
    assert iam.needed("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "p-Audit"}}]}, TABLES) == [
        Need("dynamodb:GetItem", "AuditTable")]


def test_grants_are_read_from_the_template_statements() -> None:
    template = {"Resources": {"Fn": {"Properties": {"Policies": [
        "AWSLambdaBasicExecutionRole",
        {"Statement": [
            {"Effect": "Allow", "Action": ["dynamodb:GetItem", "kms:Decrypt"],
             "Resource": [{"Fn::GetAtt": "AuditTable.Arn"}, {"Fn::GetAtt": ["ApprovalsTable", "Arn"]}]},
            {"Effect": "Allow", "Action": "dynamodb:Query", "Resource": {"Fn::Sub": "${ApprovalsTable.Arn}/index/*"}},
            {"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": "*"},  # not modelled: no grant
            {"Effect": "Deny", "Action": "dynamodb:DeleteItem", "Resource": {"Fn::GetAtt": "AuditTable.Arn"}},
        ]},
    ]}}}}
    assert iam.grants("Fn", template) == {
        Need("dynamodb:GetItem", "AuditTable"), Need("dynamodb:GetItem", "ApprovalsTable"),
        Need("dynamodb:Query", "ApprovalsTable", on_index=True)}


def test_the_hosted_call_path_is_granted_to_every_function_that_makes_one() -> None:
    """hosted/calls.py's requests (tests/stack/test_hosted_calls_service.py counts them), in each function that
    calls it: HostedFunction (the route, and an approval decided by API), McpFunction (call_hosted_tool),
    ChatTurnFunction (the chat's hosted tools)."""
    path = [Need("dynamodb:BatchGetItem", t) for t in ("UsersTable", "GrantsTable", "HostedEndpointsTable",
                                                       "ApprovalsTable")]
    path += [Need("dynamodb:PutItem", "HostedEndpointsTable"), Need("dynamodb:PutItem", "AuditTable"),
             Need("dynamodb:UpdateItem", "ApprovalsTable"), Need("dynamodb:PutItem", "ApprovalsTable")]
    path += [Need("dynamodb:BatchWriteItem", "HostedEndpointsTable"), Need("dynamodb:BatchWriteItem", "AuditTable")]
    for function in ("HostedFunction", "McpFunction", "ChatTurnFunction"):
        assert set(path) - iam.grants(function) == set(), function
    # RpcFunction makes no call: it only reads an endpoint (GetItem) that a grant's narrowing names.
    assert {n for n in iam.grants("RpcFunction") if n.table == "HostedEndpointsTable"} == {
        Need("dynamodb:GetItem", "HostedEndpointsTable")}


class _Sent:
    status_code = 200


@pytest.fixture
def client() -> Any:
    """A boto3 client that sends nothing: a before-call handler answers every request that gets that far (with
    an empty body) and records its operation."""
    raw = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="testing",
                       aws_secret_access_key="testing")
    raw.sent = []

    def answer(model: Any, **_: Any) -> tuple[_Sent, dict[str, Any]]:
        raw.sent.append(model.name)
        return _Sent(), {}

    raw.meta.events.register("before-call.dynamodb", answer)
    return raw


def test_the_guard_refuses_before_sending_and_lets_the_rest_through(client: Any) -> None:
    template = {"Resources": {"Fn": {"Properties": {"Policies": [{"Statement": [
        {"Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:PutItem"],
         "Resource": [{"Fn::GetAtt": "AuditTable.Arn"}]}]}]}}}}
    iam.guard(client, "Fn", {"SKILLS_TABLE_AUDIT": "p-Audit"}, template=template)
    assert client.get_item(TableName="p-Audit", Key={"pk": {"S": "a"}}) == {}
    with pytest.raises(ClientError) as refused:
        client.batch_write_item(RequestItems={"p-Audit": [{"PutRequest": {"Item": {"pk": {"S": "a"}}}}]})
    error = refused.value.response["Error"]
    assert error["Code"] == "AccessDeniedException"
    assert "dynamodb:BatchWriteItem on AuditTable" in error["Message"] and "Fn's role" in error["Message"]
    with pytest.raises(ClientError):  # a transaction is refused whole when one of its items is not allowed
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": "p-Audit", "Item": {"pk": {"S": "a"}}}},
            {"Delete": {"TableName": "p-Audit", "Key": {"pk": {"S": "a"}}}}])
    with pytest.raises(ClientError):  # the same table under another name is another table
        client.get_item(TableName="p-Other", Key={"pk": {"S": "a"}})
    assert client.sent == ["GetItem"]
