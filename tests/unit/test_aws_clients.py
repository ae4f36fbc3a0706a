"""skillcore/db/aws.py: clients from one botocore session whose loader checks a service's name in its own directory
instead of listing every service botocore has data for. Same answers as botocore's own loader, without the listing
on the way to a client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import botocore.exceptions
import botocore.loaders
import pytest

from skillcore.db import aws

STATIC = {"region_name": "us-east-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


@pytest.fixture
def session() -> Iterator[Any]:
    """A fresh session for each test (the module keeps one per process)."""
    saved = aws._session
    aws._session = None
    try:
        yield
    finally:
        aws._session = saved


def loader() -> Any:
    return aws._session.get_component("data_loader")


@pytest.mark.usefixtures("session")
def test_every_client_the_layer_makes_is_made_without_listing_every_service(monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []
    original = botocore.loaders.Loader.list_available_services

    def spy(self: Any, type_name: str) -> Any:
        listed.append(type_name)
        return original(self, type_name)

    monkeypatch.setattr(botocore.loaders.Loader, "list_available_services", spy)
    for service in ("dynamodb", "bedrock-runtime", "sqs", "kms", "s3"):
        made = aws.client(service, **STATIC)
        assert made.meta.service_model.service_name == service
    assert listed == []


@pytest.mark.usefixtures("session")
def test_the_service_names_answer_as_botocore_does() -> None:
    aws.client("dynamodb", **STATIC)
    ours = loader().list_available_services("service-2")
    theirs = botocore.loaders.create_loader().list_available_services("service-2")
    assert "dynamodb" in ours and "bedrock-runtime" in ours
    assert all(name not in ours for name in ("no-such-service", "", "../dynamodb", ".", "dynamodb/2012-08-10", 7))
    assert list(ours) == theirs  # iterating lists them all, sorted, as botocore's list is
    # A service with a directory but no data of the asked type is not among them (botocore's own rule).
    rules = botocore.loaders.create_loader().list_available_services("endpoint-rule-set-1")
    assert [name for name in theirs if name in loader().list_available_services("endpoint-rule-set-1")] == rules


@pytest.mark.usefixtures("session")
def test_an_unknown_service_is_refused_as_botocore_refuses_it_naming_the_known_ones() -> None:
    with pytest.raises(botocore.exceptions.UnknownServiceError) as refused:
        aws.client("no-such-service", **STATIC)
    assert "dynamodb" in str(refused.value) and "bedrock-runtime" in str(refused.value)


@pytest.mark.usefixtures("session")
def test_the_loader_keeps_the_sessions_search_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))
    aws.client("dynamodb", **STATIC)
    assert loader().search_paths == botocore.loaders.create_loader(str(tmp_path)).search_paths
    assert loader().search_paths[0] == str(tmp_path)
