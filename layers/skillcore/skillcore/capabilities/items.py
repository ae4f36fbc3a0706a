"""The user-capability table's keys and items (the key design is at the top of capabilities/store.py): a
capability's record to its items and back. A workflow is a map, a binding's input schema the JSON text it was
given. The conditional operations on them (each condition named) are here too; capabilities/store.py
commits them and translates what failed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from skillcore.capabilities.models import (
    MAX_BINDINGS_PER_CAPABILITY,
    MAX_CAPABILITIES_PER_USER,
    CapabilityStatus,
    LocalToolStep,
    PlatformStep,
    Step,
    StepKind,
    ToolBinding,
    UserCapability,
    Workflow,
)
from skillcore.clock import parse_time, to_sort_time
from skillcore.db.codec import to_item, to_value
from skillcore.db.dynamo import Db, key

BY_CREATED = "byCreated"
CAP = "cap#"
BINDING = "#b#"
NAME = "name#"
QUOTA_SK = "quota"
QUOTA_ATTR = "capabilities"
BATCH_KEYS = 100  # BatchGetItem's limit
OWN_OPS = frozenset({"capability", "binding", "name", "quota", "audit"})


def capability_sk(user_capability_id: str) -> str:
    return f"{CAP}{user_capability_id}"


def binding_sk(user_capability_id: str, name: str) -> str:
    return f"{CAP}{user_capability_id}{BINDING}{name}"


def name_sk(name: str) -> str:
    return f"{NAME}{name}"


# -- items ------------------------------------------------------------------------------------------

def _step_item(step: Step) -> dict[str, Any]:
    if isinstance(step, PlatformStep):
        return {"kind": step.kind.value, "capabilityId": step.capability_id, "instruction": step.instruction}
    return {"kind": step.kind.value, "toolName": step.tool_name, "hostProfile": step.host_profile,
            "instruction": step.instruction}


def _step(raw: dict[str, Any]) -> Step:
    if raw["kind"] == StepKind.PLATFORM_CAPABILITY.value:
        return PlatformStep(capability_id=raw["capabilityId"], instruction=raw["instruction"])
    if raw["kind"] == StepKind.LOCAL_TOOL.value:
        return LocalToolStep(tool_name=raw["toolName"], host_profile=raw["hostProfile"], instruction=raw["instruction"])
    raise ValueError("unknown step kind")


def to_capability_item(capability: UserCapability) -> dict[str, Any]:
    workflow = capability.workflow
    return to_item({
        "pk": capability.user_id,
        "sk": capability_sk(capability.user_capability_id),
        "userCapabilityId": capability.user_capability_id,
        "name": capability.name,
        "displayName": capability.display_name,
        "whenToUse": list(capability.when_to_use),
        "status": capability.status.value,
        "version": capability.version,
        "workflow": {
            "objective": workflow.objective,
            "steps": [_step_item(s) for s in workflow.steps],
            "completionCriteria": workflow.completion_criteria,
        },
        "platformCapabilityIds": list(capability.platform_capability_ids),
        "bindingCount": len(capability.tool_bindings),
        # A string set cannot be empty: with no binding the attribute is absent (to_item drops None).
        "bindingNames": {b.name for b in capability.tool_bindings} or None,
        "createdAt": to_sort_time(capability.created_at),
        "updatedAt": to_sort_time(capability.updated_at),
        "activatedAt": to_sort_time(capability.activated_at) if capability.activated_at else None,
        "capSort": f"{to_sort_time(capability.created_at)}#{capability.user_capability_id}",
    })


def to_binding_item(user_id: str, user_capability_id: str, binding: ToolBinding) -> dict[str, Any]:
    return to_item({
        "pk": user_id,
        "sk": binding_sk(user_capability_id, binding.name),
        "userCapabilityId": user_capability_id,
        "name": binding.name,
        "hostProfile": binding.host_profile,
        "mcpServerId": binding.mcp_server_id,
        "mcpToolName": binding.mcp_tool_name,
        # JSON text, not a DynamoDB map: kept exactly as checked (key order, numbers, empty property names).
        "inputSchema": json.dumps(binding.input_schema, ensure_ascii=False, separators=(",", ":")),
        "requiresUserConfirmation": binding.requires_user_confirmation,
        "createdAt": to_sort_time(binding.created_at),
        "updatedAt": to_sort_time(binding.updated_at),
    })


def binding_from_item(item: dict[str, Any]) -> ToolBinding:
    return ToolBinding(
        name=item["name"], host_profile=item["hostProfile"], mcp_server_id=item["mcpServerId"],
        mcp_tool_name=item["mcpToolName"], input_schema=json.loads(item["inputSchema"]),
        requires_user_confirmation=bool(item["requiresUserConfirmation"]),
        created_at=parse_time(item["createdAt"]), updated_at=parse_time(item["updatedAt"]),
    )


def capability_from_item(item: dict[str, Any], bindings: Sequence[ToolBinding]) -> UserCapability:
    raw = item["workflow"]
    return UserCapability(
        user_id=item["pk"], user_capability_id=item["userCapabilityId"], name=item["name"],
        display_name=item["displayName"], when_to_use=tuple(item["whenToUse"]),
        status=CapabilityStatus(item["status"]), version=int(item["version"]),
        workflow=Workflow(objective=raw["objective"], steps=tuple(_step(s) for s in raw["steps"]),
                          completion_criteria=raw["completionCriteria"]),
        platform_capability_ids=tuple(item.get("platformCapabilityIds", [])),
        tool_bindings=tuple(sorted(bindings, key=lambda b: b.name)),
        created_at=parse_time(item["createdAt"]), updated_at=parse_time(item["updatedAt"]),
        activated_at=parse_time(item["activatedAt"]) if item.get("activatedAt") else None,
    )


# -- operations -------------------------------------------------------------------------------------
# Each condition is spelled from named parts, so a reader sees what each write demands of the item.

EXISTS = "attribute_exists(#pk)"
ABSENT = "attribute_not_exists(#pk)"
AT_VERSION = "#version = :expected"
IN_STATUS = "#status = :status"
BINDINGS_LEFT = "#count < :bindingLimit"
QUOTA_LEFT = "(attribute_not_exists(#used) OR #used < :limit)"
QUOTA_HELD = "#used > :zero"
OWNS_NAME = "#id = :id"


def put_new_capability_op(db: Db, capability: UserCapability) -> dict[str, Any]:
    return {"Put": {
        "TableName": db.tables.user_capabilities, "Item": to_capability_item(capability),
        "ConditionExpression": ABSENT, "ExpressionAttributeNames": {"#pk": "pk"},
    }}


def put_new_binding_op(db: Db, user_id: str, user_capability_id: str, binding: ToolBinding) -> dict[str, Any]:
    return {"Put": {
        "TableName": db.tables.user_capabilities, "Item": to_binding_item(user_id, user_capability_id, binding),
        "ConditionExpression": ABSENT, "ExpressionAttributeNames": {"#pk": "pk"},
    }}


def replace_binding_op(db: Db, user_id: str, user_capability_id: str, binding: ToolBinding) -> dict[str, Any]:
    return {"Put": {
        "TableName": db.tables.user_capabilities, "Item": to_binding_item(user_id, user_capability_id, binding),
        "ConditionExpression": EXISTS, "ExpressionAttributeNames": {"#pk": "pk"},
    }}


def delete_binding_op(db: Db, user_id: str, user_capability_id: str, name: str) -> dict[str, Any]:
    return {"Delete": {
        "TableName": db.tables.user_capabilities, "Key": key(pk=user_id, sk=binding_sk(user_capability_id, name)),
        "ConditionExpression": EXISTS, "ExpressionAttributeNames": {"#pk": "pk"},
    }}


def claim_name_op(db: Db, user_id: str, name: str, user_capability_id: str) -> dict[str, Any]:
    return {"Put": {
        "TableName": db.tables.user_capabilities,
        "Item": to_item({"pk": user_id, "sk": name_sk(name), "userCapabilityId": user_capability_id}),
        "ConditionExpression": ABSENT, "ExpressionAttributeNames": {"#pk": "pk"},
    }}


def release_name_op(db: Db, user_id: str, name: str, user_capability_id: str) -> dict[str, Any]:
    return {"Delete": {
        "TableName": db.tables.user_capabilities, "Key": key(pk=user_id, sk=name_sk(name)),
        "ConditionExpression": f"{EXISTS} AND {OWNS_NAME}",
        "ExpressionAttributeNames": {"#pk": "pk", "#id": "userCapabilityId"},
        "ExpressionAttributeValues": {":id": to_value(user_capability_id)},
    }}


def take_quota_op(db: Db, user_id: str, *, limit: int = MAX_CAPABILITIES_PER_USER) -> dict[str, Any]:
    return {"Update": {
        "TableName": db.tables.user_capabilities, "Key": key(pk=user_id, sk=QUOTA_SK),
        "UpdateExpression": "ADD #used :one", "ConditionExpression": QUOTA_LEFT,
        "ExpressionAttributeNames": {"#used": QUOTA_ATTR},
        "ExpressionAttributeValues": {":one": to_value(1), ":limit": to_value(limit)},
    }}


def give_back_quota_op(db: Db, user_id: str) -> dict[str, Any]:
    return {"Update": {
        "TableName": db.tables.user_capabilities, "Key": key(pk=user_id, sk=QUOTA_SK),
        "UpdateExpression": "ADD #used :minusOne", "ConditionExpression": QUOTA_HELD,
        "ExpressionAttributeNames": {"#used": QUOTA_ATTR},
        "ExpressionAttributeValues": {":minusOne": to_value(-1), ":zero": to_value(0)},
    }}


def replace_capability_op(
    db: Db, capability: UserCapability, *, expected_version: int, expected_status: CapabilityStatus
) -> dict[str, Any]:
    """The whole capability item (never its bindings) at `capability.version`, if it is still at
    `expected_version` and in `expected_status`."""
    return {"Put": {
        "TableName": db.tables.user_capabilities, "Item": to_capability_item(capability),
        "ConditionExpression": f"{EXISTS} AND {AT_VERSION} AND {IN_STATUS}",
        "ExpressionAttributeNames": {"#pk": "pk", "#version": "version", "#status": "status"},
        "ExpressionAttributeValues": {":expected": to_value(expected_version),
                                      ":status": to_value(expected_status.value)},
    }}


def bump_for_binding_op(
    db: Db, user_id: str, user_capability_id: str, *, expected_version: int, now: datetime,
    added: str | None = None, removed: str | None = None,
) -> dict[str, Any]:
    """A draft capability's version + 1 for a binding change; an added binding also takes one of the
    capability's 20 (`bindingCount`, in the same condition), a removed one gives it back."""
    names = {"#pk": "pk", "#version": "version", "#status": "status", "#updated": "updatedAt"}
    values: dict[str, Any] = {
        ":expected": to_value(expected_version), ":next": to_value(expected_version + 1),
        ":status": to_value(CapabilityStatus.DRAFT.value), ":now": to_value(to_sort_time(now)),
    }
    update = "SET #version = :next, #updated = :now"
    condition = f"{EXISTS} AND {AT_VERSION} AND {IN_STATUS}"
    if added is not None:
        names |= {"#count": "bindingCount", "#names": "bindingNames"}
        values |= {":one": to_value(1), ":name": {"SS": [added]},
                   ":bindingLimit": to_value(MAX_BINDINGS_PER_CAPABILITY)}
        update += " ADD #count :one, #names :name"
        condition += f" AND {BINDINGS_LEFT}"
    elif removed is not None:
        names |= {"#count": "bindingCount", "#names": "bindingNames"}
        values |= {":minusOne": to_value(-1), ":name": {"SS": [removed]}}
        update += " ADD #count :minusOne DELETE #names :name"
    return {"Update": {
        "TableName": db.tables.user_capabilities, "Key": key(pk=user_id, sk=capability_sk(user_capability_id)),
        "UpdateExpression": update, "ConditionExpression": condition,
        "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
    }}


def delete_capability_op(db: Db, user_id: str, user_capability_id: str, *, expected_version: int) -> dict[str, Any]:
    return {"Delete": {
        "TableName": db.tables.user_capabilities, "Key": key(pk=user_id, sk=capability_sk(user_capability_id)),
        "ConditionExpression": f"{EXISTS} AND {AT_VERSION}",
        "ExpressionAttributeNames": {"#pk": "pk", "#version": "version"},
        "ExpressionAttributeValues": {":expected": to_value(expected_version)},
    }}
