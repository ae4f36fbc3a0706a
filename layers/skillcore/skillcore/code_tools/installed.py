"""What this feature needs of installs: a user's installed skills, each with the version that serves them.

    installed(user_id) -> Sequence[InstalledSkill]

The install flow (issue 25 point 6: the catalog's install, consent, upgrades and rollback) owns the records and
which version serves; this feature reads only that list, through the port bootstrap.py binds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from msgspec import Struct


class InstalledSkill(Struct, frozen=True, kw_only=True):
    skill_id: str
    version: str
    release_id: str


Installed = Callable[[str], Sequence[InstalledSkill]]
