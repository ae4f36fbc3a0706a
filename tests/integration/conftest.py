"""Integration tests: the real handlers, the sample events, DynamoDB emulated by moto (in process)."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from skillcore_local.template import ensure_tables


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1", "SKILLS_MODEL": "offline", "POWERTOOLS_SERVICE_NAME": "skillcore-test",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SKILLS_DYNAMODB_ENDPOINT", raising=False)
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        tables = ensure_tables(client)
        for name, value in tables.items():
            monkeypatch.setenv(name, value)
        # HostedFunction seals endpoint secrets with the template's KMS key (moto's here).
        key = boto3.client("kms", region_name="us-east-1").create_key(Description="hosted endpoint secrets")
        monkeypatch.setenv("SKILLS_HOSTED_KEY_ID", key["KeyMetadata"]["KeyId"])
        # The catalog's package bytes go to the template's bucket (moto's here), through the S3 adapter.
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="skillcore-packages-test")
        monkeypatch.setenv("SKILLS_PACKAGE_BUCKET", "skillcore-packages-test")
        yield tables
