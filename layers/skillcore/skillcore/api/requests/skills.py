"""Request models of the skill, permission and audit routes."""

from typing import Literal

from pydantic import Field

from skillcore.api.requests import Paging
from skillcore.shapes import Id, Strict


class PatchSkill(Strict):
    enabled: bool = Field(strict=True)


class UserScope(Strict):
    type: Literal["user"]


class AgentScope(Strict):
    type: Literal["agent"]
    agent_id: Id


class PatchPermission(Strict):
    skill_id: str = Field(min_length=1, max_length=64)
    permission_code: str = Field(min_length=1, max_length=64)
    scope: UserScope | AgentScope = Field(discriminator="type")
    granted: bool = Field(strict=True)


class AdminAuditQuery(Paging):
    user_id: str = Field(alias="userId", min_length=1, max_length=128)
