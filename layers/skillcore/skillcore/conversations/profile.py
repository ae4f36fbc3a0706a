"""Profile use cases (PUT/GET /rpc/me)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from msgspec import Struct

from skillcore.conversations import profile_store as users
from skillcore.conversations.models import Profile
from skillcore.db.dynamo import Db
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact
from skillcore.errors import InvalidTimezone, NotFound
from skillcore.timezones import valid_timezone

DEFAULT_TIMEZONE = "Asia/Shanghai"


class ProfileDeps(Struct, frozen=True):
    db: Db
    # The write that goes with a new profile (the default automation job), committed in the same
    # transaction: a user never has a profile without it, and concurrent first calls create one.
    created_with: Callable[[Profile, datetime], Op] | None = None


def put_profile(deps: ProfileDeps, user_id: str, *, timezone: str | None, display_name: str | None, now: datetime,
                initial_timezone: str | None = None) -> Profile:
    """Creates the profile (with `timezone`, else `initial_timezone`, else the default) or updates the fields given.
    An existing profile is not written when no field is given: the page's first call of a visit creates the
    profile in the browser's zone (`initial_timezone`) or reads it, in one request and without a 404."""
    for zone, path in ((timezone, "timezone"), (initial_timezone, "initialTimezone")):
        if zone is not None and not valid_timezone(zone):
            raise InvalidTimezone(zone, path=path)
    default_timezone = initial_timezone or DEFAULT_TIMEZONE
    if deps.created_with is not None:
        profile = Profile(user_id=user_id, timezone=timezone or default_timezone, display_name=display_name or "",
                          created_at=now, updated_at=now)
        try:
            transact(deps.db, [Op("profile", users.create_profile_op(deps.db, profile)), deps.created_with(profile, now)])
            return profile
        except TransactionFailed as failed:
            existing = failed.failed("profile")
            if existing is None:
                raise
            if timezone is None and display_name is None and existing.old:
                return users.profile_from_item(existing.old)
            # The profile exists: an update, below.
    profile, _ = users.upsert_profile(
        deps.db, user_id, timezone=timezone, display_name=display_name, default_timezone=default_timezone, now=now
    )
    return profile


def get_profile(db: Db, user_id: str) -> Profile:
    profile = users.get_profile(db, user_id)
    if profile is None:
        raise NotFound("no profile yet: PUT /rpc/me creates it")
    return profile
