"""Reads template.yaml, the one source of truth for tables and routes, without CloudFormation itself.

CloudFormation's short-form tags (!Ref, !Sub, !GetAtt, ...) are kept as {"Fn::..": value} mappings so the
document loads with a plain YAML parser.
"""

from __future__ import annotations

import contextlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"


class _CfnLoader(yaml.SafeLoader):
    pass


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_CfnLoader.add_multi_constructor("!", _tag)


@lru_cache(maxsize=1)
def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass


def table_resources(template: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Logical id -> Properties of every AWS::DynamoDB::Table."""
    template = template or load_template()
    return {
        name: resource.get("Properties", {})
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::DynamoDB::Table"
    }


def table_env(template: dict[str, Any] | None = None) -> dict[str, str]:
    """The SKILLS_TABLE_* variables of the functions' environment, mapped to logical table ids."""
    template = template or load_template()
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    return {
        name: value["Ref"]
        for name, value in variables.items()
        if name.startswith("SKILLS_TABLE_") and isinstance(value, dict) and "Ref" in value
    }


def create_table_kwargs(logical_id: str, properties: dict[str, Any], *, prefix: str = "") -> dict[str, Any]:
    """CreateTable arguments for a table declared in the template (on-demand billing, as deployed)."""
    kwargs: dict[str, Any] = {
        "TableName": f"{prefix}{logical_id}",
        "AttributeDefinitions": properties["AttributeDefinitions"],
        "KeySchema": properties["KeySchema"],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if properties.get("LocalSecondaryIndexes"):
        kwargs["LocalSecondaryIndexes"] = properties["LocalSecondaryIndexes"]
    if properties.get("GlobalSecondaryIndexes"):
        kwargs["GlobalSecondaryIndexes"] = [
            {k: v for k, v in index.items() if k != "ProvisionedThroughput"}
            for index in properties["GlobalSecondaryIndexes"]
        ]
    return kwargs


def ensure_tables(client: Any, *, prefix: str = "") -> dict[str, str]:
    """Creates every template table that does not exist yet; returns SKILLS_TABLE_* -> physical name."""
    existing: set[str] = set()
    paginator = client.get_paginator("list_tables")
    for page in paginator.paginate():
        existing.update(page.get("TableNames", []))
    for logical_id, properties in table_resources().items():
        kwargs = create_table_kwargs(logical_id, properties, prefix=prefix)
        if kwargs["TableName"] in existing:
            continue
        client.create_table(**kwargs)
        client.get_waiter("table_exists").wait(TableName=kwargs["TableName"], WaiterConfig={"Delay": 0.2})
        ttl = properties.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled"):
            # Some emulators lack TTL; expiry is housekeeping, never relied upon for correctness.
            with contextlib.suppress(client.exceptions.ClientError):
                client.update_time_to_live(
                    TableName=kwargs["TableName"],
                    TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": True},
                )
    return {env: f"{prefix}{logical}" for env, logical in table_env().items()}
