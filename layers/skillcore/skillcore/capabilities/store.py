"""User capabilities table: skill_user_capabilities (seed 004, docs/contract.md "User-defined capabilities").

Key design: pk = userId; one partition holds everything of one user, so every write below is one
transaction within one partition and another user's ids simply do not exist here. Items by sk:
- `cap#<userCapabilityId>`          the capability: name, texts, status, `version` (the optimistic lock),
                                    workflow (a map), platform ids, `bindingCount` (the per-capability binding
                                    counter, limit 20) and `bindingNames` (a string set, to batch-get bindings);
                                    it alone carries `capSort` = "<createdAt>#<id>", the sort key of the sparse
                                    local index `byCreated`, so that index lists capabilities and nothing else.
- `cap#<userCapabilityId>#b#<name>` one tool binding; its input schema is kept as the JSON text it was given.
- `name#<name>`                     the name-uniqueness item (holds the capability id): names are unique per user.
- `quota`                           the per-user counter `capabilities` (limit 50).

Why bindings are items of their own and not a list inside the capability: a binding's schema may be 16 KiB,
20 of them 320 KiB, and with a 20-step workflow of up to 500 characters each (3 bytes a CJK character) one
item would sit a few KiB under DynamoDB's 400 KB item limit, with no room for anything added later. Worse,
every binding change and every edit of the workflow would rewrite all of it: a write costs one WCU per KB,
so changing one 1 KB binding of a full capability would cost ~350 WCU instead of ~2 (capability + binding),
and every status change would carry it too. Split, each item stays small and a binding change writes only
its own item and the capability's counter and version.

Access patterns:
- get one with its bindings: one Query, pk = userId, begins_with(sk, "cap#<id>") (ULIDs have one length, so
  no id is a prefix of another); consistent.
- get by name: GetItem `name#<name>`, then the Query above.
- list a user's capabilities: Query the sparse `byCreated` index (capability items only, oldest first, at
  most 50), filter the status in memory and page with the catalog's cursor (db/paging.py: after an id);
  then one BatchGetItem per 100 bindings of the capabilities on the page.
- writes (all `TransactWriteItems`, each operation named, every condition asks for ALL_OLD):
  create = capability + its bindings + name item + quota counter (+ the caller's audit);
  edit/activate/deactivate = the capability conditioned on version and status;
  binding create/update/delete = the capability (version, status, counter) + the binding item;
  delete = the capability (version) + every binding + the name item + the counter, at once.
A lost condition is translated here, from the item as it was, into the domain error of
`skillcore/capabilities/errors.py`; nothing else reads CancellationReasons.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from skillcore.capabilities import errors
from skillcore.capabilities.items import (
    BATCH_KEYS,
    BY_CREATED,
    OWN_OPS,
    QUOTA_ATTR,
    QUOTA_SK,
    binding_from_item,
    binding_sk,
    bump_for_binding_op,
    capability_from_item,
    capability_sk,
    claim_name_op,
    delete_binding_op,
    delete_capability_op,
    give_back_quota_op,
    name_sk,
    put_new_binding_op,
    put_new_capability_op,
    release_name_op,
    replace_binding_op,
    replace_capability_op,
    take_quota_op,
)
from skillcore.capabilities.models import (
    MAX_BINDINGS_PER_CAPABILITY,
    MAX_CAPABILITIES_PER_USER,
    CapabilityStatus,
    ToolBinding,
    UserCapability,
)
from skillcore.db import paging
from skillcore.db.codec import from_item, to_value
from skillcore.db.dynamo import Db, batch_get, key
from skillcore.db.errors import Failure, TransactionFailed
from skillcore.db.transact import Op, transact

# -- reads ------------------------------------------------------------------------------------------

def _query_all(db: Db, params: dict[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    while True:
        response = db.client.query(**params)
        items.extend(from_item(i) or {} for i in response.get("Items", []))
        last = response.get("LastEvaluatedKey")
        if not last:
            return items
        params = {**params, "ExclusiveStartKey": last}


def get(db: Db, user_id: str, user_capability_id: str) -> UserCapability | None:
    """The caller's capability with its bindings (one consistent Query), or None: another user's is absent."""
    items = _query_all(db, {
        "TableName": db.tables.user_capabilities, "ConsistentRead": True,
        "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
        "ExpressionAttributeNames": {"#pk": "pk", "#sk": "sk"},
        "ExpressionAttributeValues": {":pk": to_value(user_id), ":prefix": to_value(capability_sk(user_capability_id))},
    })
    head = next((i for i in items if i["sk"] == capability_sk(user_capability_id)), None)
    if head is None:
        return None
    return capability_from_item(head, [binding_from_item(i) for i in items if i is not head])


def get_by_name(db: Db, user_id: str, name: str) -> UserCapability | None:
    response = db.client.get_item(
        TableName=db.tables.user_capabilities, Key=key(pk=user_id, sk=name_sk(name)), ConsistentRead=True
    )
    item = from_item(response.get("Item"))
    return get(db, user_id, item["userCapabilityId"]) if item else None


def _capability_items(db: Db, user_id: str) -> list[dict[str, Any]]:
    """Every capability item of the user (no bindings), oldest first: at most 50, from the sparse index."""
    return _query_all(db, {
        "TableName": db.tables.user_capabilities, "IndexName": BY_CREATED, "ConsistentRead": True,
        "KeyConditionExpression": "#pk = :pk", "ExpressionAttributeNames": {"#pk": "pk"},
        "ExpressionAttributeValues": {":pk": to_value(user_id)},
    })


def _with_bindings(db: Db, user_id: str, heads: list[dict[str, Any]]) -> list[UserCapability]:
    keys = [key(pk=user_id, sk=binding_sk(h["userCapabilityId"], n)) for h in heads for n in h.get("bindingNames", [])]
    found: dict[str, list[ToolBinding]] = {h["userCapabilityId"]: [] for h in heads}
    table = db.tables.user_capabilities
    for start in range(0, len(keys), BATCH_KEYS):
        for item in batch_get(db, {table: keys[start:start + BATCH_KEYS]})[table]:
            found[item["userCapabilityId"]].append(binding_from_item(item))
    return [capability_from_item(h, found[h["userCapabilityId"]]) for h in heads]


def list_for_user(
    db: Db, user_id: str, *, status: CapabilityStatus | None = None, limit: int, cursor: str | None
) -> tuple[list[UserCapability], str | None]:
    """One page of the user's capabilities (oldest first), optionally of one status, with their bindings."""
    heads = [h for h in _capability_items(db, user_id) if status is None or h["status"] == status.value]
    chunk, next_cursor = paging.page(heads, lambda h: str(h["userCapabilityId"]), limit=limit, cursor=cursor)
    return _with_bindings(db, user_id, chunk), next_cursor


def list_active(db: Db, user_id: str) -> list[UserCapability]:
    """All the user's active capabilities with their bindings (for the catalog and the protocols)."""
    heads = [h for h in _capability_items(db, user_id) if h["status"] == CapabilityStatus.ACTIVE.value]
    return _with_bindings(db, user_id, heads)


def list_active_heads(db: Db, user_id: str) -> list[UserCapability]:
    """The user's active capabilities WITHOUT their bindings (`tool_bindings` is empty): what the catalog
    shows, in one Query of the sparse index and no BatchGetItem."""
    return [capability_from_item(h, []) for h in _capability_items(db, user_id)
            if h["status"] == CapabilityStatus.ACTIVE.value]


def quota_used(db: Db, user_id: str) -> int:
    """The per-user counter as stored (the tests compare it with the items)."""
    response = db.client.get_item(
        TableName=db.tables.user_capabilities, Key=key(pk=user_id, sk=QUOTA_SK), ConsistentRead=True
    )
    item = from_item(response.get("Item")) or {}
    return int(item.get(QUOTA_ATTR, 0))


# -- writes -----------------------------------------------------------------------------------------

def _capability_failed(failure: Failure, *, expected_version: int, expected_status: CapabilityStatus) -> Exception:
    """The domain error of a lost capability condition, read from the item as it was."""
    old = failure.old
    if not old:
        return errors.capability_not_found()
    if int(old["version"]) != expected_version:
        return errors.version_conflict(int(old["version"]))
    if old["status"] != expected_status.value:
        if expected_status is CapabilityStatus.DRAFT:
            return errors.capability_active()
        return errors.capability_not_active()
    if int(old.get("bindingCount", 0)) >= MAX_BINDINGS_PER_CAPABILITY:
        return errors.quota_exceeded(errors.BINDINGS_QUOTA, MAX_BINDINGS_PER_CAPABILITY)
    return errors.version_conflict(int(old["version"]))


def _commit(db: Db, ops: list[Op], backoff: Any = None) -> None:
    if backoff is None:
        transact(db, ops)
    else:
        transact(db, ops, backoff=backoff)


def create(db: Db, capability: UserCapability, *, extra: Sequence[Op] = (), backoff: Any = None) -> None:
    """The capability, its bindings, its name and one unit of the user's quota, in one transaction (with
    `extra`, the caller's audit). Raises capability_name_taken or quota_exceeded (capabilities)."""
    user_id, cap_id = capability.user_id, capability.user_capability_id
    if len(capability.tool_bindings) > MAX_BINDINGS_PER_CAPABILITY:
        raise errors.quota_exceeded(errors.BINDINGS_QUOTA, MAX_BINDINGS_PER_CAPABILITY)
    ops = [
        Op("capability", put_new_capability_op(db, capability)),
        *(Op("binding", put_new_binding_op(db, user_id, cap_id, b)) for b in capability.tool_bindings),
        Op("name", claim_name_op(db, user_id, capability.name, cap_id)),
        Op("quota", take_quota_op(db, user_id)),
        *extra,
    ]
    try:
        _commit(db, ops, backoff)
    except TransactionFailed as failed:
        if any(failed.failed(op.name) for op in extra if op.name not in OWN_OPS):
            raise  # the caller's own precondition (a draft's revision) lost: the caller answers, and first
        if failed.failed("name"):
            raise errors.name_taken() from failed
        if failed.failed("quota"):
            raise errors.quota_exceeded(errors.CAPABILITIES_QUOTA, MAX_CAPABILITIES_PER_USER) from failed
        raise


def replace(
    db: Db, capability: UserCapability, *, expected_version: int, expected_status: CapabilityStatus,
    extra: Sequence[Op] = (), backoff: Any = None,
) -> None:
    """Edit, activate or deactivate: the capability item at its new version, if still at `expected_version`
    and `expected_status` (else not found, version_conflict with the current version, capability_active or
    capability_not_active)."""
    ops = [Op("capability", replace_capability_op(db, capability, expected_version=expected_version,
                                                  expected_status=expected_status)), *extra]
    try:
        _commit(db, ops, backoff)
    except TransactionFailed as failed:
        if failure := failed.failed("capability"):
            raise _capability_failed(failure, expected_version=expected_version,
                                     expected_status=expected_status) from failed
        raise


def _binding_change(
    db: Db, capability_op: Any, binding_op: Any, *, expected_version: int, extra: Sequence[Op], backoff: Any,
    binding_failed: Callable[[], Exception],
) -> None:
    """One binding write beside the draft's version bump, in one transaction: a failed bump is the
    capability's error (not found, version_conflict, capability_active), a failed binding condition
    is `binding_failed()`."""
    try:
        _commit(db, [Op("capability", capability_op), Op("binding", binding_op), *extra], backoff)
    except TransactionFailed as failed:
        if failure := failed.failed("capability"):
            raise _capability_failed(failure, expected_version=expected_version,
                                     expected_status=CapabilityStatus.DRAFT) from failed
        if failed.failed("binding"):
            raise binding_failed() from failed
        raise


def add_binding(
    db: Db, user_id: str, user_capability_id: str, binding: ToolBinding, *, expected_version: int, now: datetime,
    extra: Sequence[Op] = (), backoff: Any = None,
) -> None:
    """A new binding on a draft at `expected_version`, taking one of its 20 (quota_exceeded bindings)."""
    _binding_change(
        db,
        bump_for_binding_op(db, user_id, user_capability_id, expected_version=expected_version, now=now,
                            added=binding.name),
        put_new_binding_op(db, user_id, user_capability_id, binding),
        expected_version=expected_version, extra=extra, backoff=backoff, binding_failed=errors.binding_name_taken,
    )


def replace_binding(
    db: Db, user_id: str, user_capability_id: str, binding: ToolBinding, *, expected_version: int, now: datetime,
    extra: Sequence[Op] = (), backoff: Any = None,
) -> None:
    _binding_change(
        db,
        bump_for_binding_op(db, user_id, user_capability_id, expected_version=expected_version, now=now),
        replace_binding_op(db, user_id, user_capability_id, binding),
        expected_version=expected_version, extra=extra, backoff=backoff, binding_failed=errors.binding_not_found,
    )


def remove_binding(
    db: Db, user_id: str, user_capability_id: str, name: str, *, expected_version: int, now: datetime,
    extra: Sequence[Op] = (), backoff: Any = None,
) -> None:
    _binding_change(
        db,
        bump_for_binding_op(db, user_id, user_capability_id, expected_version=expected_version, now=now,
                            removed=name),
        delete_binding_op(db, user_id, user_capability_id, name),
        expected_version=expected_version, extra=extra, backoff=backoff, binding_failed=errors.binding_not_found,
    )


def delete(db: Db, capability: UserCapability, *, extra: Sequence[Op] = (), backoff: Any = None) -> None:
    """The capability as read (its version), every binding of it, its name and its unit of quota, at once.
    A capability that changed since it was read is a version_conflict (the caller reads again)."""
    user_id, cap_id = capability.user_id, capability.user_capability_id
    ops = [
        Op("capability", delete_capability_op(db, user_id, cap_id, expected_version=capability.version)),
        *(Op("binding", delete_binding_op(db, user_id, cap_id, b.name)) for b in capability.tool_bindings),
        Op("name", release_name_op(db, user_id, capability.name, cap_id)),
        Op("quota", give_back_quota_op(db, user_id)),
        *extra,
    ]
    try:
        _commit(db, ops, backoff)
    except TransactionFailed as failed:
        if failure := failed.failed("capability"):
            if not failure.old:
                raise errors.capability_not_found() from failed
            raise errors.version_conflict(int(failure.old["version"])) from failed
        raise
