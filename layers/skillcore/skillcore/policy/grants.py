"""PermissionGrant: a persistent, revocable grant of one permission code of one skill, in one scope.

A grant takes effect per skillId + permissionCode + scope. It records the skill version at grant time for
the audit; versions with the same major number share it (a minor upgrade keeps its grants), a new major
version or a new permission code needs its own grant.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore.policy.scopes import Narrowing


class ScopeType(StrEnum):
    USER = "user"
    AGENT = "agent"


class GrantScope(Struct, frozen=True, kw_only=True, omit_defaults=True):
    type: ScopeType
    agent_id: str | None = None

    def __post_init__(self) -> None:
        force_setattr(self, "type", ScopeType(self.type))  # items and request bodies carry the plain string
        if (self.type is ScopeType.AGENT) != (self.agent_id is not None):
            raise ValueError("an agent scope names exactly one agent; a user scope names none")

    @property
    def key(self) -> str:
        return "user" if self.type is ScopeType.USER else f"agent#{self.agent_id}"

    @classmethod
    def user(cls) -> GrantScope:
        return cls(type=ScopeType.USER)

    @classmethod
    def agent(cls, agent_id: str) -> GrantScope:
        return cls(type=ScopeType.AGENT, agent_id=agent_id)


class GrantStatus(StrEnum):
    ACTIVE = "active"
    REVOKED = "revoked"


class PermissionGrant(Struct, frozen=True, kw_only=True):
    """Built by the grants store from its items, with explicit conversions."""

    grant_id: str
    user_id: str
    skill_id: str
    skill_version: str
    permission_code: str
    scope: GrantScope
    status: GrantStatus
    granted_at: datetime
    revoked_at: datetime | None = None
    updated_at: datetime
    # Finer scopes (policy/scopes.py): the resources and argument constraints it is narrowed to; None: unscoped.
    narrowing: Narrowing | None = None

    @property
    def active(self) -> bool:
        return self.status is GrantStatus.ACTIVE


def same_major(version_a: str, version_b: str) -> bool:
    return version_a.split(".", 1)[0] == version_b.split(".", 1)[0]
