"""Trust levels and install sources (docs/packages.md "Trust levels").

Every skill has one: `builtin` (in the repository), `verified_publisher` (a publisher an operator verified),
`community` (a registered publisher, not verified), `user_own` (a user's own capability). A setting,
SKILLS_HIGH_RISK_TRUST_LEVELS (default `builtin,verified_publisher`), says which levels may ask for a permission
at risk L3 or above; L4 is refused for every package anyway (the release check's `risk_forbidden`). The rule
runs at the release check (the finding `trust_level_forbidden` in `permissions`) and again at install and at
an upgrade's consent (422 `trust_level_forbidden`), so a change of the setting holds for what is already
published.
"""

from __future__ import annotations

from collections.abc import Iterable

from skillcore.errors import TrustLevelForbidden
from skillcore.packages.models import Permission, TrustLevel

DEFAULT_HIGH_RISK = (TrustLevel.BUILTIN.value, TrustLevel.VERIFIED.value)
HIGH_RISK = frozenset({"L3", "L4"})


def first_high_risk(permissions: Iterable[Permission]) -> Permission | None:
    return next((p for p in permissions if p.risk_level in HIGH_RISK), None)


def check(trust_level: str, permissions: Iterable[Permission], allowed: Iterable[str]) -> None:
    """Raise TrustLevelForbidden when a permission at L3 or above is asked for by a level not `allowed`."""
    allowed = tuple(allowed)
    if trust_level in allowed:
        return
    high = first_high_risk(permissions)
    if high is not None:
        raise TrustLevelForbidden(trust_level=trust_level, permission=high.code, risk_level=high.risk_level,
                                  allowed=list(allowed))
