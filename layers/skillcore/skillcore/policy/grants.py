"""PermissionGrant: a persistent, revocable grant of one permission code of one skill, in one scope.

A grant takes effect per skillId + permissionCode + scope. It records the skill version at grant time for
the audit; versions with the same major number share it (a minor upgrade keeps its grants), a new major
version or a new permission code needs its own grant.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, model_validator


class ScopeType(StrEnum):
    USER = "user"
    AGENT = "agent"


class GrantScope(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    type: ScopeType
    agent_id: str | None = None

    @model_validator(mode="after")
    def _agent_only_for_agent_scope(self) -> GrantScope:
        if (self.type is ScopeType.AGENT) != (self.agent_id is not None):
            raise ValueError("an agent scope names exactly one agent; a user scope names none")
        return self

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


class PermissionGrant(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

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

    @property
    def active(self) -> bool:
        return self.status is GrantStatus.ACTIVE


def same_major(version_a: str, version_b: str) -> bool:
    return version_a.split(".", 1)[0] == version_b.split(".", 1)[0]
