"""Plain dicts to and from DynamoDB's attribute-value format: floats as Decimal on the way in, whole
Decimals as int on the way out, None values dropped (an absent attribute keeps sparse indexes sparse)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from skillcore.db.attribute_values import deserialize, serialize


def _to_dynamo(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: _to_dynamo(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_to_dynamo(v) for v in value]
    return value


def _from_dynamo(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    if isinstance(value, set):
        return sorted(_from_dynamo(v) for v in value)
    return value


def to_item(data: dict[str, Any]) -> dict[str, Any]:
    """Serialises a dict; None values are dropped (absent attribute, which keeps sparse indexes sparse)."""
    return {k: serialize(_to_dynamo(v)) for k, v in data.items() if v is not None}


def to_value(value: Any) -> dict[str, Any]:
    return serialize(_to_dynamo(value))


def from_item(item: dict[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {k: _from_dynamo(deserialize(v)) for k, v in item.items()}
