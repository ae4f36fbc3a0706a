"""The host ports of a code tool bound to the real stores and services, for one owner and agent:

    ports = bind_ports(db, skill, user_id, agent_id, call_id=call_id, now=now, hosted=hosted_deps)

- grants: the skill's permission grants (agent and user scope), read in one BatchGetItem at each host call that
  needs a permission, so a revoke (or the skill's switch turned off) takes effect at the next host call;
- memories: the agent's active memories (memory/store.py), read when `memory.search` is called;
- hosted: `hosted/calls.py` `call`, on the agent's behalf, with no approval id: the hosted workflows skill's own
  grant, the endpoint, drift, schema and approval checks, the egress proxy and the `hosted_endpoint.call` audit
  apply as for any hosted call. A tool whose operation needs an approval gets `approval_required` back, and the
  person approves it on the page like any other.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from skillcore.db.dynamo import Db
from skillcore.memory import store as memory_store
from skillcore.memory.models import MemoryItem
from skillcore.policy import grant_store
from skillcore.policy.gate import scope_candidates
from skillcore.policy.grants import PermissionGrant
from skillcore.sandbox.host import HostedCall, HostPorts
from skillcore.skills.manifest import SkillManifest

if TYPE_CHECKING:
    from skillcore.hosted.service import HostedDeps


def bind_ports(db: Db, skill: SkillManifest, user_id: str, agent_id: str, *, call_id: str, now: datetime,
               hosted: HostedDeps | None = None) -> HostPorts:
    keys = [grant_store.grant_key(user_id, skill.skill_id, p.code, scope)
            for p in skill.permissions for scope in scope_candidates(agent_id)]

    def grants() -> tuple[PermissionGrant, ...]:
        if not keys:
            return ()
        disabled, found = grant_store.read_policy_state(db, user_id, keys)
        return () if skill.skill_id in disabled else found  # a skill switched off holds no grant

    def memories() -> list[MemoryItem]:
        return memory_store.list_active_agent_memories(db, user_id, agent_id)

    hosted_call: HostedCall | None = None
    if hosted is not None:
        deps = hosted

        def call_hosted(endpoint_id: str, tool: str, arguments: dict[str, Any], client_call_id: str) -> dict[str, Any]:
            from skillcore.hosted import calls

            return calls.call(deps, user_id, endpoint_id, tool_name=tool, arguments=arguments,
                              client_call_id=client_call_id, approval_id=None, now=now, agent_id=agent_id).to_body()

        hosted_call = call_hosted
    return HostPorts(user_id=user_id, agent_id=agent_id, call_id=call_id, grants=grants, memories=memories,
                     hosted=hosted_call)
