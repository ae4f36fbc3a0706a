"""Host protocols of built-in skills: what an agent host (Claude Code, Cursor, any MCP client) reads to use a
built-in skill, served by `get_capability_protocol` like a `user:` capability's, so the catalog lists one
kind of entry.

Written here by the platform's engineers, with the skill they describe (built-in ids are named only under
skills/): these texts are trusted instructions, unlike a user capability's texts, which the renderer only
ever quotes. A skill without a host protocol is not offered to agent hosts.
"""

from __future__ import annotations

from msgspec import Struct

from skillcore.skills.manifest import SkillManifest


class HostProtocol(Struct, frozen=True, kw_only=True):
    manifest: SkillManifest
    display_name: str
    when_to_use: tuple[str, ...]
    objective: str
    steps: tuple[str, ...]
    completion_criteria: str

    def __post_init__(self) -> None:
        if not self.steps or not self.when_to_use:
            raise ValueError(f"{self.manifest.key}: a host protocol needs steps and triggers")

    @property
    def capability_id(self) -> str:
        return self.manifest.skill_id
