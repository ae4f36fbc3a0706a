"""Installs and rollouts, in the catalog table (`SKILLS_TABLE_CATALOG`, beside packages/store.py's items).

Key design (pk, sk), the sparse index `byList` (listPk, listSk) shared with packages/store.py:

| item | pk | sk | byList |
|---|---|---|---|
| a user's install of a skill | `inst#<userId>` | `skill#<skillId>` | none |
| a skill's rollout: its stable version, its canary, the versions rolled back | `skill#<skillId>` | `rollout` | `canary`, `<skillId>` while a canary runs |

Access patterns: a user's installs in skill id order (Query `inst#<userId>`: one request a page); one install
(GetItem); the rollouts of a page of installs (one BatchGetItem); a skill's rollout (GetItem); the skills with
a canary running (Query byList `canary`: what the scheduled evaluation reads). No Scan. Records are kept whole
as msgspec JSON in `record`; `revision` is an install's optimistic lock, `rolloutRevision` the rollout's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, batch_get, key, query_page
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact
from skillcore.errors import AlreadyExists, ConcurrentUpdate, NotFound, VersionConflict
from skillcore.packages.models import Install, Rollout

CANARY = "canary"

_encoder = msgspec.json.Encoder()


def install_key(user_id: str, skill_id: str) -> dict[str, Any]:
    return key(pk=f"inst#{user_id}", sk=f"skill#{skill_id}")


def rollout_key(skill_id: str) -> dict[str, Any]:
    return key(pk=f"skill#{skill_id}", sk="rollout")


# -- installs ---------------------------------------------------------------------------------------

def _install_item(install: Install) -> dict[str, Any]:
    return to_item({"pk": f"inst#{install.user_id}", "sk": f"skill#{install.skill_id}",
                    "revision": install.revision, "record": _encoder.encode(install).decode()})


def _install(raw: dict[str, Any] | None) -> Install | None:
    return None if raw is None else msgspec.json.decode(raw["record"], type=Install)


def get_install(db: Db, user_id: str, skill_id: str) -> Install | None:
    return _install(from_item(db.client.get_item(TableName=db.tables.catalog, Key=install_key(user_id, skill_id),
                                                 ConsistentRead=True).get("Item")))


def list_installs(db: Db, user_id: str, *, limit: int, cursor: str | None) -> tuple[list[Install], str | None]:
    page = query_page(db, table=db.tables.catalog, partition=("pk", f"inst#{user_id}"), limit=limit, cursor=cursor)
    return [i for i in (_install(raw) for raw in page.items) if i is not None], page.next_cursor


def put_install_op(db: Db, install: Install) -> dict[str, Any]:
    """A new install: one per user and skill."""
    return {"Put": {"TableName": db.tables.catalog, "Item": _install_item(install),
                    "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"}}}


def replace_install_op(db: Db, install: Install, *, expected_revision: int) -> dict[str, Any]:
    return {"Put": {"TableName": db.tables.catalog, "Item": _install_item(install),
                    "ConditionExpression": "attribute_exists(#pk) AND #revision = :expected",
                    "ExpressionAttributeNames": {"#pk": "pk", "#revision": "revision"},
                    "ExpressionAttributeValues": {":expected": to_value(expected_revision)}}}


def delete_install_op(db: Db, user_id: str, skill_id: str) -> dict[str, Any]:
    return {"Delete": {"TableName": db.tables.catalog, "Key": install_key(user_id, skill_id),
                       "ConditionExpression": "attribute_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"}}}


def write_install(db: Db, op: dict[str, Any], extra: Sequence[Op] = ()) -> None:
    """One install write with what goes with it (its audit), in one transaction; the lost condition named."""
    try:
        transact(db, [Op("install", op), *extra])
    except TransactionFailed as failed:
        if failed.failed("install") is not None:
            if "Put" in op and "attribute_not_exists" in op["Put"]["ConditionExpression"]:
                raise AlreadyExists("this skill is installed already") from failed
            if "Delete" in op:
                raise NotFound("install not found") from failed
            raise VersionConflict("the install changed meanwhile; read it again") from failed
        raise ConcurrentUpdate() from failed


# -- rollouts ---------------------------------------------------------------------------------------

def _rollout_item(rollout: Rollout) -> dict[str, Any]:
    running = rollout.canary is not None
    return to_item({"pk": f"skill#{rollout.skill_id}", "sk": "rollout", "rolloutRevision": rollout.revision,
                    "listPk": CANARY if running else None, "listSk": rollout.skill_id if running else None,
                    "record": _encoder.encode(rollout).decode()})


def _rollout(raw: dict[str, Any] | None) -> Rollout | None:
    return None if not raw or "record" not in raw else msgspec.json.decode(raw["record"], type=Rollout)


def get_rollout(db: Db, skill_id: str) -> Rollout | None:
    return _rollout(from_item(db.client.get_item(TableName=db.tables.catalog, Key=rollout_key(skill_id),
                                                 ConsistentRead=True).get("Item")))


def get_rollouts(db: Db, skill_ids: Sequence[str]) -> dict[str, Rollout]:
    """The rollouts of these skills in one BatchGetItem (at most 100 ids: a page of installs)."""
    unique = list(dict.fromkeys(skill_ids))
    if not unique:
        return {}
    found = batch_get(db, {db.tables.catalog: [rollout_key(s) for s in unique]})[db.tables.catalog]
    return {r.skill_id: r for r in (_rollout(i) for i in found) if r is not None}


def put_rollout_op(db: Db, rollout: Rollout, *, expected_revision: int | None) -> dict[str, Any]:
    """The rollout as it now is; `expected_revision` None: the first (no rollout item yet)."""
    if expected_revision is None:
        return {"Put": {"TableName": db.tables.catalog, "Item": _rollout_item(rollout),
                        "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"}}}
    return {"Put": {"TableName": db.tables.catalog, "Item": _rollout_item(rollout),
                    "ConditionExpression": "#revision = :expected",
                    "ExpressionAttributeNames": {"#revision": "rolloutRevision"},
                    "ExpressionAttributeValues": {":expected": to_value(expected_revision)}}}


def list_canaries(db: Db, *, limit: int, cursor: str | None) -> tuple[list[Rollout], str | None]:
    """The rollouts with a canary running (one Query a page)."""
    page = query_page(db, table=db.tables.catalog, index="byList", partition=("listPk", CANARY), limit=limit,
                      cursor=cursor)
    return [r for r in (_rollout(i) for i in page.items) if r is not None], page.next_cursor
