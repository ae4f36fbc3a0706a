"""The building blocks of the wire shapes that pydantic checks: strict models (unknown fields are rejected,
camelCase on the wire), the blank-text rule and JSON's one number type. The API's request models and the
user-capability structure (capabilities/structure.py) are built from them. No `from __future__ import
annotations` here or in the models built on this: with string annotations pydantic compiles each one when the
class is defined.
"""

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, StringConstraints
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from pydantic.json_schema import JsonDict


class Strict(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", alias_generator=to_camel, populate_by_name=False, frozen=True)


# White space as Python (str.isspace) or JSON Schema's ECMA-262 regexes count it, spelled out so that the
# document's pattern and not_blank agree character for character whatever engine reads the pattern.
BLANK = frozenset(
    "\t\n\v\f\r \x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
)


def not_blank(value: str) -> str:
    if all(char in BLANK for char in value):
        raise ValueError("must not be blank")
    return value


# What the document says of a text that not_blank checks: one character at least that is not in BLANK.
NOT_BLANK: "JsonDict" = {"pattern": "[^" + "".join(f"\\u{ord(char):04x}" for char in sorted(BLANK)) + "]"}


def no_null_properties(schema: dict[str, Any]) -> None:
    """For PATCH bodies: a field may be left out, but null is not a value (the model's None means "absent")."""
    for prop in (schema.get("properties") or {}).values():
        options = prop.pop("anyOf", None)
        if options is None:
            continue
        kept = [option for option in options if option != {"type": "null"}]
        prop.update(kept[0] if len(kept) == 1 else {"anyOf": kept})
        prop.pop("default", None)


def _integral(value: object) -> object:
    # JSON has one number type: 5.0 is the integer 5 (JSON Schema says so too). Strict int alone refuses it.
    return int(value) if isinstance(value, float) and value.is_integer() else value


# A bounded integer in a JSON body: 5 or 5.0, never "5" or true. The bounds go inside, before the validator,
# or the document gets pydantic's ge/le instead of JSON Schema's minimum/maximum.
INTEGRAL = BeforeValidator(_integral)

Id = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]

# An IANA zone name in a body (a profile's, a job's).
TIMEZONE_MAX = 64
