"""Grants table: PermissionGrant items.

Key design: pk = userId, sk = "<skillId>#<permissionCode>#<scopeKey>" (scopeKey "user" or "agent#<agentId>").
One item per skill + code + scope: granting again re-activates it (same grantId), revoking flips its status.
A grant's narrowing (policy/scopes.py: resources and argument constraints) is the item's `narrowing`
attribute, its JSON: set by each grant that gives one, removed by a grant that gives none, kept by a revoke.
PolicyGate reads it with the grant, in the same request.
Access patterns: list a user's grants (Query pk: a user has few), fetch the grants a turn may need by key
(batched into the chat turn's first read), upsert one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from skillcore.clock import parse_time, to_api_time
from skillcore.conversations.profile_store import bindings_key, disabled_skills
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, batch_get, key, query_page
from skillcore.policy import scopes
from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant


def grant_sort_key(skill_id: str, code: str, scope: GrantScope) -> str:
    return f"{skill_id}#{code}#{scope.key}"


def grant_key(user_id: str, skill_id: str, code: str, scope: GrantScope) -> dict[str, Any]:
    return key(pk=user_id, sk=grant_sort_key(skill_id, code, scope))


def grant_from_item(item: dict[str, Any]) -> PermissionGrant:
    return PermissionGrant(
        grant_id=item["grantId"],
        user_id=item["pk"],
        skill_id=item["skillId"],
        skill_version=item["skillVersion"],
        permission_code=item["permissionCode"],
        scope=GrantScope(type=item["scopeType"], agent_id=item.get("agentId")),
        status=GrantStatus(item["status"]),
        granted_at=parse_time(item["grantedAt"]),
        revoked_at=parse_time(item["revokedAt"]) if item.get("revokedAt") else None,
        updated_at=parse_time(item["updatedAt"]),
        narrowing=scopes.decode(item["narrowing"]) if item.get("narrowing") else None,
    )


def list_grants(db: Db, user_id: str, *, limit: int = 100, cursor: str | None = None) -> tuple[list[PermissionGrant], str | None]:
    page = query_page(db, table=db.tables.grants, partition=("pk", user_id), limit=limit, cursor=cursor)
    return [grant_from_item(i) for i in page.items], page.next_cursor


def all_grants(db: Db, user_id: str) -> list[PermissionGrant]:
    grants, cursor = list_grants(db, user_id)
    while cursor:
        more, cursor = list_grants(db, user_id, cursor=cursor)
        grants += more
    return grants


def read_policy_state(db: Db, user_id: str, keys: list[dict[str, Any]]) -> tuple[frozenset[str], tuple[PermissionGrant, ...]]:
    """The user's disabled skills and the grants under `keys`, in one BatchGetItem: what PolicyGate and the
    enable switch need before a background job is created or executed."""
    bindings, grants = read_bindings(db, user_id, keys)
    return disabled_skills(bindings), grants


def read_bindings(db: Db, user_id: str, keys: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, tuple[PermissionGrant, ...]]:
    """The user's bindings item (the disabled skills, the installed catalog skills' ids) and the grants under
    `keys`, in one BatchGetItem."""
    found = batch_get(db, {db.tables.users: [bindings_key(user_id)], db.tables.grants: keys})
    bindings = found[db.tables.users]
    return (bindings[0] if bindings else None), tuple(grant_from_item(i) for i in found[db.tables.grants])


def set_grant(
    db: Db, *, user_id: str, skill_id: str, skill_version: str, code: str, scope: GrantScope,
    granted: bool, grant_id: str, now: datetime, narrowing: scopes.Narrowing | None = None,
) -> PermissionGrant:
    """Grants or revokes in one UpdateItem. A grant keeps its id and first grant time across re-grants;
    the version recorded is the one current at the latest grant, and so is the narrowing (none: unscoped)."""
    stamp = to_value(to_api_time(now))
    names = {
        "#gid": "grantId", "#sid": "skillId", "#ver": "skillVersion", "#code": "permissionCode",
        "#st": "scopeType", "#status": "status", "#ga": "grantedAt", "#ra": "revokedAt", "#u": "updatedAt",
    }
    values: dict[str, Any] = {
        ":gid": to_value(grant_id), ":sid": to_value(skill_id), ":code": to_value(code),
        ":st": to_value(scope.type.value), ":now": stamp,
    }
    sets = ["#gid = if_not_exists(#gid, :gid)", "#sid = :sid", "#code = :code", "#st = :st", "#u = :now"]
    if scope.agent_id:
        names["#aid"] = "agentId"
        values[":aid"] = to_value(scope.agent_id)
        sets.append("#aid = :aid")
    if granted:
        values[":active"] = to_value(GrantStatus.ACTIVE.value)
        values[":ver"] = to_value(skill_version)
        sets += ["#status = :active", "#ver = :ver", "#ga = :now"]
        names["#nw"] = "narrowing"
        if narrowing:
            values[":nw"] = to_value(scopes.encode(narrowing))
            sets.append("#nw = :nw")
            remove = " REMOVE #ra"
        else:
            remove = " REMOVE #ra, #nw"
    else:
        values[":revoked"] = to_value(GrantStatus.REVOKED.value)
        values[":ver"] = to_value(skill_version)
        sets += ["#status = :revoked", "#ra = :now", "#ga = if_not_exists(#ga, :now)", "#ver = if_not_exists(#ver, :ver)"]
        remove = ""
    response = db.client.update_item(
        TableName=db.tables.grants,
        Key=grant_key(user_id, skill_id, code, scope),
        UpdateExpression="SET " + ", ".join(sets) + remove,
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=values,
        ReturnValues="ALL_NEW",
    )
    return grant_from_item(from_item(response["Attributes"]) or {})


def to_grant_item(grant: PermissionGrant) -> dict[str, Any]:
    """For tests and fixtures that seed grants directly."""
    return to_item({
        "pk": grant.user_id, "sk": grant_sort_key(grant.skill_id, grant.permission_code, grant.scope),
        "grantId": grant.grant_id, "skillId": grant.skill_id, "skillVersion": grant.skill_version,
        "permissionCode": grant.permission_code, "scopeType": grant.scope.type.value, "agentId": grant.scope.agent_id,
        "status": grant.status.value, "grantedAt": to_api_time(grant.granted_at),
        "revokedAt": to_api_time(grant.revoked_at) if grant.revoked_at else None,
        "updatedAt": to_api_time(grant.updated_at),
        "narrowing": scopes.encode(grant.narrowing) if grant.narrowing else None,
    })
