"""Profile use cases (PUT/GET /rpc/me)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from skillcore.db import users
from skillcore.db.dynamo import Db
from skillcore.errors import NotFound, RuleViolation
from skillcore.models import Profile
from skillcore.timezones import valid_timezone

DEFAULT_TIMEZONE = "Asia/Shanghai"


@dataclass(frozen=True)
class ProfileDeps:
    db: Db
    # Called exactly once per user, by the request that created the profile (the default automation job).
    on_created: Callable[[Profile, datetime], None] | None = None


def put_profile(deps: ProfileDeps, user_id: str, *, timezone: str | None, display_name: str | None, now: datetime) -> Profile:
    if timezone is not None and not valid_timezone(timezone):
        raise RuleViolation(f"unknown time zone {timezone!r}", code="invalid_timezone",
                            details={"errors": [{"path": "timezone", "message": "not an IANA time zone"}]})
    profile, created = users.upsert_profile(
        deps.db, user_id, timezone=timezone, display_name=display_name, default_timezone=DEFAULT_TIMEZONE, now=now
    )
    if created and deps.on_created:
        deps.on_created(profile, now)
    return profile


def get_profile(db: Db, user_id: str) -> Profile:
    profile = users.get_profile(db, user_id)
    if profile is None:
        raise NotFound("no profile yet: PUT /rpc/me creates it")
    return profile
