"""DynamoDB's attribute-value format, both ways: the semantics of boto3.dynamodb.types' TypeSerializer and
TypeDeserializer (numbers through DynamoDB's Decimal context, sets by their members' type, `B` as Binary).

Ours because importing `boto3.dynamodb.types` imports boto3 itself (its session, s3transfer, multiprocessing):
about 60 modules and 10-15 ms of every function's cold start, for two small functions. The functions make their
clients with botocore (db/aws.py). tests/unit/test_attribute_values.py checks them against boto3's.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from decimal import Clamped, Context, Decimal, Inexact, Overflow, Rounded, Underflow
from typing import Any

DYNAMODB_CONTEXT = Context(Emin=-128, Emax=126, prec=38, traps=[Clamped, Overflow, Inexact, Rounded, Underflow])


class Binary:
    """A `B` value as boto3 gives it: equal to (and hashed as) its bytes."""

    __slots__ = ("value",)

    def __init__(self, value: bytes | bytearray) -> None:
        if not isinstance(value, bytearray | bytes):
            raise TypeError("Value must be of the following types: <class 'bytearray'>, <class 'bytes'>")
        self.value = value

    def __eq__(self, other: object) -> bool:
        return self.value == (other.value if isinstance(other, Binary) else other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Binary({self.value!r})"

    def __bytes__(self) -> bytes:
        return bytes(self.value)


def _is_number(value: Any) -> bool:
    if isinstance(value, int | Decimal):
        return True
    if isinstance(value, float):
        raise TypeError("Float types are not supported. Use Decimal types instead.")
    return False


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_binary(value: Any) -> bool:
    return isinstance(value, Binary | bytearray | bytes)


def _number(value: Any) -> str:
    number = str(DYNAMODB_CONTEXT.create_decimal(value))
    if number in ("Infinity", "NaN"):
        raise TypeError("Infinity and NaN not supported")
    return number


def _binary(value: Any) -> Any:
    return value.value if isinstance(value, Binary) else value


def _set_of(value: Any, member: Any) -> bool:
    return isinstance(value, Set) and False not in map(member, value)


def serialize(value: Any) -> dict[str, Any]:
    """One Python value as a DynamoDB attribute value (TypeSerializer.serialize)."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if _is_number(value):
        return {"N": _number(value)}
    if isinstance(value, str):
        return {"S": value}
    if _is_binary(value):
        return {"B": _binary(value)}
    if _set_of(value, _is_number):
        return {"NS": [_number(n) for n in value]}
    if _set_of(value, _is_string):
        return {"SS": list(value)}
    if _set_of(value, _is_binary):
        return {"BS": [_binary(b) for b in value]}
    if isinstance(value, Mapping):
        return {"M": {k: serialize(v) for k, v in value.items()}}
    if isinstance(value, list | tuple):
        return {"L": [serialize(v) for v in value]}
    raise TypeError(f'Unsupported type "{type(value)}" for value "{value}"')


def deserialize(value: Mapping[str, Any]) -> Any:
    """One DynamoDB attribute value as a Python value (TypeDeserializer.deserialize)."""
    if not value:
        raise TypeError("Value must be a nonempty dictionary whose key is a valid dynamodb type.")
    kind = next(iter(value.keys()))
    data = value[kind]
    match kind.lower():
        case "null":
            return None
        case "bool" | "s":
            return data
        case "n":
            return DYNAMODB_CONTEXT.create_decimal(data)
        case "b":
            return Binary(data)
        case "ns":
            return {DYNAMODB_CONTEXT.create_decimal(n) for n in data}
        case "ss":
            return set(data)
        case "bs":
            return {Binary(b) for b in data}
        case "l":
            return [deserialize(v) for v in data]
        case "m":
            return {k: deserialize(v) for k, v in data.items()}
    raise TypeError(f"Dynamodb type {kind} is not supported")
