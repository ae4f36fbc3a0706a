"""skillcore_local/iam.py beyond DynamoDB: the secrets key (KMS) and the work queue (SQS) of each function, checked
against its role's statements in template.yaml and, for the key, the key policy with its encryption-context
conditions. Fake ports stand in for the key file and the queue: nothing is sent anywhere."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from botocore.exceptions import ClientError

from skillcore.db.errors import StoreUnavailable
from skillcore.hosted.secrets import context_of
from skillcore_local import iam
from skillcore_local.template import load_template

CONTEXT = context_of("user-1", "ep-1")
FUNCTIONS = ("RpcFunction", "CatalogFunction", "HostedFunction", "ChatTurnFunction", "McpFunction", "ScanFunction",
             "WorkerFunction")
SEALS = {"HostedFunction"}
OPENS = {"HostedFunction", "ChatTurnFunction", "McpFunction"}
SENDS = {"ScanFunction", "WorkerFunction"}


class FakeKeys:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def generate_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        self.calls.append("generate")
        return b"k" * 32, b"wrapped"

    def decrypt_data_key(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        self.calls.append("decrypt")
        return b"k" * 32


class FakeQueue:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, bodies: list[str]) -> None:
        self.sent += bodies


def keys_of(function: str, template: dict[str, Any] | None = None) -> tuple[Any, FakeKeys]:
    inner = FakeKeys()
    return iam.port_guard(function, template)("kms", inner), inner


def denied(error: pytest.ExceptionInfo[ClientError]) -> str:
    assert error.value.response["Error"]["Code"] == "AccessDeniedException"
    return str(error.value.response["Error"]["Message"])


@pytest.mark.parametrize("function", FUNCTIONS)
def test_only_hosted_function_seals_and_only_the_hosted_callers_open(function: str) -> None:
    keys, inner = keys_of(function)
    if function in SEALS:
        assert keys.generate_data_key(CONTEXT) == (b"k" * 32, b"wrapped")
    else:
        with pytest.raises(ClientError) as refused:
            keys.generate_data_key(CONTEXT)
        assert "kms:GenerateDataKey" in denied(refused)
    if function in OPENS:
        assert keys.decrypt_data_key(b"wrapped", CONTEXT) == b"k" * 32
    else:
        with pytest.raises(ClientError) as refused:
            keys.decrypt_data_key(b"wrapped", CONTEXT)
        assert "kms:Decrypt" in denied(refused)
    assert inner.calls == ["generate"] * (function in SEALS) + ["decrypt"] * (function in OPENS)


@pytest.mark.parametrize("context", [{}, {"userId": "user-1"}, {"endpointId": "ep-1"},
                                     {**CONTEXT, "purpose": "other"}, {"userid": "user-1", "endpointId": "ep-1"}])
def test_the_key_is_used_only_in_the_endpoint_context(context: dict[str, str]) -> None:
    keys, inner = keys_of("HostedFunction")
    with pytest.raises(ClientError):
        keys.decrypt_data_key(b"wrapped", context)
    with pytest.raises(ClientError):
        keys.generate_data_key(context)
    assert inner.calls == []


def test_an_iam_grant_without_the_key_policy_is_refused_and_so_is_the_reverse() -> None:
    template = copy.deepcopy(load_template())
    rpc = template["Resources"]["RpcFunction"]["Properties"]
    rpc["Environment"] = {"Variables": {"SKILLS_HOSTED_KEY_ID": {"Ref": "HostedSecretsKey"}}}
    rpc["Policies"][0]["Statement"].append({"Effect": "Allow", "Action": "kms:Decrypt",
                                            "Resource": {"Fn::GetAtt": "HostedSecretsKey.Arn"}})
    keys, _ = keys_of("RpcFunction", template)
    with pytest.raises(ClientError) as refused:  # an IAM policy alone opens nothing: the key policy names roles
        keys.decrypt_data_key(b"wrapped", CONTEXT)
    assert "key policy does not name its role" in denied(refused)

    template = copy.deepcopy(load_template())
    opening = template["Resources"]["HostedSecretsOpening"]["Properties"]
    opening["Roles"] = [{"Ref": "ChatTurnFunctionRole"}]  # McpFunction's role loses its IAM grant
    keys, _ = keys_of("McpFunction", template)
    with pytest.raises(ClientError):
        keys.decrypt_data_key(b"wrapped", CONTEXT)
    assert keys_of("ChatTurnFunction", template)[0].decrypt_data_key(b"wrapped", CONTEXT) == b"k" * 32


def test_a_function_without_the_key_in_its_environment_is_refused() -> None:
    template = copy.deepcopy(load_template())
    del template["Resources"]["McpFunction"]["Properties"]["Environment"]["Variables"]["SKILLS_HOSTED_KEY_ID"]
    with pytest.raises(ClientError) as refused:
        keys_of("McpFunction", template)[0].decrypt_data_key(b"wrapped", CONTEXT)
    assert "SKILLS_HOSTED_KEY_ID" in denied(refused)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_only_the_scan_and_the_worker_send_to_the_work_queue(function: str) -> None:
    inner = FakeQueue()
    queue = iam.port_guard(function)("sqs", inner)
    if function in SENDS:
        queue.send(["a", "b"])
        assert inner.sent == ["a", "b"]
    else:
        with pytest.raises(StoreUnavailable) as refused:
            queue.send(["a"])
        cause = refused.value.__cause__
        assert isinstance(cause, ClientError)
        assert cause.response["Error"]["Code"] == "AccessDeniedException"
        assert "sqs:SendMessage" in cause.response["Error"]["Message"]
        assert inner.sent == []


def test_a_send_without_the_statement_is_refused() -> None:
    template = copy.deepcopy(load_template())
    statements = template["Resources"]["WorkerFunction"]["Properties"]["Policies"][0]["Statement"]
    statements[:] = [s for s in statements if s.get("Sid") != "Continuations"]
    with pytest.raises(StoreUnavailable) as refused:
        iam.port_guard("WorkerFunction", template)("sqs", FakeQueue()).send(["a"])
    assert "sqs:SendMessage on WorkQueue" in str(refused.value.__cause__)


def test_conditions_are_evaluated_and_unknown_operators_fail() -> None:
    holds = iam._condition_holds
    request = {"kms:encryptioncontextkeys": ["endpointId", "userId"], "kms:encryptioncontext:userid": ["u"]}
    assert holds({"ForAllValues:StringEquals": {"kms:EncryptionContextKeys": ["userId", "endpointId"]}}, request)
    assert not holds({"ForAllValues:StringEquals": {"kms:EncryptionContextKeys": ["userId"]}}, request)
    assert holds({"ForAllValues:StringEquals": {"kms:EncryptionContextKeys": ["userId"]}}, {})  # vacuous
    assert holds({"Null": {"kms:EncryptionContext:userId": "false"}}, request)
    assert not holds({"Null": {"kms:EncryptionContext:endpointId": False}}, request)
    assert holds({"StringEquals": {"kms:EncryptionContext:userId": "u"}}, request)
    assert not holds({"StringEquals": {"kms:EncryptionContext:userId": "v"}}, request)
    assert holds({"ForAnyValue:StringEquals": {"kms:EncryptionContextKeys": ["userId", "x"]}}, request)
    assert not holds({"StringLike": {"kms:EncryptionContext:userId": "*"}}, request)


def test_other_ports_pass_through() -> None:
    port = object()
    assert iam.port_guard("RpcFunction")("bedrock", port) is port
