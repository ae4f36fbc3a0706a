"""Schemathesis hooks for `make contract` (schemathesis.toml loads this module).

Test data: a schema-valid request names the agents the script created (`agentId` in a body, the members of a
group), and every DELETE of an automation job deletes a job made for it, so that these operations reach their
logic instead of answering 404 to drawn ids. Values that are not valid ids are left alone: a case that is
invalid on purpose stays invalid.

One check, `valid_data_accepted_unless_a_rule_refuses`, stands in for schemathesis's `positive_data_acceptance`
(which schemathesis.toml turns off, saying why). The built-in one fails every 422 to a schema-valid request.
The contract (docs/contract.md) also answers 422 for rules that a JSON Schema cannot state because they depend on state
the request does not carry or on the clock: the grant is not active (`permission_required`), the skill is
switched off (`skill_disabled`), `runAt` is not 1 minute to 1 year from now (`run_at_out_of_range`), a zone is
not in the IANA database (`invalid_timezone`), a tool is not registered (`unknown_tool`), a manifest does not
declare the code (`permission_not_declared`). This check runs the built-in one and lets such a 422 through only
when its code is one the operation documents and is not `validation_error`, or when it is a
`validation_error` whose every path is a field listed below. Any other refusal of valid data still fails.
"""

from __future__ import annotations

import http.client
import json
import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData
from schemathesis.specs.openapi.checks import positive_data_acceptance

ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Fields that are valid only against stored state, which no request schema can know.
STATE_FIELDS: dict[str, frozenset[str]] = {
    # A cursor is opaque: only one the server minted for this list names a place in it.
    "cursor": frozenset({"GET"}),
    # A publisher's key: a schema states the PEM text's shape and length, not that the DER inside is an Ed25519
    # SubjectPublicKeyInfo (docs/packages.md).
    "publicKey": frozenset({"POST /rpc/admin/publishers", "POST /rpc/admin/publishers/{publisherId}/keys"}),
    # An answer names a gap of the draft's current revision, which only the stored draft knows.
    "answers/*/gapId": frozenset({"POST /rpc/user-capability-drafts/{draftId}/generate"}),
}
INDEX = re.compile(r"(?<=/)\d+(?=/|$)")


def _documented_rule_codes(case: Any) -> set[str]:
    """The 422 codes this operation documents (the generator writes them as an enum on error.code)."""
    response = (case.operation.definition.raw.get("responses") or {}).get("422") or {}
    schema = ((response.get("content") or {}).get("application/json") or {}).get("schema") or {}
    codes: set[str] = set()
    for part in schema.get("allOf", []):
        codes.update(
            ((part.get("properties") or {}).get("error") or {})
            .get("properties", {})
            .get("code", {})
            .get("enum", [])
        )
    return codes - {"validation_error"}


def _state_field(path: str, case: Any) -> bool:
    scopes = STATE_FIELDS.get(INDEX.sub("*", path), frozenset())
    return case.method.upper() in scopes or f"{case.method.upper()} {case.path}" in scopes


def refused_by_a_rule(case: Any, status: int, body: bytes | str) -> bool:
    if status != 422:
        return False
    try:
        error = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    code = error.get("code")
    if code in _documented_rule_codes(case):
        return True
    paths = [item.get("path") for item in (error.get("details") or {}).get("errors") or []]
    return code == "validation_error" and bool(paths) and all(_state_field(str(path), case) for path in paths)


@schemathesis.check
def valid_data_accepted_unless_a_rule_refuses(ctx: Any, response: Any, case: Any) -> bool | None:
    try:
        return positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        if refused_by_a_rule(case, response.status_code, response.content):
            return None
        raise


# ---------------------------------------------------------------------------------------------- test data


def _agents() -> list[str]:
    return [os.environ["SKILLS_CONTRACT_AGENT_ID"], os.environ["SKILLS_CONTRACT_OTHER_AGENT_ID"]]


def _with_known_agents(body: Any) -> Any:
    if not isinstance(body, dict):
        return body
    body = dict(body)
    if isinstance(body.get("agentId"), str) and ID.match(body["agentId"]):
        body["agentId"] = _agents()[0]
    scope = body.get("scope")
    if isinstance(scope, dict) and isinstance(scope.get("agentId"), str) and ID.match(scope["agentId"]):
        body["scope"] = {**scope, "agentId": _agents()[0]}
    members = body.get("agentIds")
    if (
        isinstance(members, list)
        and len(members) == 2
        and all(isinstance(m, str) and ID.match(m) for m in members)
    ):
        body["agentIds"] = _agents()
    return body


def _new_automation_job() -> str:
    target = urlsplit(os.environ["SKILLS_CONTRACT_STACK_URL"])
    connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
    body = {
        "title": "to delete",
        "scheduleType": "daily",
        "localTime": "08:00",
        "config": {"prompt": "tidy up", "tools": ["memory_write"]},
    }
    try:
        connection.request(
            "POST",
            "/rpc/automation-jobs",
            body=json.dumps(body),
            headers={
                "Authorization": f"Bearer {os.environ['SKILLS_CONTRACT_TOKEN']}",
                "Content-Type": "application/json",
            },
        )
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    if response.status != 201:
        raise RuntimeError(f"could not create an automation job to delete: {response.status} {answer}")
    return str(answer["jobId"])


# Valid by the schema, refused by a rule nearly always when drawn at random: a positive case gets a value the
# rule accepts, so the operation's logic runs (the refusals have their own tests: tests/unit, tests/stack).
ZONES = ("Asia/Shanghai", "UTC", "Europe/Berlin", "America/New_York", "Asia/Kathmandu", "Pacific/Kiritimati")


def _with_the_catalog_skill(case: Any, body: Any) -> Any:
    """A valid install names the seeded published skill (a drawn id is not in the catalog: always a 404)."""
    if case.method.upper() == "POST" and case.path == "/rpc/installs" and isinstance(body, dict) \
            and isinstance(body.get("skillId"), str):
        return {**body, "skillId": os.environ["SKILLS_CONTRACT_SKILL_ID"]}
    return body


def _with_values_rules_accept(case: Any, body: Any) -> Any:
    if not isinstance(body, dict):
        return body
    body = dict(body)
    if isinstance(body.get("timezone"), str):
        body["timezone"] = ZONES[sum(map(ord, body["timezone"])) % len(ZONES)]
    if (case.path == "/rpc/skills/permissions" and isinstance(body.get("skillId"), str) and ID.match(body["skillId"])
            and sum(map(ord, body["skillId"])) % 2 == 0):
        # Half the valid cases name a registered skill and a permission it declares: drawn at random, a skill id
        # is nearly always unknown (404), and the operation's grant logic would never run.
        body["skillId"], body["permissionCode"] = "memory-recall", "memory:read"
    if case.path == "/rpc/skills/permissions" and body.get("granted") is False and isinstance(body.get("scope"), dict):
        # A revoke names the grant by its scope's type (and agent): a narrowing belongs to a grant, not a revoke.
        body["scope"] = {k: v for k, v in body["scope"].items() if k not in ("resources", "arguments")}
    if case.path == "/rpc/skills/permissions" and isinstance(body.get("scope"), dict) and isinstance(
            body["scope"].get("arguments"), list):
        # An argument constraint is exactly one of enum, maximum, maxLength (a null one is no constraint).
        arguments = [_one_constraint(a) for a in body["scope"]["arguments"]]
        if body.get("skillId") == "memory-recall":
            # Its tool declares one argument, `question`, a string: a constraint names it and bounds its length.
            arguments = [{"name": "question", "maxLength": a.get("maxLength") or 10} if isinstance(a, dict) else a
                         for a in arguments]
        body["scope"] = {**body["scope"], "arguments": arguments}
    if case.path.endswith("/generate") and isinstance(body.get("answers"), list):
        # An answer that drops its step says nothing else (docs/contract.md, drafts).
        body["answers"] = [
            {"gapId": a.get("gapId"), "drop": True} if isinstance(a, dict) and a.get("drop") is True else a
            for a in body["answers"]
        ]
    if case.path == "/rpc/skills/background-jobs" and isinstance(body.get("runAt"), str):
        ahead = timedelta(minutes=5 + sum(map(ord, body["runAt"])) % 100_000)  # 1 minute to 1 year ahead
        body["runAt"] = (datetime.now(UTC) + ahead).isoformat()
        if isinstance(body.get("skillId"), str) and ID.match(body["skillId"]):
            body["skillId"] = "goal-check-in-reminder"
    return body


def _one_constraint(argument: Any) -> Any:
    if not isinstance(argument, dict):
        return argument
    kinds = [k for k in ("enum", "maximum", "maxLength") if argument.get(k) is not None]
    kept = {k: v for k, v in argument.items() if k not in ("enum", "maximum", "maxLength")}
    if kinds:
        kept[kinds[0]] = argument[kinds[0]]
    else:
        kept["maxLength"] = 10
    return kept


def _new_user_capability() -> str:
    """A capability of its own for one DELETE (the seeded one stays for the other operations)."""
    target = urlsplit(os.environ["SKILLS_CONTRACT_STACK_URL"])
    connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
    name = f"to_delete_{os.urandom(6).hex()}"
    body = {
        "name": name, "displayName": "to delete", "whenToUse": ["never"],
        "workflow": {"objective": "nothing", "steps": [
            {"kind": "platformCapability", "capabilityId": "memory-recall", "instruction": "recall"}],
            "completionCriteria": "done"},
        "platformCapabilityIds": ["memory-recall"],
    }
    try:
        connection.request("POST", "/rpc/user-capabilities", body=json.dumps(body), headers={
            "Authorization": f"Bearer {os.environ['SKILLS_CONTRACT_TOKEN']}", "Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    if response.status == 422 and answer["error"]["code"] == "quota_exceeded":
        return os.environ["SKILLS_CONTRACT_USER_CAPABILITY_ID"].replace("0", "1", 1)  # absent: a 404 then
    if response.status != 201:
        raise RuntimeError(f"could not create a user capability to delete: {response.status} {answer}")
    return str(answer["userCapabilityId"])


def _new_hosted_endpoint() -> str:
    """An endpoint of its own for one DELETE (the seeded one stays for the other operations)."""
    target = urlsplit(os.environ["SKILLS_CONTRACT_STACK_URL"])
    connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
    body = {"name": f"del_{os.urandom(6).hex()}", "displayName": "to delete",
            "url": os.environ["SKILLS_CONTRACT_HOSTED_URL"]}
    try:
        connection.request("POST", "/rpc/hosted-endpoints", body=json.dumps(body), headers={
            "Authorization": f"Bearer {os.environ['SKILLS_CONTRACT_TOKEN']}", "Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    if response.status == 422 and answer["error"]["code"] == "quota_exceeded":
        return os.environ["SKILLS_CONTRACT_HOSTED_ENDPOINT_ID"].replace("0", "1", 1)  # absent: a 404 then
    if response.status != 201:
        raise RuntimeError(f"could not register a hosted endpoint to delete: {response.status} {answer}")
    return str(answer["endpointId"])


def _with_references_that_resolve(case: Any, body: Any) -> Any:
    """A user capability whose steps name what it declares, so a valid body reaches the later defences and the
    write instead of stopping at unknown_reference nearly always (that refusal has its own tests)."""
    if not isinstance(body, dict) or not case.path.startswith("/rpc/user-capabilities"):
        return body
    body = dict(body)
    if case.path.endswith("/tool-bindings/{name}") and isinstance(body.get("name"), str):
        body["name"] = (case.path_parameters or {}).get("name", body["name"])  # a binding is not renamed
    if isinstance(body.get("platformCapabilityIds"), list) and body["platformCapabilityIds"]:
        body["platformCapabilityIds"] = ["memory-recall"]
    bindings = body.get("toolBindings") if isinstance(body.get("toolBindings"), list) else None
    target = (bindings[0] if bindings and isinstance(bindings[0], dict) else
              {"name": "notes", "hostProfile": "laptop"} if case.method.upper() == "PUT" else None)
    workflow = body.get("workflow")
    if isinstance(workflow, dict) and isinstance(workflow.get("steps"), list):
        steps = []
        for step in workflow["steps"]:
            if isinstance(step, dict) and step.get("kind") == "platformCapability":
                step = {**step, "capabilityId": "memory-recall"}
                if not body.get("platformCapabilityIds"):
                    body["platformCapabilityIds"] = ["memory-recall"]
            elif isinstance(step, dict) and step.get("kind") == "localTool" and target:
                step = {**step, "toolName": target.get("name"), "hostProfile": target.get("hostProfile")}
            steps.append(step)
        body["workflow"] = {**workflow, "steps": steps}
    return body


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    capability = str((case.path_parameters or {}).get("userCapabilityId", ""))
    if (case.method.upper() == "DELETE" and case.path == "/rpc/user-capabilities/{userCapabilityId}"
            and ID.match(capability)):
        case.path_parameters = {**(case.path_parameters or {}), "userCapabilityId": _new_user_capability()}
    endpoint = str((case.path_parameters or {}).get("endpointId", ""))
    if (case.method.upper() == "DELETE" and case.path == "/rpc/hosted-endpoints/{endpointId}"
            and ID.match(endpoint)):
        case.path_parameters = {**(case.path_parameters or {}), "endpointId": _new_hosted_endpoint()}
    job = str((case.path_parameters or {}).get("jobId", ""))
    # In every mode: a case invalid elsewhere would still delete the job it names.
    if case.method.upper() == "DELETE" and case.path == "/rpc/automation-jobs/{jobId}" and ID.match(job):
        case.path_parameters = {**(case.path_parameters or {}), "jobId": _new_automation_job()}
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return
    case.body = _with_the_catalog_skill(case, _with_references_that_resolve(
        case, _with_values_rules_accept(case, _with_known_agents(case.body))))
