"""The input schema the chat model is offered for a remote tool's (hosted/chat_tools.py): built by construction
from an allow-list, never by deleting from the remote one, with the aliases of the property names that are not
safe to show and the remote texts that go to the quoted data block instead (chat_tools.py's docstring says
what passes)."""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import unquote

from msgspec import Struct

from skillcore.capabilities.defences.text_filter import rules_broken

SAFE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
ALIAS_PREFIX: Final = "p_"
ALIAS: Final = re.compile(r"p_[0-9a-f]{12}")

# Caps of one offered schema (the hosted workflows page of the docs, "In the chat").
MAX_SCHEMA_DEPTH: Final = 8              # nesting of the offered schema (an inlined $ref counts as a level)
MAX_SCHEMA_NODES: Final = 256            # schemas emitted for one tool
MAX_SUBSCHEMAS: Final = 16               # members of one anyOf/oneOf/allOf
MAX_LITERAL_CHARS: Final = 40            # one enum/const string
MAX_ARGUMENT_NOTE_CHARS: Final = 200     # an argument's description inside its entry
MAX_ENUM_VALUES: Final = 64              # literals of one enum

TYPES: Final = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
FORMATS: Final = frozenset({"date-time", "date", "time", "duration", "email", "uri", "uri-reference", "uuid",
                            "ipv4", "ipv6", "hostname"})
NUMBER_BOUNDS: Final = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
SIZE_BOUNDS: Final = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
COMBINATIONS: Final = ("anyOf", "oneOf", "allOf")

_LITERAL_OK = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029`<>{}\[\]\"\\]+")


def flagged(text: str) -> bool:
    return bool(rules_broken(text.replace("_", " ").replace("-", " ")))


def safe_name(name: str) -> bool:
    """A property name shown as it is: an identifier whose words the text filter does not flag."""
    return bool(SAFE_NAME.fullmatch(name)) and not flagged(name)


def alias(name: str) -> str:
    """The name the model sees for a remote property name: itself when safe, else a stable hashed alias."""
    if safe_name(name) and not ALIAS.fullmatch(name):  # a remote name shaped like an alias is aliased too
        return name
    return ALIAS_PREFIX + hashlib.sha256(name.encode()).hexdigest()[:12]


def _finite(value: int | float) -> bool:
    return not isinstance(value, float) or math.isfinite(value)  # JSON has no NaN or infinity


def safe_literal(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int | float):
        return _finite(value)
    if isinstance(value, str):
        return (len(value) <= MAX_LITERAL_CHARS and (value == "" or bool(_LITERAL_OK.fullmatch(value)))
                and not any(unicodedata.category(c) in ("Cf", "Zl", "Zp") for c in value) and not flagged(value))
    return False


class OfferedSchema(Struct, frozen=True):
    schema: dict[str, Any]
    aliases: dict[str, str]   # alias -> remote property name, for the names that were not safe
    notes: dict[str, dict[str, str]]  # offered property path -> {"name": remote name, "description": remote text}


class _Builder:
    def __init__(self, root: Mapping[str, Any]):
        self.root = root
        self.nodes = 0
        self.aliases: dict[str, str] = {}
        self.notes: dict[str, dict[str, str]] = {}

    def build(self, schema: Any, depth: int, path: str) -> dict[str, Any] | bool:
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, Mapping) or depth > MAX_SCHEMA_DEPTH or self.nodes >= MAX_SCHEMA_NODES:
            return {}
        self.nodes += 1
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref)
            if target is None:
                return {}
            inlined = self.build(target, depth + 1, path)
            siblings = {k: v for k, v in schema.items() if k not in ("$ref", "$defs", "definitions")}
            if not siblings or not isinstance(inlined, dict):
                return inlined
            own = self.build(siblings, depth + 1, path)
            return {"allOf": [inlined, own]} if own else inlined
        out: dict[str, Any] = {}
        kind = schema.get("type")
        if isinstance(kind, str) and kind in TYPES:
            out["type"] = kind
        elif isinstance(kind, list) and kind and all(isinstance(k, str) and k in TYPES for k in kind):
            out["type"] = list(dict.fromkeys(kind))
        self._properties(schema, out, depth, path)
        items = schema.get("items")
        if isinstance(items, Mapping | bool):
            out["items"] = self.build(items, depth + 1, f"{path}[]")
        extra = schema.get("additionalProperties")
        if isinstance(extra, bool):
            out["additionalProperties"] = extra
        elif isinstance(extra, Mapping):
            out["additionalProperties"] = self.build(extra, depth + 1, f"{path}{{}}")
        for keyword in COMBINATIONS:
            members = schema.get(keyword)
            if isinstance(members, list) and 0 < len(members) <= MAX_SUBSCHEMAS:
                out[keyword] = [self.build(m, depth + 1, path) for m in members]
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt in FORMATS:
            out["format"] = fmt
        for keyword in NUMBER_BOUNDS:
            value = schema.get(keyword)
            if isinstance(value, int | float) and not isinstance(value, bool) and _finite(value):
                out[keyword] = value
            elif isinstance(value, bool) and keyword.startswith("exclusive"):
                out[keyword] = value  # draft 4's boolean form
        for keyword in SIZE_BOUNDS:
            value = schema.get(keyword)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out[keyword] = value
        if isinstance(schema.get("uniqueItems"), bool):
            out["uniqueItems"] = schema["uniqueItems"]
        enum = schema.get("enum")
        if isinstance(enum, list) and 0 < len(enum) <= MAX_ENUM_VALUES and all(safe_literal(v) for v in enum):
            out["enum"] = list(enum)
        if "const" in schema and safe_literal(schema["const"]):
            out["const"] = schema["const"]
        return out

    def _properties(self, schema: Mapping[str, Any], out: dict[str, Any], depth: int, path: str) -> None:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return
        offered: dict[str, Any] = {}
        names: dict[str, str] = {}
        for name, sub in properties.items():
            if not isinstance(name, str):
                continue
            shown = alias(name)
            if shown in offered:  # two remote names on one alias: the first keeps it
                continue
            names[name] = shown
            if shown != name:
                self.aliases[shown] = name
            where = f"{path}.{shown}" if path else shown
            self._note(where, name if shown != name else None, sub)
            offered[shown] = self.build(sub, depth + 1, where)
        out["properties"] = offered
        required = schema.get("required")
        if isinstance(required, list):
            kept = [names[r] for r in dict.fromkeys(r for r in required if isinstance(r, str)) if r in names]
            if kept:
                out["required"] = kept

    def _note(self, where: str, remote_name: str | None, sub: Any) -> None:
        note: dict[str, str] = {}
        if remote_name is not None:
            note["name"] = remote_name
        if isinstance(sub, Mapping):
            texts = [sub[k] for k in ("title", "description") if isinstance(sub.get(k), str) and sub[k].strip()]
            if texts:
                note["description"] = cut(" — ".join(dict.fromkeys(texts)), MAX_ARGUMENT_NOTE_CHARS)
        if note:
            self.notes[where] = note

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            return None
        target: Any = self.root
        for part in (p for p in ref[1:].split("/") if p):
            key = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and key in target:
                target = target[key]
            elif isinstance(target, list) and key.isdigit() and int(key) < len(target):
                target = target[int(key)]
            else:
                return None
        return target


BARE: Final = OfferedSchema(schema={"type": "object"}, aliases={}, notes={})


def offered_schema(schema: Any) -> OfferedSchema:
    """The input schema the model is offered for a remote one (the module's docstring), with its name aliases
    and the remote texts that go to the data block instead."""
    if not isinstance(schema, Mapping):
        return BARE
    builder = _Builder(schema)
    built = builder.build(schema, 0, "")
    out = built if isinstance(built, dict) else {}
    out = {"type": "object", **{k: v for k, v in out.items() if k != "type"}}
    return OfferedSchema(schema=out, aliases=builder.aliases, notes=builder.notes)


def remote_arguments(arguments: Any, aliases: Mapping[str, str]) -> Any:
    """The model's arguments with every alias (at any depth) back to its remote property name."""
    if isinstance(arguments, dict):
        return {aliases.get(k, k): remote_arguments(v, aliases) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [remote_arguments(v, aliases) for v in arguments]
    return arguments


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
