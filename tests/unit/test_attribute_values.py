"""skillcore/db/attribute_values.py gives what boto3.dynamodb.types gives, both ways, errors included."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import Binary as BotoBinary
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from skillcore.db.attribute_values import Binary, deserialize, serialize

VALUES: list[Any] = [
    None, True, False, 0, -7, 2**63, Decimal("1.5"), Decimal("-0.000001"), Decimal("1E+100"), "", "text", "日本",
    b"\x00\x01", bytearray(b"ab"), {1, 2, 3}, {Decimal("2.5")}, {"a", "b"}, {b"x", b"y"}, set(),
    [], [1, "a", None, [True]], (1, 2), {"a": {"b": [1, {"c": "d"}]}, "e": None},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_serialize_matches_boto3(value: Any) -> None:
    ours, theirs = serialize(value), TypeSerializer().serialize(value)
    if set(ours) & {"NS", "SS", "BS"}:  # a set's order is the set's own
        assert {k: sorted(v) for k, v in ours.items()} == {k: sorted(v) for k, v in theirs.items()}
    else:
        assert ours == theirs


@pytest.mark.parametrize("value", [1.5, 2**200, Decimal("Infinity"), Decimal("NaN"), object(), {1, "a"},
                                   {1.5}, Decimal("1.00000000000000000000000000000000000001")], ids=repr)
def test_serialize_refuses_what_boto3_refuses(value: Any) -> None:
    with pytest.raises(Exception) as theirs:
        TypeSerializer().serialize(value)
    with pytest.raises(type(theirs.value)):
        serialize(value)


ATTRIBUTES: list[dict[str, Any]] = [
    {"NULL": True}, {"BOOL": False}, {"N": "12"}, {"N": "-1.250"}, {"N": "1E+5"}, {"S": "x"}, {"B": b"\x00"},
    {"NS": ["1", "2.5"]}, {"SS": ["a", "b"]}, {"BS": [b"a", b"b"]}, {"L": [{"N": "1"}, {"S": "a"}]},
    {"M": {"a": {"M": {"b": {"L": [{"NULL": True}]}}}}},
]


@pytest.mark.parametrize("attribute", ATTRIBUTES, ids=repr)
def test_deserialize_matches_boto3(attribute: dict[str, Any]) -> None:
    ours, theirs = deserialize(attribute), TypeDeserializer().deserialize(attribute)
    assert ours == theirs
    assert type(ours) is type(theirs) or (isinstance(ours, Binary) and isinstance(theirs, BotoBinary))
    if isinstance(ours, Decimal):
        assert str(ours) == str(theirs)


@pytest.mark.parametrize("attribute", [{}, {"X": 1}, {"N": "1" * 39}], ids=repr)
def test_deserialize_refuses_what_boto3_refuses(attribute: dict[str, Any]) -> None:
    with pytest.raises(Exception) as theirs:
        TypeDeserializer().deserialize(attribute)
    with pytest.raises(type(theirs.value)):
        deserialize(attribute)


def test_binary_is_equal_to_and_hashed_as_its_bytes() -> None:
    assert Binary(b"ab") == b"ab" == BotoBinary(b"ab")
    assert Binary(b"ab") == Binary(b"ab") and hash(Binary(b"ab")) == hash(b"ab")
    assert bytes(Binary(bytearray(b"ab"))) == b"ab"
    with pytest.raises(TypeError):
        Binary("text")  # type: ignore[arg-type]
