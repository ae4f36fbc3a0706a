"""The skill manifest: what a skill is and which permissions it requires (the seed's contract)."""

from __future__ import annotations

import re
from enum import StrEnum

from msgspec import Struct
from msgspec.structs import force_setattr

from skillcore import checks

_SKILL_ID = r"[a-z][a-z0-9-]{1,62}[a-z0-9]"
_CODE = r"[a-z_]+:[a-z_]+"
# semver.org's reference expression (major.minor.patch, optional pre-release and build metadata), used with
# fullmatch.
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
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


class PermissionRequirement(Struct, frozen=True, kw_only=True):
    code: str
    risk_level: RiskLevel
    approval_mode: ApprovalMode

    def __post_init__(self) -> None:
        if not checks.matches(self.code, _CODE):
            raise ValueError(f"permission code {self.code!r} must be resource:action in lower case")
        force_setattr(self, "risk_level", RiskLevel(self.risk_level))
        force_setattr(self, "approval_mode", ApprovalMode(self.approval_mode))


class SkillManifest(Struct, frozen=True, kw_only=True):
    """Checked when built, so a bad built-in manifest fails the import (and the tests) with its field named.

    A Struct with explicit checks rather than a pydantic model: manifests are code, not input, and every
    function builds all of them at import, where a pydantic model would also build its validator.
    """

    skill_id: str
    version: str
    kind: SkillKind
    name: str
    description: str
    permissions: tuple[PermissionRequirement, ...] = ()
    scope: ConversationScope = ConversationScope.ANY
    # "builtin" (in the repository) or "package" (an installed catalog skill's serving version: its tool outcomes
    # are counted per version for its canary, skillcore/outcomes/).
    source: str = "builtin"
    # The name in Chinese, for what the server itself says in a Chinese conversation (a grant notice); the page
    # keeps its own copy of it (web/lib/names.js, checked equal by tests/unit/test_skill_names.py).
    name_zh: str = ""

    def __post_init__(self) -> None:
        if self.source not in ("builtin", "package"):
            raise ValueError("source must be builtin or package")
        if not checks.matches(self.skill_id, _SKILL_ID):
            raise ValueError(f"skill_id {self.skill_id!r} must be 3-64 of a-z, 0-9 and -, starting with a letter")
        if not checks.matches(self.version, _SEMVER):
            raise ValueError(f"version {self.version!r} is not semver")
        force_setattr(self, "kind", SkillKind(self.kind))
        force_setattr(self, "scope", ConversationScope(self.scope))
        if self.name_zh and not checks.text(self.name_zh, 60):
            raise ValueError("name_zh must be a string of 1 to 60 characters")
        for field, longest in (("name", 60), ("description", 300)):
            if not checks.text(getattr(self, field), longest):
                raise ValueError(f"{field} must be a string of 1 to {longest} characters")
        permissions = tuple(self.permissions)
        if not all(isinstance(p, PermissionRequirement) for p in permissions):
            raise ValueError("permissions must be PermissionRequirement values")
        codes = [p.code for p in permissions]
        if len(codes) != len(set(codes)):
            raise ValueError("permission codes must be unique")
        force_setattr(self, "permissions", permissions)

    def display_name(self, language: str) -> str:
        """The skill's name in `language` ("zh" or "en"), English where no Chinese name is given."""
        return self.name_zh if language == "zh" and self.name_zh else self.name

    @property
    def key(self) -> str:
        return f"{self.skill_id}@{self.version}"

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])

    def requirement(self, code: str) -> PermissionRequirement | None:
        return next((p for p in self.permissions if p.code == code), None)
