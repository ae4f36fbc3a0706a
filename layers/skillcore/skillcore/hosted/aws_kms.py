"""The KMS key of hosted endpoint secrets (hosted/secrets.py `KeyPort`): GenerateDataKey and Decrypt with the
template's `HostedSecretsKey`, the encryption context binding each data key to its owner and endpoint. Here
because boto3 stays in db/ (tests/unit/test_import_boundaries.py)."""

from __future__ import annotations

from typing import Any


class KmsKeys:
    def __init__(self, key_id: str, region: str, client: Any = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("kms", region_name=region)
        self.key_id = key_id
        self.client = client

    def generate_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        answer = self.client.generate_data_key(KeyId=self.key_id, KeySpec="AES_256", EncryptionContext=context)
        return answer["Plaintext"], answer["CiphertextBlob"]

    def decrypt_data_key(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        answer = self.client.decrypt(KeyId=self.key_id, CiphertextBlob=wrapped, EncryptionContext=context)
        return bytes(answer["Plaintext"])
