"""Fixtures shared by the unit lane's store-mechanics tests (db/transact.py, db/idempotency.py): a real
DynamoDB client whose transport is botocore's Stubber, so the exact requests are asserted and nothing is sent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from skillcore.db.dynamo import Db
from skillcore.settings import Settings


@pytest.fixture
def raw() -> Any:
    # Static credentials: creating the client must not walk the credential chain.
    return boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing")


@pytest.fixture
def stub(raw: Any) -> Iterator[Stubber]:
    with Stubber(raw) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def db(raw: Any) -> Db:
    return Db(client=raw, tables=Settings.from_env({}).tables)
