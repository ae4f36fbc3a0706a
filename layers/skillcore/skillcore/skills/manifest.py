"""The skill manifest: what a skill is and which permissions it requires (the seed's contract)."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

# semver.org's reference expression (major.minor.patch, optional pre-release and build metadata).
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class SkillKind(StrEnum):
    PROMPT = "prompt"
    WORKFLOW = "workflow"
    TOOL = "tool"
    BACKGROUND = "background"
    AUTOMATION = "automation"


class RiskLevel(StrEnum):
    L0 = "L0"  # no protected resource, pure computation
    L1 = "L1"  # protected data, read only
    L2 = "L2"  # revocable in-product write
    L3 = "L3"  # external write or high impact: not open yet
    L4 = "L4"  # irreversible (payment, deletion, publishing): forbidden


class ApprovalMode(StrEnum):
    NONE = "none"
    PERSISTENT = "persistent"
    PER_OPERATION = "per_operation"


class ConversationScope(StrEnum):
    """Where a skill may act: single chats only, or any conversation kind."""

    SINGLE_CHAT = "single_chat"
    ANY = "any"


class PermissionRequirement(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    code: str = Field(pattern=r"^[a-z_]+:[a-z_]+$")
    risk_level: RiskLevel
    approval_mode: ApprovalMode


class SkillManifest(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    skill_id: str = Field(pattern=r"^[a-z][a-z0-9-]{1,62}[a-z0-9]$")
    version: str
    kind: SkillKind
    name: str = Field(min_length=1, max_length=60)
    description: str = Field(min_length=1, max_length=300)
    permissions: tuple[PermissionRequirement, ...] = ()
    scope: ConversationScope = ConversationScope.ANY

    @field_validator("version")
    @classmethod
    def _semver(cls, value: str) -> str:
        if not _SEMVER.match(value):
            raise ValueError(f"version {value!r} is not semver")
        return value

    @field_validator("permissions")
    @classmethod
    def _unique_codes(cls, value: tuple[PermissionRequirement, ...]) -> tuple[PermissionRequirement, ...]:
        codes = [p.code for p in value]
        if len(codes) != len(set(codes)):
            raise ValueError("permission codes must be unique")
        return value

    @property
    def key(self) -> str:
        return f"{self.skill_id}@{self.version}"

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])

    def requirement(self, code: str) -> PermissionRequirement | None:
        return next((p for p in self.permissions if p.code == code), None)
