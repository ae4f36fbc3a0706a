"""The wire is what openapi.json says: the real handlers of both functions, driven through a user's day, answer
only statuses the document lists for the operation, with bodies its schemas accept. And the functions serve
exactly the routes the generator documents."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from skillcore_local import openapi
from tests.support import invoke, load_event, load_function

DOCUMENT = openapi.build()
# The document's refs are "#/components/schemas/X"; the validator resolves them in a resource holding the components.
COMPONENTS = "urn:skillcore:components"
REGISTRY = Registry().with_resource(COMPONENTS, Resource.from_contents({
    "$schema": "https://json-schema.org/draft/2020-12/schema", "components": DOCUMENT["components"],
}))


def rebased(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: (COMPONENTS + v if k == "$ref" else rebased(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [rebased(item) for item in schema]
    return schema


def operation_for(method: str, path: str) -> tuple[str, dict[str, Any]]:
    for template, ops in DOCUMENT["paths"].items():
        regex = "^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(regex, path) and method.lower() in ops:
            return template, ops[method.lower()]
    raise AssertionError(f"{method} {path} is not in the document")


def validator_for(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(rebased(schema), registry=REGISTRY)


class Checked:
    """Invokes a function and checks the answer against the document before the test sees it."""

    def __init__(self, module: Any) -> None:
        self.module = module
        self.checked: set[tuple[str, str]] = set()

    def __call__(self, event: dict[str, Any]) -> tuple[int, Any]:
        status, body = invoke(self.module, event)
        method = event["requestContext"]["http"]["method"]
        template, op = operation_for(method, event["rawPath"])
        response = op["responses"].get(str(status))
        assert response is not None, f"{method} {template} answered {status}, not documented: {body}"
        if "content" not in response:
            assert body is None, f"{method} {template} {status} has a body the document does not describe"
        else:
            errors = list(validator_for(response["content"]["application/json"]["schema"]).iter_errors(body))
            assert not errors, f"{method} {template} {status}: {[e.message for e in errors][:3]}"
        self.checked.add((method, template))
        return status, body


def at(path: str, event: dict[str, Any]) -> dict[str, Any]:
    """A sample event sent to another path of the same method (the routes that have no sample of their own)."""
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    return event


@pytest.fixture
def rpc(aws: Any) -> Checked:
    return Checked(load_function("RpcFunction"))


@pytest.fixture
def chat(aws: Any) -> Checked:
    return Checked(load_function("ChatTurnFunction"))


def test_the_functions_serve_exactly_the_documented_routes(aws: Any) -> None:
    served = {
        (route.method, route.path)
        for logical_id in openapi.function_routes()
        for route in load_function(logical_id).routes.operations
    }
    assert served == {(r.method, r.path) for r in openapi.all_routes()}


@pytest.fixture
def hosted(aws: Any) -> Checked:
    return Checked(load_function("HostedFunction"))


@pytest.fixture
def catalog(aws: Any) -> Checked:
    return Checked(load_function("CatalogFunction"))


def test_a_users_day_conforms_to_the_document(rpc: Checked, chat: Checked, hosted: Checked, catalog: Checked) -> None:
    ok = {200, 201, 204}
    assert rpc(load_event("rpc_health.json"))[0] == 200
    assert rpc(load_event("rpc_get_me.json"))[0] == 404
    assert rpc(load_event("rpc_put_me.json", body={"timezone": "Asia/Shanghai", "displayName": "Alice"}))[0] == 200
    assert rpc(load_event("rpc_put_me.json", body={"timezone": "Mars/Olympus"}))[0] == 422
    assert rpc(load_event("rpc_get_me.json"))[0] == 200
    assert rpc(at("/rpc/usage", load_event("rpc_get_me.json")))[0] == 200
    status, agent = rpc(load_event("rpc_create_agent.json", body={"name": "Mika"}))
    _, other = rpc(load_event("rpc_create_agent.json", body={"name": "Nori"}))
    agent_id, conversation_id = agent["agentId"], agent["defaultConversationId"]
    ids = {"AGENT_ID": agent_id, "CONVERSATION_ID": conversation_id}
    assert rpc(load_event("rpc_list_agents.json", query={"limit": "1"}))[0] == 200
    assert rpc(at(f"/rpc/agents/{agent_id}", load_event("rpc_list_agents.json")))[0] == 200
    assert rpc(at("/rpc/agents/someone-elses", load_event("rpc_list_agents.json")))[0] == 404
    assert rpc(at(f"/rpc/conversations/{conversation_id}", load_event("rpc_list_conversations.json")))[0] == 200
    assert rpc(load_event("rpc_create_group.json", body={"kind": "group", "agentIds": [agent_id, other["agentId"]]}))[0] == 201
    assert rpc(load_event("rpc_list_conversations.json"))[0] == 200

    body = {"clientMessageId": "m1", "text": "我喜欢爬山"}
    assert chat(load_event("chat_post_message.json", path_ids=ids, body=body))[0] == 200
    assert chat(load_event("chat_post_message.json", path_ids=ids, body=body | {"text": "other"}))[0] == 409
    assert chat(load_event("chat_post_message.json", path_ids=ids, body={"clientMessageId": "m2", "text": "/goal 10k"}))[0] == 200
    assert rpc(load_event("rpc_list_messages.json", path_ids=ids))[0] == 200
    assert rpc(load_event("rpc_admin_messages.json", path_ids=ids, groups="[admin]"))[0] == 200
    assert rpc(load_event("rpc_admin_messages.json", path_ids=ids))[0] == 403

    status, memory = rpc(load_event("rpc_create_memory.json", path_ids=ids, body={"title": "hobby", "content": "爬山"}))
    assert status == 201
    assert rpc(load_event("rpc_list_memories.json", path_ids=ids))[0] == 200
    assert rpc(load_event("rpc_forget_memory.json", path_ids=ids | {"MEMORY_ID": memory["memoryId"]}))[0] == 200

    grant = {"skillId": "goal-check-in-reminder", "permissionCode": "proactive_message:write", "scope": {"type": "user"}}
    job = {"skillId": "goal-check-in-reminder", "agentId": agent_id,
           "runAt": (datetime.now(UTC) + timedelta(hours=1)).isoformat(), "note": "跑步"}
    assert rpc(load_event("rpc_create_background_job.json", body=job))[0] == 422  # permission_required
    assert rpc(load_event("rpc_patch_permission.json", body=grant | {"granted": True}))[0] == 200
    status, created = rpc(load_event("rpc_create_background_job.json", body=job))
    assert status == 201
    assert rpc(load_event("rpc_list_background_jobs.json"))[0] == 200
    assert rpc(load_event("rpc_cancel_background_job.json", path_ids={"JOB_ID": created["jobId"]}))[0] == 200
    assert rpc(load_event("rpc_cancel_background_job.json", path_ids={"JOB_ID": created["jobId"]}))[0] == 409
    assert rpc(load_event("rpc_patch_permission.json", body=grant | {"granted": False}))[0] == 200
    assert rpc(load_event("rpc_list_permissions.json"))[0] == 200

    assert rpc(load_event("rpc_list_skills.json"))[0] == 200
    assert rpc(load_event("rpc_patch_skill.json", body={"enabled": False}))[0] == 200
    assert rpc(at("/rpc/skills/no-such-skill", load_event("rpc_patch_skill.json", body={"enabled": False})))[0] == 404
    assert rpc(load_event("rpc_list_runs.json"))[0] == 200
    assert rpc(load_event("rpc_list_audit_events.json"))[0] == 200
    assert rpc(load_event("rpc_admin_audit_events.json", query={"userId": "user-alice"}, groups="[admin]"))[0] == 200

    auto = {"title": "weekly", "scheduleType": "weekly", "localTime": "09:30", "weekday": 1,
            "config": {"prompt": "summarise", "tools": ["memory_write"]}}
    status, automation = rpc(load_event("rpc_create_automation_job.json", body=auto))
    assert status == 201
    job_ids = {"JOB_ID": automation["jobId"]}
    assert rpc(load_event("rpc_list_automation_jobs.json"))[0] == 200
    assert rpc(load_event("rpc_get_automation_job.json", path_ids=job_ids))[0] == 200
    assert rpc(load_event("rpc_patch_automation_job.json", path_ids=job_ids, body={"status": "paused"}))[0] == 200
    assert rpc(load_event("rpc_list_automation_runs.json", path_ids=job_ids))[0] == 200
    assert rpc(load_event("rpc_delete_automation_job.json", path_ids=job_ids))[0] in ok
    assert rpc(load_event("rpc_get_automation_job.json", path_ids=job_ids))[0] == 404

    # User-defined capabilities: every route, with its documented errors among the answers.
    def cap(method: str, path: str, body: Any = None, query: dict[str, str] | None = None) -> dict[str, Any]:
        event = at(path, load_event("rpc_create_user_capability.json", body=body, query=query))
        event["requestContext"]["http"]["method"] = method
        if body is None:
            event["body"] = None
        return event

    status, capability = rpc(load_event("rpc_create_user_capability.json"))
    assert status == 201
    assert rpc(load_event("rpc_create_user_capability.json"))[0] == 409  # capability_name_taken
    base = f"/rpc/user-capabilities/{capability['userCapabilityId']}"
    assert rpc(cap("GET", "/rpc/user-capabilities", query={"status": "draft"}))[0] == 200
    assert rpc(cap("GET", base))[0] == 200
    fields = {k: capability[k] for k in ("displayName", "whenToUse", "workflow", "platformCapabilityIds")}
    assert rpc(cap("PUT", base, fields | {"expectedVersion": 1}))[0] == 200
    assert rpc(cap("PUT", base, fields | {"expectedVersion": 1}))[0] == 409  # version_conflict
    binding = capability["toolBindings"][0]
    extra = {k: binding[k] for k in ("hostProfile", "mcpServerId", "mcpToolName", "inputSchema")} | {"name": "extra"}
    assert rpc(cap("POST", f"{base}/tool-bindings", extra | {"expectedVersion": 2}))[0] == 201
    assert rpc(cap("PUT", f"{base}/tool-bindings/extra", extra | {"expectedVersion": 3}))[0] == 200
    assert rpc(cap("DELETE", f"{base}/tool-bindings/notes", query={"expectedVersion": "4"}))[0] == 409  # in use
    assert rpc(cap("DELETE", f"{base}/tool-bindings/extra", query={"expectedVersion": "4"}))[0] == 204
    assert rpc(cap("POST", f"{base}/activate", {"expectedVersion": 5}))[0] == 200
    assert rpc(cap("POST", f"{base}/deactivate", {"expectedVersion": 6}))[0] == 200
    # The catalog and protocols an agent host reads.
    assert rpc(cap("GET", "/rpc/capabilities"))[0] == 200
    asked = {"capabilityId": capability["capabilityId"], "hostProfile": binding["hostProfile"]}
    assert rpc(cap("GET", "/rpc/capabilities/protocol", query=asked))[0] == 409  # a draft: capability_not_active
    assert rpc(cap("GET", "/rpc/capabilities/protocol", query=asked | {"preview": "true"}))[0] == 200
    assert rpc(cap("GET", "/rpc/capabilities/protocol", query={"capabilityId": "user:nobody_has_it"}))[0] == 404
    assert rpc(cap("DELETE", base))[0] == 204

    # Creating a capability by conversation: start, generate (answering the binding gap), confirm, and a
    # stale confirm (draft_revision_conflict).
    description = ("name: evening_notes\nwhen to use: end of day\ngoal: Write down the day\n"
                   "steps: 1. use tool notes on laptop: Append the summary\ndone when: It is written")
    status, draft = rpc(cap("POST", "/rpc/user-capability-drafts", {"description": description}))
    assert status == 201
    drafts = f"/rpc/user-capability-drafts/{draft['draftId']}"
    answer = {"gapId": draft["gaps"][0]["gapId"], "binding": {k: binding[k] for k in (
        "name", "hostProfile", "mcpServerId", "mcpToolName", "inputSchema")}}
    assert rpc(cap("POST", f"{drafts}/generate", {"answers": [answer]}))[0] == 200
    assert rpc(cap("GET", "/rpc/user-capability-drafts", query={"status": "open", "limit": "5"}))[0] == 200
    assert rpc(cap("GET", drafts))[0] == 200
    assert rpc(cap("GET", "/rpc/user-capability-drafts/someone-elses"))[0] == 404
    status, confirmed = rpc(cap("POST", f"{drafts}/confirm", {"revision": 2}))
    assert status == 201
    assert rpc(cap("POST", f"{drafts}/confirm", {"revision": 2}))[0] == 409

    # Packages, publishers, release review and the catalog (CatalogFunction; package bytes in moto's S3, through the
    # S3 adapter).
    from tests import package_support as packages

    def pkg(method: str, path: str, body: Any = None, query: dict[str, str] | None = None, *,
            user: str = "user-alice", admin: bool = False) -> dict[str, Any]:
        event = at(path, load_event("rpc_create_user_capability.json", body=body, query=query, user=user,
                                    groups="[admin]" if admin else None))
        event["requestContext"]["http"]["method"] = method
        if body is None:
            event["body"] = None
        return event

    exported = catalog(pkg("GET", f"/rpc/user-capabilities/{confirmed['userCapabilityId']}/package"))
    assert exported[0] == 200
    assert catalog(pkg("POST", "/rpc/user-capability-packages", {"package": exported[1]["package"]}, user="user-bob"))[0] == 201
    keys = packages.KeyPair()
    publisher = {"publisherId": "conform-pub", "displayName": "Conform", "userId": "user-alice",
                 "trustLevel": "community", "publicKey": keys.pem}
    assert catalog(pkg("POST", "/rpc/admin/publishers", publisher, admin=True))[0] == 201
    assert catalog(pkg("POST", "/rpc/admin/publishers", publisher, admin=True))[0] == 409
    assert catalog(pkg("GET", "/rpc/admin/publishers", admin=True))[0] == 200
    data = packages.package_zip("conform-skill", publisher="conform-pub")
    assert catalog(pkg("POST", "/rpc/releases", {"package": packages.b64(data)}))[0] == 422  # signature_invalid
    status, release = catalog(pkg("POST", "/rpc/releases", {"package": packages.b64(data), "signature": keys.sign(data)}))
    assert status == 201 and release["state"] == "checked"
    assert catalog(pkg("POST", "/rpc/releases", {"package": packages.b64(data), "signature": keys.sign(data)}))[0] == 409
    assert catalog(pkg("GET", f"/rpc/releases/{release['releaseId']}"))[0] == 200
    assert catalog(pkg("GET", "/rpc/admin/releases", admin=True))[0] == 200
    assert catalog(pkg("GET", f"/rpc/admin/releases/{release['releaseId']}", admin=True))[0] == 200
    decision = f"/rpc/admin/releases/{release['releaseId']}/decision"
    assert catalog(pkg("POST", decision, {"decision": "approve", "reason": "ok"}, admin=True))[0] == 200
    assert catalog(pkg("POST", decision, {"decision": "reject", "reason": "late"}, admin=True))[0] == 409
    assert catalog(pkg("GET", "/rpc/catalog"))[0] == 200
    assert catalog(pkg("GET", "/rpc/catalog/conform-skill"))[0] == 200
    status, download = catalog(pkg("GET", "/rpc/catalog/conform-skill/package"))
    assert status == 200 and download["sha256"] == release["sha256"]
    # Installs: another user installs the published skill, lists and reads it, consents to nothing, uninstalls.
    status, installed = catalog(pkg("POST", "/rpc/installs", {"skillId": "conform-skill"}, user="user-bob"))
    assert status == 201 and installed["version"] == "1.0.0" and installed["trustLevel"] == "community"
    assert catalog(pkg("POST", "/rpc/installs", {"skillId": "conform-skill"}, user="user-bob"))[0] == 409
    assert catalog(pkg("POST", "/rpc/installs", {"skillId": "no-such-skill"}, user="user-bob"))[0] == 404
    assert catalog(pkg("GET", "/rpc/installs", user="user-bob"))[0] == 200
    assert catalog(pkg("GET", "/rpc/installs/conform-skill", user="user-bob"))[0] == 200
    assert catalog(pkg("GET", "/rpc/installs/conform-skill"))[0] == 404  # another user's install
    status, code_tools = catalog(pkg("GET", "/rpc/code-tools", user="user-bob"))  # a package without code tools
    assert status == 200 and code_tools == {"items": []}
    assert catalog(pkg("POST", "/rpc/installs/conform-skill/accept", {"version": "1.1.0"}, user="user-bob"))[0] == 409
    assert catalog(pkg("DELETE", "/rpc/installs/conform-skill", user="user-bob"))[0] == 204
    assert catalog(pkg("DELETE", "/rpc/installs/conform-skill", user="user-bob"))[0] == 404
    rotated = {"publicKey": packages.KeyPair().pem, "revokeOthers": False}
    assert catalog(pkg("POST", "/rpc/admin/publishers/conform-pub/keys", rotated, admin=True))[0] == 201
    assert catalog(pkg("POST", f"/rpc/admin/publishers/conform-pub/keys/{keys.key_id}/revoke", admin=True))[0] == 200

    # Approvals (HostedFunction): one asked for as a hosted call would, listed, decided, refused the second time.
    from skillcore.approvals import service as approvals
    from skillcore.approvals.models import EndpointBinding
    from skillcore.db.dynamo import make_db
    from skillcore.settings import Settings

    operation = approvals.operation_of("ep-1", "run", {"x": 1})
    approval = approvals.ask(make_db(Settings.from_env()), "user-alice", operation, {"x": 1}, client_call_id="c-1",
                             binding=EndpointBinding(endpoint_version=1, snapshot_fingerprint="0" * 64),
                             now=datetime.now(UTC))
    assert hosted(load_event("hosted_list_approvals.json", query={"status": "pending"}))[0] == 200
    decide = load_event("hosted_decide_approval.json", path_ids={"APPROVAL_ID": approval.approval_id})
    assert hosted(decide)[0] == 200
    assert hosted(load_event("hosted_decide_approval.json", path_ids={"APPROVAL_ID": approval.approval_id}))[0] == 409
    assert hosted(load_event("hosted_decide_approval.json", path_ids={"APPROVAL_ID": "unknown"}))[0] == 404

    # Every operation of every function answered at least once, through the checks above.
    # Hosted endpoints (HostedFunction): no allow-list here, so a registration is refused before anything is sent.
    def hosted_route(method: str, path: str, body: Any = None) -> dict[str, Any]:
        event = load_event("hosted_list_approvals.json")
        event["routeKey"] = f"{method} {path}"
        event["requestContext"]["http"]["method"] = method
        if body is not None:
            event["body"] = json.dumps(body)
        return at(path, event)

    register = {"name": "flow_one", "displayName": "Flow", "url": "https://api.example.com/mcp"}
    assert hosted(hosted_route("POST", "/rpc/hosted-endpoints", register))[0] == 422
    assert hosted(hosted_route("GET", "/rpc/hosted-endpoints"))[0] == 200
    assert hosted(hosted_route("GET", "/rpc/hosted-endpoints/unknown"))[0] == 404
    assert hosted(hosted_route("PATCH", "/rpc/hosted-endpoints/unknown", {"expectedVersion": 1}))[0] == 404
    assert hosted(hosted_route("DELETE", "/rpc/hosted-endpoints/unknown"))[0] == 404
    assert hosted(hosted_route("POST", "/rpc/hosted-endpoints/unknown/refresh"))[0] == 404
    accept = {"expectedVersion": 1, "fingerprint": "0" * 64}
    assert hosted(hosted_route("POST", "/rpc/hosted-endpoints/unknown/snapshot/accept", accept))[0] == 404
    assert hosted(hosted_route("POST", "/rpc/hosted-endpoints/unknown/snapshot/accept", {"expectedVersion": 1}))[0] == 422
    call = {"toolName": "add", "arguments": {"a": 1}, "clientCallId": "conformance-1"}
    assert hosted(hosted_route("POST", "/rpc/hosted-endpoints/unknown/calls", call))[0] == 422  # no grant first
    assert hosted(hosted_route("POST", "/rpc/hosted-endpoints/unknown/calls", {"toolName": "add"}))[0] == 422

    assert rpc.checked | chat.checked | hosted.checked | catalog.checked == {(r.method, r.path) for r in openapi.all_routes()}
