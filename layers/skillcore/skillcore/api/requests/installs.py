"""Request models of the install routes (docs/packages.md "Install, consent and upgrade")."""

from typing import Annotated

from pydantic import StringConstraints

from skillcore.shapes import Strict

SkillId = Annotated[str, StringConstraints(max_length=64, pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]  # skillcore.json's
Version = Annotated[str, StringConstraints(min_length=5, max_length=64, pattern=r"^[0-9A-Za-z.+-]+$")]


class InstallSkill(Strict):
    skill_id: SkillId


class AcceptUpgrade(Strict):
    version: Version
