"""Capability drafts table: skill_capability_drafts (seed 004 creation flow, docs/contract.md "Creating a capability by
conversation").

Key design: pk = userId, sk = draftId (a ULID). One item per draft; another user's draft is simply not under
their key. Attributes: `revision` (the optimistic lock: every generate and the confirm write revision + 1
conditioned on the revision read), `status` (`open` | `confirmed`; `expired` is never stored, it is an open
draft read at or after `expiresAt`), the user's `description`, their `answers` (a list of maps), the bindings
they gave (`bindings`, JSON text: input schemas are kept exactly as given), the `proposal` (JSON text of the
create body without its bindings, absent when there is none), the `gaps` (a list of maps), `createdAt`,
`updatedAt`, `expiresAt` (createdAt + 24 h) and `ttl`, the same instant in epoch seconds: the table's TTL
attribute. DynamoDB deletes expired items lazily (typically within days), so every read and every write
decides expiry from the item's own time, never from its absence: writes are conditioned on `ttl > now`.

Access patterns:
- get one: GetItem (pk, sk), consistent.
- list the user's drafts, newest first (ULIDs sort by creation), a page at a time: a Query of their partition;
  `status=open` filters on open and unexpired, `confirmed` on confirmed, `expired` on open past its time.
- count the open ones (at most SKILLS_MAX_OPEN_DRAFTS, checked before a new draft is generated): a Query of
  the user's partition with `Select: COUNT`, filtered on open and unexpired.
- create: PutItem conditioned on the key being new.
- generate: Put of the whole item conditioned on `revision = :read AND status = open AND ttl > :now`.
- confirm: an Update (status confirmed, revision + 1, the new userCapabilityId) with the same condition,
  given to the caller as an operation of the capability create's own transaction (capabilities/drafts.py),
  so the capability exists if and only if its draft says confirmed.
A lost condition is translated here from the item as it was (ALL_OLD) into `draft_revision_conflict`.

Size: one draft holds at most 20 bindings (each schema ≤ 16 KiB) and its texts; an item that would pass
MAX_ITEM_BYTES (under DynamoDB's 400 KB) is refused before the write as 422 quota_exceeded (`draft_size`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from skillcore.capabilities import errors
from skillcore.capabilities.models import Draft, DraftAnswer, DraftStatus, Gap, GapKind
from skillcore.clock import parse_time, to_sort_time
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, key, query_page
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact

MAX_ITEM_BYTES = 350 * 1024
DRAFT_SIZE_QUOTA = "draft_size"

EXISTS = "attribute_exists(#pk)"
ABSENT = "attribute_not_exists(#pk)"
AT_REVISION = "#revision = :revision"
OPEN = "#status = :open"
NOT_EXPIRED = "#ttl > :now"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def epoch(value: datetime) -> int:
    return int(value.timestamp())


def to_draft_item(draft: Draft) -> dict[str, Any]:
    item = to_item({
        "pk": draft.user_id,
        "sk": draft.draft_id,
        "revision": draft.revision,
        "status": draft.status.value,
        "description": draft.description,
        "answers": [
            {k: v for k, v in {"path": a.path, "kind": a.kind.value, "question": a.question, "text": a.text,
                               "bindingName": a.binding_name, "dropped": a.dropped or None}.items() if v is not None}
            for a in draft.answers
        ],
        "bindings": _json(list(draft.bindings)),
        "proposal": _json(draft.proposal) if draft.proposal is not None else None,
        "gaps": [{k: v for k, v in {"gapId": g.gap_id, "path": g.path, "kind": g.kind.value, "question": g.question,
                                    "instruction": g.instruction}.items() if v is not None}
                 for g in draft.gaps],
        "createdAt": to_sort_time(draft.created_at),
        "updatedAt": to_sort_time(draft.updated_at),
        "expiresAt": to_sort_time(draft.expires_at),
        "ttl": epoch(draft.expires_at),
        "userCapabilityId": draft.user_capability_id,
    })
    size = len(_json(item).encode("utf-8"))
    if size > MAX_ITEM_BYTES:
        raise errors.quota_exceeded(DRAFT_SIZE_QUOTA, MAX_ITEM_BYTES)
    return item


def draft_from_item(item: dict[str, Any]) -> Draft:
    return Draft(
        user_id=item["pk"], draft_id=item["sk"], revision=int(item["revision"]), status=DraftStatus(item["status"]),
        description=item["description"],
        answers=tuple(DraftAnswer(path=a["path"], kind=GapKind(a["kind"]), question=a["question"], text=a.get("text"),
                                  binding_name=a.get("bindingName"), dropped=bool(a.get("dropped", False)))
                      for a in item.get("answers", [])),
        bindings=tuple(json.loads(item["bindings"])),
        proposal=json.loads(item["proposal"]) if item.get("proposal") else None,
        gaps=tuple(Gap(gap_id=g["gapId"], path=g["path"], kind=GapKind(g["kind"]), question=g["question"],
                       instruction=g.get("instruction")) for g in item.get("gaps", [])),
        created_at=parse_time(item["createdAt"]), updated_at=parse_time(item["updatedAt"]),
        expires_at=parse_time(item["expiresAt"]), user_capability_id=item.get("userCapabilityId"),
    )


def get(db: Db, user_id: str, draft_id: str) -> Draft | None:
    response = db.client.get_item(TableName=db.tables.capability_drafts, Key=key(pk=user_id, sk=draft_id),
                                  ConsistentRead=True)
    item = from_item(response.get("Item"))
    return draft_from_item(item) if item else None


def count_open(db: Db, user_id: str, now: datetime) -> int:
    """The user's open drafts at `now` (open and unexpired): a Query of their partition, counted by DynamoDB."""
    params: dict[str, Any] = {
        "TableName": db.tables.capability_drafts, "KeyConditionExpression": "#pk = :pk",
        "FilterExpression": f"{OPEN} AND {NOT_EXPIRED}", "Select": "COUNT", "ConsistentRead": True,
        "ExpressionAttributeNames": {"#pk": "pk", "#status": "status", "#ttl": "ttl"},
        "ExpressionAttributeValues": {":pk": to_value(user_id), ":open": to_value(DraftStatus.OPEN.value),
                                      ":now": to_value(epoch(now))},
    }
    count = 0
    while True:
        response = db.client.query(**params)
        count += int(response.get("Count", 0))
        if "LastEvaluatedKey" not in response:
            return count
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def list_drafts(db: Db, user_id: str, *, status: DraftStatus | None, now: datetime, limit: int,
                cursor: str | None) -> tuple[list[Draft], str | None]:
    """One page of the user's drafts, newest first, optionally of one status as of `now` (a filtered page may
    hold fewer than `limit` with a cursor to the rest)."""
    filters: dict[DraftStatus, tuple[str, dict[str, str], dict[str, Any]]] = {
        DraftStatus.OPEN: (f"{OPEN} AND {NOT_EXPIRED}", {"#status": "status", "#ttl": "ttl"},
                           {":open": DraftStatus.OPEN.value, ":now": epoch(now)}),
        DraftStatus.CONFIRMED: ("#status = :confirmed", {"#status": "status"},
                                {":confirmed": DraftStatus.CONFIRMED.value}),
        DraftStatus.EXPIRED: (f"{OPEN} AND #ttl <= :now", {"#status": "status", "#ttl": "ttl"},
                              {":open": DraftStatus.OPEN.value, ":now": epoch(now)}),
    }
    expression, names, values = filters[status] if status is not None else (None, None, None)
    page = query_page(db, table=db.tables.capability_drafts, partition=("pk", user_id), limit=limit, cursor=cursor,
                      newest_first=True, filter_expression=expression, names=names, values=values)
    return [draft_from_item(item) for item in page.items], page.next_cursor


# -- operations -------------------------------------------------------------------------------------

def put_new_draft_op(db: Db, draft: Draft) -> dict[str, Any]:
    return {"Put": {
        "TableName": db.tables.capability_drafts, "Item": to_draft_item(draft),
        "ConditionExpression": ABSENT, "ExpressionAttributeNames": {"#pk": "pk"},
    }}


def _open_at(revision: int, now: datetime) -> tuple[str, dict[str, str], dict[str, Any]]:
    return (
        f"{EXISTS} AND {AT_REVISION} AND {OPEN} AND {NOT_EXPIRED}",
        {"#pk": "pk", "#revision": "revision", "#status": "status", "#ttl": "ttl"},
        {":revision": to_value(revision), ":open": to_value(DraftStatus.OPEN.value), ":now": to_value(epoch(now))},
    )


def replace_draft_op(db: Db, draft: Draft, *, expected_revision: int, now: datetime) -> dict[str, Any]:
    """The whole draft at its new revision, if still open, unexpired and at `expected_revision`."""
    condition, names, values = _open_at(expected_revision, now)
    return {"Put": {
        "TableName": db.tables.capability_drafts, "Item": to_draft_item(draft),
        "ConditionExpression": condition, "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
    }}


def confirm_draft_op(
    db: Db, user_id: str, draft_id: str, *, expected_revision: int, user_capability_id: str, now: datetime
) -> dict[str, Any]:
    """Open → confirmed at revision + 1, naming the capability it became."""
    condition, names, values = _open_at(expected_revision, now)
    names |= {"#updated": "updatedAt", "#capability": "userCapabilityId"}
    values |= {":next": to_value(expected_revision + 1), ":confirmed": to_value(DraftStatus.CONFIRMED.value),
               ":updated": to_value(to_sort_time(now)), ":capability": to_value(user_capability_id)}
    return {"Update": {
        "TableName": db.tables.capability_drafts, "Key": key(pk=user_id, sk=draft_id),
        "UpdateExpression": "SET #revision = :next, #status = :confirmed, #updated = :updated, "
                            "#capability = :capability",
        "ConditionExpression": condition, "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
    }}


# -- writes -----------------------------------------------------------------------------------------

def revision_failed(old: dict[str, Any] | None, now: datetime) -> Exception:
    """The domain error of a lost draft condition, from the item as it was (deserialised)."""
    if not old:
        return errors.draft_not_found()
    draft = draft_from_item(old)
    return errors.draft_revision_conflict(draft.revision, draft.status_at(now).value, draft.user_capability_id)


def create(db: Db, draft: Draft, *, extra: Sequence[Op] = ()) -> None:
    """A new draft (with `extra`, the caller's audit) in one transaction."""
    transact(db, [Op("draft", put_new_draft_op(db, draft)), *extra])


def replace(db: Db, draft: Draft, *, expected_revision: int, now: datetime, extra: Sequence[Op] = ()) -> None:
    """A generation: the draft at `expected_revision + 1`, if nobody else moved it on (else
    draft_revision_conflict with the current revision and status, or not found)."""
    ops = [Op("draft", replace_draft_op(db, draft, expected_revision=expected_revision, now=now)), *extra]
    try:
        transact(db, ops)
    except TransactionFailed as failed:
        if failure := failed.failed("draft"):
            raise revision_failed(failure.old, now) from failed
        raise
