"""Upgrades: which new version applies by itself and which waits for the person's consent, and who is in a canary.

A version `new` is a **compatible** upgrade of `old` (it applies by itself) when all of these hold:
- the same major version (semver);
- no new permission: every code `new` declares, `old` declares;
- no raised risk: each of those codes at no higher risk level than in `old`;
- no narrowed input: no tool binding's input schema of `new` accepts less than `old`'s (a binding removed, a
  property removed or changed, a property newly required, `additionalProperties` newly false, a type or
  enum changed). Decided once, when `new` is approved, against the version before it (`input_narrowed`).
Anything else is an upgrade that waits for consent: the installed version keeps serving meanwhile.

The canary share is deterministic: a user is in the canary of a version when the first 8 hex digits of
SHA-256(`<userId>\\n<version>`), as a number, modulo 100 is below the share in percent. Each new version
draws a new share of users, and the same user always gets the same answer for the same version.
"""

from __future__ import annotations

import hashlib
from typing import Any

from skillcore.packages import semver
from skillcore.packages.models import Permission, VersionRef

# skillcore.skills.manifest.RiskLevel's order, kept here so the scan's evaluation does not import the skills.
RISK_ORDER = {level: i for i, level in enumerate(("L0", "L1", "L2", "L3", "L4"))}


def bucket(user_id: str, version: str) -> int:
    digest = hashlib.sha256(f"{user_id}\n{version}".encode()).hexdigest()
    return int(digest[:8], 16) % 100


def in_canary(user_id: str, version: str, percent: int) -> bool:
    return bucket(user_id, version) < percent


def new_permissions(old: tuple[Permission, ...], new: tuple[Permission, ...]) -> list[str]:
    """Codes `new` asks for that `old` did not, or at a higher risk level."""
    before = {p.code: p for p in old}
    return [p.code for p in new if p.code not in before
            or RISK_ORDER[p.risk_level] > RISK_ORDER[before[p.code].risk_level]]


def compatible(old: VersionRef, new: VersionRef) -> bool:
    """`new` applies by itself over `old` (see the module's docstring)."""
    if semver.parse(old.version)[0] != semver.parse(new.version)[0]:
        return False
    return not new_permissions(old.permissions, new.permissions) and not new.input_narrowed


def newer(a: str, b: str) -> bool:
    return semver.compare(a, b) > 0


def _schema_narrowed(old: Any, new: Any) -> bool:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return old != new
    old_props = old.get("properties") or {}
    new_props = new.get("properties") or {}
    if any(name not in new_props or new_props[name] != schema for name, schema in old_props.items()):
        return True
    if not set(new.get("required") or ()) <= set(old.get("required") or ()):
        return True
    if old.get("additionalProperties", True) is not False and new.get("additionalProperties", True) is False:
        return True
    rest = {"properties", "required", "additionalProperties", "title", "description"}
    return {k: v for k, v in old.items() if k not in rest} != {k: v for k, v in new.items() if k not in rest}


def input_narrowed(old_bindings: dict[str, Any], new_bindings: dict[str, Any]) -> bool:
    """Whether any binding's input schema (by binding name) accepts less in `new_bindings` than in `old_bindings`."""
    return any(name not in new_bindings or _schema_narrowed(schema, new_bindings[name])
               for name, schema in old_bindings.items())
