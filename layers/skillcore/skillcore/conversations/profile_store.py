"""Users table: one partition per user.

Key design (pk = userId, sk = item kind):
- sk "profile":  the Profile (created by the first PUT /rpc/me).
- sk "bindings": the user's skill switches (the seed's Binding): {"disabled": [skillId, ...]}.
Access patterns: get/put profile by user; get bindings by user (batched into the chat turn's first read).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from skillcore.clock import parse_time, to_api_time
from skillcore.conversations.models import Profile
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, key

PROFILE = "profile"
BINDINGS = "bindings"


def profile_key(user_id: str) -> dict[str, Any]:
    return key(pk=user_id, sk=PROFILE)


def bindings_key(user_id: str) -> dict[str, Any]:
    return key(pk=user_id, sk=BINDINGS)


def profile_from_item(item: dict[str, Any]) -> Profile:
    return Profile(
        user_id=item["pk"],
        timezone=item["timezone"],
        display_name=item.get("displayName", ""),
        created_at=parse_time(item["createdAt"]),
        updated_at=parse_time(item["updatedAt"]),
    )


def get_profile(db: Db, user_id: str) -> Profile | None:
    item = from_item(db.client.get_item(TableName=db.tables.users, Key=profile_key(user_id)).get("Item"))
    return profile_from_item(item) if item else None


def create_profile_op(db: Db, profile: Profile) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": db.tables.users,
            "Item": to_item({
                "pk": profile.user_id, "sk": PROFILE, "timezone": profile.timezone,
                "displayName": profile.display_name, "createdAt": to_api_time(profile.created_at),
                "updatedAt": to_api_time(profile.updated_at),
            }),
            "ConditionExpression": "attribute_not_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": "pk"},
        }
    }


def upsert_profile(
    db: Db, user_id: str, *, timezone: str | None, display_name: str | None, default_timezone: str, now: datetime
) -> tuple[Profile, bool]:
    """Creates or updates the profile in one UpdateItem; returns (profile, created).

    ALL_OLD tells atomically whether the item existed, so of concurrent first calls exactly one sees
    `created` (the default automation job hangs on that)."""
    stamp = to_api_time(now)
    names = {"#tz": "timezone", "#dn": "displayName", "#c": "createdAt", "#u": "updatedAt"}
    values: dict[str, Any] = {":now": to_value(stamp)}
    sets = ["#u = :now", "#c = if_not_exists(#c, :now)"]
    values[":tz"] = to_value(timezone if timezone is not None else default_timezone)
    sets.append("#tz = :tz" if timezone is not None else "#tz = if_not_exists(#tz, :tz)")
    values[":dn"] = to_value(display_name if display_name is not None else "")
    sets.append("#dn = :dn" if display_name is not None else "#dn = if_not_exists(#dn, :dn)")
    response = db.client.update_item(
        TableName=db.tables.users,
        Key=profile_key(user_id),
        UpdateExpression="SET " + ", ".join(sets),
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=values,
        ReturnValues="ALL_OLD",
    )
    old = from_item(response.get("Attributes")) or {}
    created = not old
    item = {
        "pk": user_id,
        "timezone": timezone if timezone is not None else old.get("timezone", default_timezone),
        "displayName": display_name if display_name is not None else old.get("displayName", ""),
        "createdAt": old.get("createdAt", stamp),
        "updatedAt": stamp,
    }
    return profile_from_item(item), created


def disabled_skills(item: dict[str, Any] | None) -> frozenset[str]:
    return frozenset((item or {}).get("disabled", []))


def installed_skills(item: dict[str, Any] | None) -> frozenset[str]:
    """The ids of the user's installed catalog skills (skillcore/packages/install_store.py keeps the set)."""
    return frozenset((item or {}).get("installed", []))


def installed_op(db: Db, user_id: str, skill_id: str, *, installed: bool, now: datetime) -> dict[str, Any]:
    """The Update (for a transaction) that adds a skill id to the user's installed set, or removes it."""
    action = "ADD #i :s" if installed else "DELETE #i :s"
    return {"Update": {"TableName": db.tables.users, "Key": bindings_key(user_id),
                       "UpdateExpression": f"SET #u = :now {action}",
                       "ExpressionAttributeNames": {"#i": "installed", "#u": "updatedAt"},
                       "ExpressionAttributeValues": {":s": {"SS": [skill_id]}, ":now": to_value(to_api_time(now))}}}


def get_bindings(db: Db, user_id: str) -> dict[str, Any] | None:
    """The user's switches item: the disabled skills and the installed catalog skills' ids."""
    response = db.client.get_item(TableName=db.tables.users, Key=bindings_key(user_id), ConsistentRead=True)
    return from_item(response.get("Item"))


def get_disabled_skills(db: Db, user_id: str) -> frozenset[str]:
    return disabled_skills(get_bindings(db, user_id))


def set_skill_enabled(db: Db, user_id: str, skill_id: str, enabled: bool, now: datetime) -> frozenset[str]:
    """Adds or removes the skill from the user's disabled set (a string set: idempotent either way)."""
    action = "DELETE #d :s" if enabled else "ADD #d :s"
    response = db.client.update_item(
        TableName=db.tables.users,
        Key=bindings_key(user_id),
        UpdateExpression=f"SET #u = :now {action}",
        ExpressionAttributeNames={"#d": "disabled", "#u": "updatedAt"},
        ExpressionAttributeValues={":s": {"SS": [skill_id]}, ":now": to_value(to_api_time(now))},
        ReturnValues="ALL_NEW",
    )
    return disabled_skills(from_item(response.get("Attributes")))
