"""A hosted call's first read: everything its checks need, in one BatchGetItem, as typed records.

Like the chat turn's (conversations/turn_state.py), it crosses aggregates on purpose: the user's skill switches,
the hosted workflows skill's grants (the agent's scope first when the call is made for an agent, then the
user's), the endpoint (with its pending snapshot while a drift is pending), the call's idempotency record (hosted/call_store.py) and the given approval. Every key is
built by the store that owns its items; the endpoints table's two items are told apart here by their sort keys.
"""

from __future__ import annotations

from msgspec import Struct

from skillcore.approvals import store as approval_store
from skillcore.approvals.models import Approval
from skillcore.conversations.profile_store import bindings_key, disabled_skills
from skillcore.db.dynamo import Db, batch_get
from skillcore.hosted import call_store, endpoint_store
from skillcore.hosted.models import HostedEndpoint
from skillcore.policy import grant_store
from skillcore.policy.grants import GrantScope, PermissionGrant
from skillcore.skills.manifest import SkillManifest


class CallState(Struct, frozen=True, kw_only=True):
    disabled_skills: frozenset[str]
    grants: tuple[PermissionGrant, ...]
    endpoint: HostedEndpoint | None  # None: no such endpoint for this user
    record: call_store.CallRecord | None  # the record of a call already made under this clientCallId
    approval: Approval | None  # the given approval, when there is one under that id


def read_call_state(db: Db, skill: SkillManifest, user_id: str, endpoint_id: str, *, client_call_id: str,
                    approval_id: str | None, agent_id: str | None) -> CallState:
    scopes = ((GrantScope.agent(agent_id),) if agent_id else ()) + (GrantScope.user(),)
    endpoints = db.tables.hosted_endpoints
    found = batch_get(db, {
        db.tables.users: [bindings_key(user_id)],
        db.tables.grants: [grant_store.grant_key(user_id, skill.skill_id, p.code, s)
                           for p in skill.permissions for s in scopes],
        endpoints: [endpoint_store.endpoint_key(user_id, endpoint_id), endpoint_store.pending_key(user_id, endpoint_id),
                    call_store.call_slot(db, user_id, endpoint_id, client_call_id).item_key],
        db.tables.approvals: [approval_store.approval_key(user_id, approval_id)] if approval_id else [],
    })
    bindings = found[db.tables.users]
    endpoint_item = next((i for i in found[endpoints] if endpoint_store.is_endpoint_item(i)), None)
    pending_item = next((i for i in found[endpoints] if endpoint_store.is_pending_item(i)), None)
    record_item = next((i for i in found[endpoints] if call_store.is_call_item(i)), None)
    approvals = found[db.tables.approvals]
    return CallState(
        disabled_skills=disabled_skills(bindings[0] if bindings else None),
        grants=tuple(grant_store.grant_from_item(i) for i in found[db.tables.grants]),
        endpoint=endpoint_store.endpoint_read_with(db, user_id, endpoint_id, endpoint_item, pending_item),
        record=call_store.record_from_item(record_item) if record_item else None,
        approval=approval_store.approval_from_item(approvals[0]) if approvals else None,
    )
