"""The KMS key of hosted endpoint secrets (hosted/secrets.py `KeyPort`): GenerateDataKey and Decrypt with the
template's `HostedSecretsKey`, the encryption context binding each data key to its owner and endpoint. Here
because botocore stays in db/ and the named adapters (tests/unit/test_import_boundaries.py); the client is
made by db/aws.py."""

from __future__ import annotations

from typing import Any


class KmsKeys:
    def __init__(self, key_id: str, region: str, client: Any = None) -> None:
        if client is None:
            from skillcore.db.aws import client as aws_client

            client = aws_client("kms", region_name=region)
        self.key_id = key_id
        self.client = client

    def generate_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        answer = self.client.generate_data_key(KeyId=self.key_id, KeySpec="AES_256", EncryptionContext=context)
        return answer["Plaintext"], answer["CiphertextBlob"]

    def decrypt_data_key(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        answer = self.client.decrypt(KeyId=self.key_id, CiphertextBlob=wrapped, EncryptionContext=context)
        return bytes(answer["Plaintext"])
