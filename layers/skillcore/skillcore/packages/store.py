"""The catalog table (`SKILLS_TABLE_CATALOG`): publishers, releases, and the skills of the catalog.

Key design (pk, sk), with one sparse global index `byList` (listPk, listSk) for the three lists:

| item | pk | sk | byList |
|---|---|---|---|
| publisher (its keys inside, at most MAX_KEYS) | `pub#<publisherId>` | `pub` | `publishers`, `<publisherId>` |
| release | `rel#<releaseId>` | `rel` | `review`, `<submittedAt>#<releaseId>` while `checked` (removed when decided) |
| a skill's version (the claim of one version) | `skill#<skillId>` | `v#<semver sort key>` | none |
| a skill (its owner; its latest published version) | `skill#<skillId>` | `skill` | `catalog`, `<skillId>` once published |

Access patterns: a publisher with its keys (GetItem); the publishers (Query byList `publishers`); a release
(GetItem); the review queue, oldest first (Query byList `review`); a skill's versions in semver order (Query
`skill#<id>`, `begins_with(sk, "v#")`); the catalog in skill id order (Query byList `catalog`: one request a
page). No Scan. A record is kept whole as msgspec JSON in `record`, beside the attributes its conditions and
the index read (`state`, `version`, `publisherId`, `latestSort`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from skillcore.clock import to_sort_time
from skillcore.db.codec import from_item, to_item, to_value
from skillcore.db.dynamo import Db, key, query_page
from skillcore.db.errors import TransactionFailed
from skillcore.db.transact import Op, transact
from skillcore.errors import AlreadyExists, ConcurrentUpdate, ReleaseNotPending, SkillIdTaken, VersionConflict
from skillcore.packages import semver
from skillcore.packages.models import CatalogSkill, Publisher, Release, ReleaseState

BY_LIST = "byList"
PUBLISHERS = "publishers"
REVIEW = "review"
CATALOG = "catalog"
MAX_KEYS = 10

_encoder = msgspec.json.Encoder()


def publisher_key(publisher_id: str) -> dict[str, Any]:
    return key(pk=f"pub#{publisher_id}", sk="pub")


def release_key(release_id: str) -> dict[str, Any]:
    return key(pk=f"rel#{release_id}", sk="rel")


def skill_key(skill_id: str) -> dict[str, Any]:
    return key(pk=f"skill#{skill_id}", sk="skill")


def version_key(skill_id: str, version: str) -> dict[str, Any]:
    return key(pk=f"skill#{skill_id}", sk=f"v#{semver.sort_key(version)}")


def _record(raw: dict[str, Any] | None, kind: type[Any]) -> Any:
    return None if raw is None else msgspec.json.decode(raw["record"], type=kind)


# -- publishers -------------------------------------------------------------------------------------

def _publisher_item(publisher: Publisher, version: int) -> dict[str, Any]:
    return to_item({"pk": f"pub#{publisher.publisher_id}", "sk": "pub",
                    "listPk": PUBLISHERS, "listSk": publisher.publisher_id, "version": version,
                    "userId": publisher.user_id, "record": _encoder.encode(publisher).decode()})


def get_publisher(db: Db, publisher_id: str) -> tuple[Publisher, int] | None:
    """The publisher and its item's version (the optimistic lock of key changes)."""
    raw = from_item(db.client.get_item(TableName=db.tables.catalog, Key=publisher_key(publisher_id),
                                       ConsistentRead=True).get("Item"))
    return None if raw is None else (_record(raw, Publisher), int(raw["version"]))


def create_publisher(db: Db, publisher: Publisher, *, extra: Sequence[Op] = ()) -> None:
    try:
        transact(db, [Op("publisher", {"Put": {
            "TableName": db.tables.catalog, "Item": _publisher_item(publisher, 1),
            "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"}}}),
            *extra])
    except TransactionFailed as failed:
        raise AlreadyExists("a publisher with this id is registered") from failed


def replace_publisher(db: Db, publisher: Publisher, *, expected_version: int, extra: Sequence[Op] = ()) -> None:
    try:
        transact(db, [Op("publisher", {"Put": {
            "TableName": db.tables.catalog, "Item": _publisher_item(publisher, expected_version + 1),
            "ConditionExpression": "attribute_exists(#pk) AND #version = :expected",
            "ExpressionAttributeNames": {"#pk": "pk", "#version": "version"},
            "ExpressionAttributeValues": {":expected": to_value(expected_version)}}}), *extra])
    except TransactionFailed as failed:
        raise VersionConflict("the publisher changed meanwhile; read it again") from failed


def list_publishers(db: Db, *, limit: int, cursor: str | None) -> tuple[list[Publisher], str | None]:
    page = query_page(db, table=db.tables.catalog, index=BY_LIST, partition=("listPk", PUBLISHERS), limit=limit,
                      cursor=cursor)
    return [_record(i, Publisher) for i in page.items], page.next_cursor


# -- releases ---------------------------------------------------------------------------------------

def _release_item(release: Release) -> dict[str, Any]:
    queued = release.state is ReleaseState.CHECKED
    return to_item({"pk": f"rel#{release.release_id}", "sk": "rel", "state": release.state.value,
                    "skillId": release.skill_id, "publisherId": release.publisher_id,
                    "listPk": REVIEW if queued else None,
                    "listSk": f"{to_sort_time(release.submitted_at)}#{release.release_id}" if queued else None,
                    "record": _encoder.encode(release).decode()})


def _version_item(release: Release) -> dict[str, Any]:
    return to_item({"pk": f"skill#{release.skill_id}", "sk": f"v#{semver.sort_key(release.version)}",
                    "releaseId": release.release_id, "version": release.version, "state": release.state.value})


def submit(db: Db, release: Release, *, extra: Sequence[Op] = ()) -> None:
    """The release, its version's claim and the skill's owner, in one transaction: a version is submitted once,
    and a skill id is one publisher's."""
    ops = [
        Op("release", {"Put": {"TableName": db.tables.catalog, "Item": _release_item(release),
                               "ConditionExpression": "attribute_not_exists(#pk)",
                               "ExpressionAttributeNames": {"#pk": "pk"}}}),
        Op("version", {"Put": {"TableName": db.tables.catalog, "Item": _version_item(release),
                               "ConditionExpression": "attribute_not_exists(#pk)",
                               "ExpressionAttributeNames": {"#pk": "pk"}}}),
        Op("skill", {"Update": {
            "TableName": db.tables.catalog, "Key": skill_key(release.skill_id),
            "UpdateExpression": "SET #publisher = :publisher, #trust = if_not_exists(#trust, :trust)",
            "ConditionExpression": "attribute_not_exists(#pk) OR #publisher = :publisher",
            "ExpressionAttributeNames": {"#pk": "pk", "#publisher": "publisherId", "#trust": "trustLevel"},
            "ExpressionAttributeValues": {":publisher": to_value(release.publisher_id),
                                          ":trust": to_value(release.trust_level.value)}}}),
        *extra,
    ]
    try:
        transact(db, ops)
    except TransactionFailed as failed:
        if failed.failed("skill") is not None:
            raise SkillIdTaken() from failed
        if failed.failed("version") is not None:
            raise AlreadyExists("this version of the skill was submitted already") from failed
        raise ConcurrentUpdate() from failed


def get_release(db: Db, release_id: str) -> Release | None:
    raw = from_item(db.client.get_item(TableName=db.tables.catalog, Key=release_key(release_id),
                                       ConsistentRead=True).get("Item"))
    return _record(raw, Release)


def list_review(db: Db, *, limit: int, cursor: str | None) -> tuple[list[Release], str | None]:
    """The releases waiting for an operator, oldest first."""
    page = query_page(db, table=db.tables.catalog, index=BY_LIST, partition=("listPk", REVIEW), limit=limit,
                      cursor=cursor)
    return [_record(i, Release) for i in page.items], page.next_cursor


def list_versions(db: Db, skill_id: str, *, limit: int, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """A skill's versions in semver order: `{"releaseId", "version", "state"}` each."""
    page = query_page(db, table=db.tables.catalog, partition=("pk", f"skill#{skill_id}"), limit=limit,
                      cursor=cursor, sort_condition="begins_with(#sk, :v)", names={"#sk": "sk"}, values={":v": "v#"})
    return [{"releaseId": i["releaseId"], "version": i["version"], "state": i["state"]} for i in page.items], \
        page.next_cursor


def _skill_item(skill: CatalogSkill) -> dict[str, Any]:
    return to_item({"pk": f"skill#{skill.skill_id}", "sk": "skill", "publisherId": skill.publisher_id,
                    "trustLevel": skill.trust_level.value, "listPk": CATALOG, "listSk": skill.skill_id,
                    "latestSort": semver.sort_key(skill.latest_version) if skill.latest_version else None,
                    "record": _encoder.encode(skill).decode()})


def get_skill(db: Db, skill_id: str) -> tuple[CatalogSkill | None, str | None]:
    """The catalog's skill (None until a version is published) and its `latestSort` (None: none published)."""
    raw = from_item(db.client.get_item(TableName=db.tables.catalog, Key=skill_key(skill_id),
                                       ConsistentRead=True).get("Item"))
    if raw is None or "record" not in raw:
        return None, None
    return _record(raw, CatalogSkill), raw.get("latestSort")


def decide(db: Db, before: Release, after: Release, *, skill: CatalogSkill | None, latest_sort: str | None,
           extra: Sequence[Op] = ()) -> None:
    """A checked release decided: its new state, its version's, and (published as the newest) the catalog's
    skill, in one transaction; `latest_sort` is what the skill's newest published version was when read."""
    ops = [
        Op("release", {"Put": {
            "TableName": db.tables.catalog, "Item": _release_item(after),
            "ConditionExpression": "attribute_exists(#pk) AND #state = :state",
            "ExpressionAttributeNames": {"#pk": "pk", "#state": "state"},
            "ExpressionAttributeValues": {":state": to_value(before.state.value)}}}),
        Op("version", {"Update": {
            "TableName": db.tables.catalog, "Key": version_key(after.skill_id, after.version),
            "UpdateExpression": "SET #state = :state", "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": "pk", "#state": "state"},
            "ExpressionAttributeValues": {":state": to_value(after.state.value)}}}),
    ]
    if skill is not None:
        condition = "attribute_not_exists(#latest)" if latest_sort is None else "#latest = :latest"
        put: dict[str, Any] = {"TableName": db.tables.catalog, "Item": _skill_item(skill),
                               "ConditionExpression": condition, "ExpressionAttributeNames": {"#latest": "latestSort"}}
        if latest_sort is not None:
            put["ExpressionAttributeValues"] = {":latest": to_value(latest_sort)}
        ops.append(Op("skill", {"Put": put}))
    ops.extend(extra)
    try:
        transact(db, ops)
    except TransactionFailed as failed:
        if failed.failed("release") is not None:
            raise ReleaseNotPending() from failed
        raise ConcurrentUpdate() from failed


def list_catalog(db: Db, *, limit: int, cursor: str | None) -> tuple[list[CatalogSkill], str | None]:
    """The published skills in skill id order: one Query a page."""
    page = query_page(db, table=db.tables.catalog, index=BY_LIST, partition=("listPk", CATALOG), limit=limit,
                      cursor=cursor)
    return [_record(i, CatalogSkill) for i in page.items], page.next_cursor
