"""template.yaml against the HTTP contract and the house rules: routes, authorizer, IAM scope, tables.

Each rule is a checker that returns the problems it finds, so the same checker is run on the real template
(no problems) and on broken copies of it (the problem is found): a checker that cannot fail is caught here.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from skillcore.api import route_table
from skillcore.egress.settings import LOCAL_VARIABLES as EGRESS_LOCAL_VARIABLES
from skillcore.settings import TABLES
from skillcore_local.acceptance import ALLOWED_HOSTS_VARIABLE
from skillcore_local.template import ROOT, load_template, table_resources

Template = dict[str, Any]


# docs/contract.md, every route: (method, path).
CONTRACT_ROUTES: tuple[tuple[str, str], ...] = (
    ("GET", "/rpc/health"),
    ("PUT", "/rpc/me"),
    ("GET", "/rpc/me"),
    ("GET", "/rpc/usage"),
    ("POST", "/rpc/agents"),
    ("GET", "/rpc/agents"),
    ("GET", "/rpc/agents/{agentId}"),
    ("POST", "/rpc/conversations"),
    ("GET", "/rpc/conversations"),
    ("GET", "/rpc/conversations/{conversationId}"),
    ("POST", "/rpc/conversations/{conversationId}/messages"),
    ("GET", "/rpc/conversations/{conversationId}/messages"),
    ("GET", "/rpc/skills"),
    ("PATCH", "/rpc/skills/{skillId}"),
    ("GET", "/rpc/skills/permissions"),
    ("PATCH", "/rpc/skills/permissions"),
    ("POST", "/rpc/skills/background-jobs"),
    ("GET", "/rpc/skills/background-jobs"),
    ("POST", "/rpc/skills/background-jobs/{jobId}/cancel"),
    ("GET", "/rpc/agents/{agentId}/memories"),
    ("POST", "/rpc/agents/{agentId}/memories"),
    ("DELETE", "/rpc/agents/{agentId}/memories/{memoryId}"),
    ("GET", "/rpc/automation-jobs"),
    ("GET", "/rpc/automation-jobs/{jobId}"),
    ("POST", "/rpc/automation-jobs"),
    ("PATCH", "/rpc/automation-jobs/{jobId}"),
    ("DELETE", "/rpc/automation-jobs/{jobId}"),
    ("GET", "/rpc/automation-jobs/{jobId}/runs"),
    ("GET", "/rpc/skills/audit-events"),
    ("GET", "/rpc/skills/runs"),
    ("GET", "/rpc/admin/conversations/{conversationId}/messages"),
    ("POST", "/rpc/user-capabilities"),
    ("GET", "/rpc/user-capabilities"),
    ("GET", "/rpc/user-capabilities/{userCapabilityId}"),
    ("PUT", "/rpc/user-capabilities/{userCapabilityId}"),
    ("DELETE", "/rpc/user-capabilities/{userCapabilityId}"),
    ("POST", "/rpc/user-capabilities/{userCapabilityId}/activate"),
    ("POST", "/rpc/user-capabilities/{userCapabilityId}/deactivate"),
    ("POST", "/rpc/user-capabilities/{userCapabilityId}/tool-bindings"),
    ("PUT", "/rpc/user-capabilities/{userCapabilityId}/tool-bindings/{name}"),
    ("DELETE", "/rpc/user-capabilities/{userCapabilityId}/tool-bindings/{name}"),
    ("POST", "/rpc/user-capability-drafts"),
    ("GET", "/rpc/user-capability-drafts"),
    ("GET", "/rpc/user-capability-drafts/{draftId}"),
    ("POST", "/rpc/user-capability-drafts/{draftId}/generate"),
    ("POST", "/rpc/user-capability-drafts/{draftId}/confirm"),
    # packages, releases, publishers and the catalog (docs/packages.md)
    ("GET", "/rpc/user-capabilities/{userCapabilityId}/package"),
    ("POST", "/rpc/user-capability-packages"),
    ("POST", "/rpc/releases"),
    ("GET", "/rpc/releases/{releaseId}"),
    ("GET", "/rpc/catalog"),
    ("GET", "/rpc/code-tools"),
    ("POST", "/rpc/installs"),
    ("GET", "/rpc/installs"),
    ("GET", "/rpc/installs/{skillId}"),
    ("POST", "/rpc/installs/{skillId}/accept"),
    ("DELETE", "/rpc/installs/{skillId}"),
    ("GET", "/rpc/catalog/{skillId}"),
    ("GET", "/rpc/catalog/{skillId}/package"),
    ("POST", "/rpc/admin/publishers"),
    ("GET", "/rpc/admin/publishers"),
    ("POST", "/rpc/admin/publishers/{publisherId}/keys"),
    ("POST", "/rpc/admin/publishers/{publisherId}/keys/{keyId}/revoke"),
    ("GET", "/rpc/admin/releases"),
    ("GET", "/rpc/admin/releases/{releaseId}"),
    ("POST", "/rpc/admin/releases/{releaseId}/decision"),
    ("POST", "/rpc/installs"),
    ("GET", "/rpc/installs"),
    ("GET", "/rpc/installs/{skillId}"),
    ("POST", "/rpc/installs/{skillId}/accept"),
    ("DELETE", "/rpc/installs/{skillId}"),
    ("GET", "/rpc/capabilities"),
    ("GET", "/rpc/capabilities/protocol"),
    ("GET", "/rpc/admin/audit-events"),
    ("GET", "/rpc/approvals"),
    ("POST", "/rpc/approvals/{approvalId}"),
    ("POST", "/rpc/hosted-endpoints"),
    ("GET", "/rpc/hosted-endpoints"),
    ("GET", "/rpc/hosted-endpoints/{endpointId}"),
    ("PATCH", "/rpc/hosted-endpoints/{endpointId}"),
    ("DELETE", "/rpc/hosted-endpoints/{endpointId}"),
    ("POST", "/rpc/hosted-endpoints/{endpointId}/calls"),
    ("POST", "/rpc/hosted-endpoints/{endpointId}/refresh"),
    ("POST", "/rpc/hosted-endpoints/{endpointId}/snapshot/accept"),
)

PUBLIC_ROUTES = {("GET", "/rpc/health")}
# docs/contract.md "The MCP face": the MCP face, the one route outside /rpc/ (behind the same JWT authorizer).
MCP_ROUTES: tuple[tuple[str, str], ...] = (("POST", "/mcp"),)


def route_owners() -> dict[tuple[str, str], str]:
    """Which function serves each route, from the one declaration (skillcore/api/route_table.py): its groups'
    routes and its own gateway routes (POST /mcp)."""
    owners = {(route.method, route.path): logical_id for logical_id in route_table.http_functions()
              for route in route_table.routes(logical_id).operations}
    for logical_id, served in route_table.FUNCTIONS.items():
        for method, path in (route.split(" ", 1) for route in served.gateway):
            if not path.endswith("+}"):
                owners[(method, path)] = logical_id
    return owners


ROUTE_OWNERS = route_owners()
# Chat turns, automation runs (in the worker) and the capability draft generator (RpcFunction's routes and
# McpFunction's tools) call the model.
BEDROCK_FUNCTIONS = {"ChatTurnFunction", "McpFunction", "RpcFunction", "WorkerFunction"}
# DynamoDB item-level actions a function may be granted. TransactWriteItems/TransactGetItems are not IAM
# actions: transactions are authorised per item by PutItem/UpdateItem/DeleteItem/ConditionCheckItem/GetItem.
DYNAMODB_ITEM_ACTIONS = {
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
}
INDEX_ACTIONS = {"dynamodb:Query", "dynamodb:Scan"}


@pytest.fixture
def template() -> Template:
    return copy.deepcopy(load_template())


# ------------------------------------------------------------------------------------------- helpers


def functions(template: Template) -> dict[str, dict[str, Any]]:
    return {
        name: resource
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def http_routes(template: Template) -> list[dict[str, Any]]:
    """Every HttpApi event: function, method, path, the API it names and its effective authorizer."""
    api = template["Resources"]["HttpApi"]["Properties"]
    default_authorizer = api.get("Auth", {}).get("DefaultAuthorizer")
    routes = []
    for name, resource in functions(template).items():
        for event_name, event in resource["Properties"].get("Events", {}).items():
            if event["Type"] != "HttpApi":
                continue
            props = event.get("Properties", {})
            routes.append({
                "function": name,
                "event": event_name,
                "method": props.get("Method", "ANY").upper(),
                "path": props.get("Path", "$default"),
                "api": props.get("ApiId"),
                "authorizer": props.get("Auth", {}).get("Authorizer", default_authorizer),
            })
    return routes


def _match(pattern: str, path: str) -> tuple[int, int] | None:
    """HTTP API path matching: None, or (greedy, literal segments) for ranking. `{x}` is one segment,
    a trailing `{x+}` one or more."""
    want = pattern.strip("/").split("/")
    have = path.strip("/").split("/")
    greedy = want[-1].startswith("{") and want[-1].endswith("+}")
    fixed = want[:-1] if greedy else want
    if greedy and len(have) <= len(fixed):
        return None
    if not greedy and len(have) != len(fixed):
        return None
    literals = 0
    for segment, value in zip(fixed, have, strict=False):
        if segment.startswith("{") and segment.endswith("}"):
            continue
        if segment != value:
            return None
        literals += 1
    return (1 if greedy else 0, literals)


def resolve(routes: list[dict[str, Any]], method: str, path: str) -> dict[str, Any] | None:
    """The route API Gateway picks: the most specific path (non-greedy, then most literal segments), a
    route for the method before ANY, `$default` last."""
    ranked = []
    for route in routes:
        if route["method"] not in (method, "ANY"):
            continue
        if route["path"] == "$default":
            ranked.append(((2, 0, 1), route))
            continue
        match = _match(route["path"], path)
        if match is not None:
            greedy, literals = match
            ranked.append(((greedy, -literals, 0 if route["method"] == method else 1), route))
    return min(ranked, key=lambda item: item[0])[1] if ranked else None


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "id-1", path)


def statements(resource: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for policy in resource["Properties"].get("Policies", []):
        if isinstance(policy, dict):
            yield from policy.get("Statement", [])


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def sub_text(value: Any) -> str | None:
    if isinstance(value, dict) and "Fn::Sub" in value:
        sub = value["Fn::Sub"]
        return sub[0] if isinstance(sub, list) else sub
    return None


def referenced_ids(value: Any) -> set[str]:
    """Logical ids a value points at through Ref, Fn::GetAtt or ${...} in Fn::Sub (pseudo parameters out)."""
    found: set[str] = set()
    if isinstance(value, dict):
        if "Ref" in value:
            found.add(value["Ref"])
        elif "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            found.add(target[0] if isinstance(target, list) else target.split(".")[0])
        elif (text := sub_text(value)) is not None:
            found.update(name.split(".")[0] for name in re.findall(r"\$\{([^}!]+)\}", text))
        else:
            for item in value.values():
                found |= referenced_ids(item)
    elif isinstance(value, list):
        for item in value:
            found |= referenced_ids(item)
    return {name for name in found if not name.startswith("AWS::")}


def index_arn_table(resource: Any) -> str | None:
    text = sub_text(resource)
    match = re.fullmatch(r"\$\{(\w+)\.Arn\}/index/.+", text or "")
    return match.group(1) if match else None


# ------------------------------------------------------------------------------------------- checkers


def route_problems(template: Template) -> list[str]:
    routes = http_routes(template)
    problems = []
    for method, path in CONTRACT_ROUTES + MCP_ROUTES:
        route = resolve(routes, method, concrete(path))
        owner = ROUTE_OWNERS.get((method, path))
        if owner is None:
            problems.append(f"{method} {path}: no function of the route table serves it")
        elif route is None:
            problems.append(f"{method} {path}: no route serves it")
        elif route["function"] != owner:
            problems.append(f"{method} {path}: served by {route['function']}, not {owner}")
    return problems


def event_problems(template: Template) -> list[str]:
    """template.yaml's HttpApi events are the route table's API routes (route_table.api_routes): each function's
    routes one event each, or its greedy route and its routes that need no token."""
    declared = {(r["function"], r["method"], r["path"], r["authorizer"] not in (None, "NONE"))
                for r in http_routes(template)}
    expected = {(r.function, r.method, r.path, r.auth) for r in route_table.api_routes()}
    problems = [f"{function} {method} {path}{'' if auth else ' (no token)'}: in the route table, no such event"
                for function, method, path, auth in sorted(expected - declared)]
    problems += [f"{function} {method} {path}{'' if auth else ' (no token)'}: an event the route table does not declare"
                 for function, method, path, auth in sorted(declared - expected)]
    return problems


def auth_problems(template: Template) -> list[str]:
    api = template["Resources"]["HttpApi"]["Properties"]
    auth = api.get("Auth", {})
    problems = []
    default = auth.get("DefaultAuthorizer")
    jwt = auth.get("Authorizers", {}).get(default or "", {}).get("JwtConfiguration")
    if not jwt or not jwt.get("issuer") or not jwt.get("audience"):
        problems.append(f"HttpApi: default authorizer {default!r} is not a JWT authorizer with issuer and audience")
    for route in http_routes(template):
        key = (route["method"], route["path"])
        where = f"{route['function']}.{route['event']} {route['method']} {route['path']}"
        if route["api"] != {"Ref": "HttpApi"}:
            problems.append(f"{where}: not on HttpApi (an implicit API has no authorizer)")
        if route["path"] == "$default" or not (route["path"].startswith("/rpc/") or key in MCP_ROUTES):
            problems.append(f"{where}: outside /rpc/")
        if key in PUBLIC_ROUTES and route["authorizer"] != "NONE":
            problems.append(f"{where}: must not need a token")
        if key not in PUBLIC_ROUTES and route["authorizer"] != default:
            problems.append(f"{where}: authorizer {route['authorizer']!r}, expected {default!r}")
    return problems


def table_policy_problems(template: Template) -> list[str]:
    tables = table_resources(template)
    problems = []
    for name, resource in functions(template).items():
        queried: set[str] = set()
        index_grants: set[str] = set()
        for statement in statements(resource):
            actions = set(as_list(statement["Action"]))
            dynamo = {action for action in actions if action.startswith("dynamodb:")}
            if not dynamo:
                continue
            if unknown := dynamo - DYNAMODB_ITEM_ACTIONS:
                problems.append(f"{name}: {sorted(unknown)} are not item-level DynamoDB IAM actions")
            for arn in as_list(statement["Resource"]):
                refs = referenced_ids(arn)
                if not refs:
                    problems.append(f"{name}: DynamoDB grant on {arn!r}, not on a declared table")
                for ref in refs - set(tables):
                    problems.append(f"{name}: policy names {ref}, which is not a declared table")
                if (table := index_arn_table(arn)) is not None:
                    index_grants.add(table)
                    if extra := dynamo - INDEX_ACTIONS:
                        problems.append(f"{name}: {sorted(extra)} on {table}'s indexes (only Query/Scan apply)")
                elif "dynamodb:Query" in dynamo:
                    queried |= refs
        for table in sorted(queried & set(tables)):
            props = tables[table]
            if (props.get("LocalSecondaryIndexes") or props.get("GlobalSecondaryIndexes")) and table not in index_grants:
                problems.append(f"{name}: may Query {table} but not its indexes (${{{table}.Arn}}/index/*)")
    return problems


def ungranted_table_problems(template: Template) -> list[str]:
    """A table no function may touch is dead, or (more likely) a function is missing its grant."""
    granted: set[str] = set()
    for resource in functions(template).values():
        for statement in statements(resource):
            if any(str(action).startswith("dynamodb:") for action in as_list(statement["Action"])):
                granted |= referenced_ids(statement["Resource"])
    return [f"{table}: no function is granted access to it" for table in table_resources(template)
            if table not in granted]


def table_problems(template: Template) -> list[str]:
    problems = []
    for name, props in table_resources(template).items():
        resource = template["Resources"][name]
        if props.get("BillingMode") != "PAY_PER_REQUEST":
            problems.append(f"{name}: not on-demand")
        if props.get("PointInTimeRecoverySpecification", {}).get("PointInTimeRecoveryEnabled") is not True:
            problems.append(f"{name}: no point-in-time recovery")
        if resource.get("DeletionPolicy") != "Retain" or resource.get("UpdateReplacePolicy") != "Retain":
            problems.append(f"{name}: not retained on delete/replace")
        ttl = props.get("TimeToLiveSpecification")
        if ttl is not None and (ttl.get("Enabled") is not True or not ttl.get("AttributeName")):
            problems.append(f"{name}: TTL declared but not enabled on an attribute")
    return problems


def env_problems(template: Template) -> list[str]:
    tables = set(table_resources(template))
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    problems = []
    seen: set[str] = set()
    for var, value in variables.items():
        if not var.startswith("SKILLS_TABLE_"):
            continue
        target = value.get("Ref") if isinstance(value, dict) else None
        if target not in tables:
            problems.append(f"{var}: {value!r} is not a Ref to a declared table")
            continue
        seen.add(target)
        expected = "SKILLS_TABLE_" + re.sub(r"(?<!^)(?=[A-Z])", "_", target.removesuffix("Table")).upper()
        if var != expected:
            problems.append(f"{var}: names {target}, expected {expected}")
    problems += [f"{table}: no SKILLS_TABLE_* variable" for table in sorted(tables - seen)]
    return problems


def settings_table_problems(template: Template) -> list[str]:
    """Settings.from_env falls back to a made-up name for a table the template does not pass in: in Lambda
    that is a table that does not exist."""
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    declared = {var.removeprefix("SKILLS_TABLE_").lower() for var in variables if var.startswith("SKILLS_TABLE_")}
    problems = [f"settings table {name!r}: no SKILLS_TABLE_{name.upper()} in template.yaml" for name in TABLES
                if name not in declared]
    problems += [f"SKILLS_TABLE_{name.upper()}: not a table skillcore.settings reads" for name in sorted(declared)
                 if name not in TABLES]
    return problems


# Honoured only in the local stack and tests (skillcore/egress/settings.py): the template sets none of them, nor
# SKILLS_LOCAL, the flag that turns them on.
LOCAL_ONLY_VARIABLES = ("SKILLS_LOCAL", ALLOWED_HOSTS_VARIABLE, *EGRESS_LOCAL_VARIABLES)


def local_only_problems(template: Template) -> list[str]:
    """Every place in the template (any function's Environment, Globals, parameters, strings) that names one."""
    problems: list[str] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in LOCAL_ONLY_VARIABLES:
                    problems.append(f"{where}.{key}: a local-only setting")
                walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")
        elif isinstance(value, str):
            problems.extend(f"{where}: mentions {name}" for name in LOCAL_ONLY_VARIABLES
                            if re.search(rf"\b{name}\b", value))

    walk(template, "template")
    return problems


def bedrock_problems(template: Template) -> list[str]:
    problems = []
    granted: set[str] = set()
    for name, resource in functions(template).items():
        for statement in statements(resource):
            actions = as_list(statement["Action"])
            if not any(str(action).startswith("bedrock:") for action in actions):
                continue
            granted.add(name)
            if actions != ["bedrock:InvokeModel"]:
                problems.append(f"{name}: Bedrock actions {actions}, expected only bedrock:InvokeModel")
            condition = statement.get("Condition")
            for arn in as_list(statement["Resource"]):
                text = sub_text(arn) or ""
                pinned_by_resource = "${BedrockModelId}" in text
                pinned_by_condition = (
                    condition is not None
                    and "${BedrockModelId}" in str(condition)
                    and re.fullmatch(r"arn:\$\{AWS::Partition\}:bedrock:\*::foundation-model/\*", text) is not None
                )
                if not (pinned_by_resource or pinned_by_condition):
                    problems.append(f"{name}: Bedrock grant on {arn!r} is not scoped to BedrockModelId")
    if granted != BEDROCK_FUNCTIONS:
        problems.append(f"Bedrock granted to {sorted(granted)}, expected {sorted(BEDROCK_FUNCTIONS)}")
    return problems


def condition_problems(template: Template) -> list[str]:
    """A reference to a conditional resource must sit under the same Condition, or inside an Fn::If on it."""
    conditional = {
        name: resource["Condition"] for name, resource in template["Resources"].items() if "Condition" in resource
    }
    problems: list[str] = []

    def walk(value: Any, where: str, guards: frozenset[str]) -> None:
        if isinstance(value, dict):
            if "Fn::If" in value:
                condition, when_true, when_false = value["Fn::If"]
                walk(when_true, where, guards | {condition})
                walk(when_false, where, guards)
                return
            for ref in referenced_ids({k: v for k, v in value.items() if k in ("Ref", "Fn::GetAtt", "Fn::Sub")}):
                if ref in conditional and conditional[ref] not in guards:
                    problems.append(f"{where}: uses {ref} outside Condition {conditional[ref]}")
            for key, item in value.items():
                if key not in ("Ref", "Fn::GetAtt"):
                    walk(item, where, guards)
        elif isinstance(value, list):
            for item in value:
                walk(item, where, guards)

    for section in ("Resources", "Outputs"):
        for name, body in template.get(section, {}).items():
            guards = frozenset([body["Condition"]]) if "Condition" in body else frozenset()
            walk({k: v for k, v in body.items() if k != "Condition"}, f"{section}.{name}", guards)
    walk(template.get("Globals", {}), "Globals", frozenset())
    return problems


# ------------------------------------------------------------------------------------------- the template


def test_every_contract_route_is_served(template: Template) -> None:
    assert route_problems(template) == []


def test_the_http_api_events_are_the_route_tables(template: Template) -> None:
    assert event_problems(template) == []


def test_only_health_is_public_and_everything_else_needs_the_jwt(template: Template) -> None:
    assert auth_problems(template) == []


def test_health_by_another_method_still_needs_a_token(template: Template) -> None:
    route = resolve(http_routes(template), "POST", "/rpc/health")
    assert route is not None and route["authorizer"] == "JwtAuthorizer"


def test_jwt_issuer_and_audience_follow_the_cognito_condition(template: Template) -> None:
    assert template["Conditions"]["UseCognito"] == {"Fn::Equals": [{"Ref": "JwtIssuer"}, ""]}
    jwt = template["Resources"]["HttpApi"]["Properties"]["Auth"]["Authorizers"]["JwtAuthorizer"]
    issuer, audience = jwt["JwtConfiguration"]["issuer"], jwt["JwtConfiguration"]["audience"]
    assert issuer["Fn::If"][0] == "UseCognito" and issuer["Fn::If"][2] == {"Ref": "JwtIssuer"}
    assert audience == [
        {"Fn::If": ["UseCognito", {"Ref": "UserPoolClient"}, {"Ref": "JwtAudience"}]},
        {"Fn::If": ["UseCognito", {"Ref": "HostUserPoolClient"},
                    {"Fn::If": ["HasHostAudience", {"Ref": "JwtHostAudience"}, {"Ref": "AWS::NoValue"}]}]},
    ]
    for name in ("UserPool", "UserPoolClient", "HostUserPoolClient", "HostResourceServer", "AdminGroup"):
        assert template["Resources"][name]["Condition"] == "UseCognito"


def test_agent_hosts_have_their_own_app_client_and_scope_and_the_functions_know_it(template: Template) -> None:
    """Two kinds of caller: the host app client asks for the skillcore/host scope, and every function reads
    the host clients (SKILLS_HOST_CLIENT_IDS) to tell a host's token from a person's."""
    server = template["Resources"]["HostResourceServer"]["Properties"]
    assert server["Identifier"] == "skillcore" and [s["ScopeName"] for s in server["Scopes"]] == ["host"]
    client = template["Resources"]["HostUserPoolClient"]
    assert client["DependsOn"] == "HostResourceServer"
    assert "skillcore/host" in client["Properties"]["AllowedOAuthScopes"]
    assert client["Properties"].get("GenerateSecret") is False
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["SKILLS_HOST_CLIENT_IDS"] == {
        "Fn::If": ["UseCognito", {"Ref": "HostUserPoolClient"}, {"Ref": "JwtHostAudience"}]}
    assert template["Resources"]["AdminGroup"]["Properties"]["GroupName"] == "admin"


def test_conditional_resources_are_only_used_under_their_condition(template: Template) -> None:
    assert condition_problems(template) == []


def test_policies_name_only_declared_tables_and_cover_their_indexes(template: Template) -> None:
    assert table_policy_problems(template) == []


def test_every_table_is_granted_to_some_function(template: Template) -> None:
    assert ungranted_table_problems(template) == []


def test_tables_are_on_demand_with_point_in_time_recovery(template: Template) -> None:
    assert table_problems(template) == []


def test_table_variables_reference_declared_tables(template: Template) -> None:
    assert env_problems(template) == []


def test_every_table_the_settings_read_is_passed_in_by_the_template(template: Template) -> None:
    assert settings_table_problems(template) == []


def test_the_template_sets_no_local_only_setting(template: Template) -> None:
    assert local_only_problems(template) == []


def test_bedrock_is_scoped_to_the_model_parameter(template: Template) -> None:
    assert bedrock_problems(template) == []


def test_scan_runs_every_five_minutes_without_retries_or_overlap(template: Template) -> None:
    scan = template["Resources"]["ScanFunction"]["Properties"]
    (event,) = scan["Events"].values()
    assert event["Type"] == "Schedule"
    assert event["Properties"]["Schedule"] == "rate(5 minutes)"
    assert event["Properties"]["RetryPolicy"]["MaximumRetryAttempts"] == 0
    assert scan["EventInvokeConfig"]["MaximumRetryAttempts"] == 0
    assert scan["Timeout"] < 300


def test_layer_is_built_for_the_functions_runtime_and_architecture(template: Template) -> None:
    function_globals = template["Globals"]["Function"]
    layer = template["Resources"]["SkillcoreLayer"]
    assert function_globals["Layers"] == [{"Ref": "SkillcoreLayer"}]
    assert layer["Metadata"]["BuildMethod"] == function_globals["Runtime"] == "python3.12"
    assert layer["Properties"]["ContentUri"].rstrip("/") == "layers/skillcore"
    (arch,) = function_globals["Architectures"]
    assert layer["Metadata"]["BuildArchitecture"] == arch
    assert layer["Properties"]["CompatibleArchitectures"] == [arch]
    for name, function in functions(template).items():
        assert "Architectures" not in function["Properties"], f"{name} overrides the layer's architecture"
        assert "Runtime" not in function["Properties"], f"{name} overrides the layer's runtime"


def test_contract_routes_are_the_operations_of_openapi_json() -> None:
    """The template serves exactly what the code documents (docs/contract.md against the document is
    tests/unit/test_openapi.py's job, with its list of routes later issues build)."""
    document = json.loads((ROOT / "openapi.json").read_text(encoding="utf-8"))
    operations = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
    assert operations == set(CONTRACT_ROUTES), (
        sorted(operations ^ set(CONTRACT_ROUTES)), "update CONTRACT_ROUTES and template.yaml together"
    )


# ------------------------------------------------------------------------------------------- broken copies


def test_a_missing_route_is_found(template: Template) -> None:
    del template["Resources"]["ChatTurnFunction"]["Properties"]["Events"]["PostMessage"]
    assert route_problems(template) == [
        "POST /rpc/conversations/{conversationId}/messages: served by RpcFunction, not ChatTurnFunction"
    ]
    del template["Resources"]["RpcFunction"]["Properties"]["Events"]["Rpc"]
    assert "GET /rpc/me: no route serves it" in route_problems(template)


def test_an_event_missing_from_or_extra_to_the_route_table_is_found(template: Template) -> None:
    events = template["Resources"]["HostedFunction"]["Properties"]["Events"]
    events["Extra"] = {"Type": "HttpApi", "Properties": {"ApiId": {"Ref": "HttpApi"}, "Path": "/rpc/extra",
                                                           "Method": "GET"}}
    del events["DecideApproval"]
    assert event_problems(template) == [
        "HostedFunction POST /rpc/approvals/{approvalId}: in the route table, no such event",
        "HostedFunction GET /rpc/extra: an event the route table does not declare",
    ]
    del template["Resources"]["RpcFunction"]["Properties"]["Events"]["Health"]["Properties"]["Auth"]
    assert "RpcFunction GET /rpc/health (no token): in the route table, no such event" in event_problems(template)


def test_an_unauthenticated_route_is_found(template: Template) -> None:
    events = template["Resources"]["RpcFunction"]["Properties"]["Events"]
    events["Rpc"]["Properties"]["Auth"] = {"Authorizer": "NONE"}
    assert auth_problems(template) == ["RpcFunction.Rpc ANY /rpc/{proxy+}: authorizer 'NONE', expected 'JwtAuthorizer'"]


def test_an_mcp_route_without_the_jwt_or_served_by_another_function_is_found(template: Template) -> None:
    events = template["Resources"]["McpFunction"]["Properties"]["Events"]
    events["Mcp"]["Properties"]["Auth"] = {"Authorizer": "NONE"}
    assert auth_problems(template) == ["McpFunction.Mcp POST /mcp: authorizer 'NONE', expected 'JwtAuthorizer'"]
    template["Resources"]["RpcFunction"]["Properties"]["Events"]["Mcp"] = events.pop("Mcp")
    assert "POST /mcp: served by RpcFunction, not McpFunction" in route_problems(template)


def test_a_default_route_or_an_implicit_api_is_found(template: Template) -> None:
    events = template["Resources"]["RpcFunction"]["Properties"]["Events"]
    events["Fallback"] = {"Type": "HttpApi", "Properties": {"ApiId": {"Ref": "HttpApi"}, "Auth": {"Authorizer": "NONE"}}}
    events["Implicit"] = {"Type": "HttpApi", "Properties": {"Path": "/rpc/x", "Method": "GET"}}
    problems = auth_problems(template)
    assert any("Fallback" in p and "outside /rpc/" in p for p in problems)
    assert any("Fallback" in p and "authorizer 'NONE'" in p for p in problems)
    assert any("Implicit" in p and "implicit API" in p for p in problems)


def test_a_public_health_route_that_needs_a_token_is_found(template: Template) -> None:
    del template["Resources"]["RpcFunction"]["Properties"]["Events"]["Health"]["Properties"]["Auth"]
    assert auth_problems(template) == ["RpcFunction.Health GET /rpc/health: must not need a token"]


def test_unknown_tables_missing_index_grants_and_transaction_actions_are_found(template: Template) -> None:
    rpc = template["Resources"]["RpcFunction"]
    statements = rpc["Properties"]["Policies"][0]["Statement"]
    items, indexes = (next(s for s in statements if s.get("Sid") == sid) for sid in ("Items", "Indexes"))
    items["Resource"].append({"Fn::GetAtt": ["GhostTable", "Arn"]})
    items["Action"].append("dynamodb:TransactWriteItems")
    indexes["Action"] = ["dynamodb:Query", "dynamodb:PutItem"]
    problems = table_policy_problems(template)
    assert "RpcFunction: policy names GhostTable, which is not a declared table" in problems
    assert "RpcFunction: ['dynamodb:TransactWriteItems'] are not item-level DynamoDB IAM actions" in problems
    assert "RpcFunction: ['dynamodb:PutItem'] on MessagesTable's indexes (only Query/Scan apply)" in problems
    rpc["Properties"]["Policies"][0]["Statement"].remove(indexes)
    assert "RpcFunction: may Query MessagesTable but not its indexes (${MessagesTable.Arn}/index/*)" in (
        table_policy_problems(template)
    )


def test_a_table_no_function_may_use_is_found(template: Template) -> None:
    for name in ("RpcFunction", "ChatTurnFunction"):
        statements = template["Resources"][name]["Properties"]["Policies"][0]["Statement"]
        items = next(s for s in statements if s.get("Sid") == "Items")
        items["Resource"] = [arn for arn in items["Resource"] if referenced_ids(arn) != {"RunsTable"}]
    assert "RunsTable: no function is granted access to it" in ungranted_table_problems(template)


def test_a_table_without_recovery_or_on_demand_is_found(template: Template) -> None:
    runs = template["Resources"]["RunsTable"]
    runs["Properties"]["BillingMode"] = "PROVISIONED"
    del runs["Properties"]["PointInTimeRecoverySpecification"]
    runs["Properties"]["TimeToLiveSpecification"]["Enabled"] = False
    assert table_problems(template) == [
        "RunsTable: not on-demand",
        "RunsTable: no point-in-time recovery",
        "RunsTable: TTL declared but not enabled on an attribute",
    ]


def test_a_variable_for_a_missing_table_is_found(template: Template) -> None:
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    variables["SKILLS_TABLE_RUNS"] = {"Ref": "RunTable"}
    problems = env_problems(template)
    assert "SKILLS_TABLE_RUNS: {'Ref': 'RunTable'} is not a Ref to a declared table" in problems
    assert "RunsTable: no SKILLS_TABLE_* variable" in problems
    del variables["SKILLS_TABLE_RUNS"]
    variables["SKILLS_TABLE_GHOSTS"] = {"Ref": "RunsTable"}
    problems = settings_table_problems(template)
    assert "settings table 'runs': no SKILLS_TABLE_RUNS in template.yaml" in problems
    assert "SKILLS_TABLE_GHOSTS: not a table skillcore.settings reads" in problems


def test_an_unscoped_bedrock_grant_is_found(template: Template) -> None:
    chat = template["Resources"]["ChatTurnFunction"]
    bedrock = [s for s in statements(chat) if s["Action"] == "bedrock:InvokeModel"]
    bedrock[0]["Resource"].append("*")
    bedrock[1]["Condition"] = {"StringLike": {"bedrock:InferenceProfileArn": "*"}}
    template["Resources"]["WorkerFunction"]["Properties"]["Policies"] = [
        {"Statement": [{"Effect": "Allow", "Action": ["bedrock:*"], "Resource": "*"}]}
    ]
    rpc = template["Resources"]["RpcFunction"]["Properties"]["Policies"][0]
    rpc["Statement"] = [s for s in rpc["Statement"] if s["Action"] != "bedrock:InvokeModel"]
    problems = bedrock_problems(template)
    assert "ChatTurnFunction: Bedrock grant on '*' is not scoped to BedrockModelId" in problems
    assert any(p.startswith("ChatTurnFunction: Bedrock grant on {'Fn::Sub': 'arn:${AWS::Partition}:bedrock:*::") for p in problems)
    assert "WorkerFunction: Bedrock actions ['bedrock:*'], expected only bedrock:InvokeModel" in problems
    assert "Bedrock granted to ['ChatTurnFunction', 'McpFunction', 'WorkerFunction'], expected ['ChatTurnFunction', 'McpFunction', 'RpcFunction', 'WorkerFunction']" in problems


def test_an_unguarded_use_of_a_conditional_resource_is_found(template: Template) -> None:
    del template["Outputs"]["UserPoolId"]["Condition"]
    template["Outputs"]["JwtAudienceId"]["Value"] = {"Ref": "UserPoolClient"}
    assert condition_problems(template) == [
        "Outputs.JwtAudienceId: uses UserPoolClient outside Condition UseCognito",
        "Outputs.UserPoolId: uses UserPool outside Condition UseCognito",
    ]


def test_a_local_only_setting_in_the_template_is_found(template: Template) -> None:
    template["Resources"]["RpcFunction"]["Properties"].setdefault("Environment", {}).setdefault("Variables", {})[
        "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES"] = "10.0.0.1"
    template["Globals"]["Function"]["Environment"]["Variables"]["SKILLS_LOCAL"] = "1"
    template["Outputs"]["Note"] = {"Value": {"Fn::Sub": "SKILLS_LOCAL_HOSTED_RESOLVE=a=${AWS::Region}"}}
    assert local_only_problems(template) == [
        "template.Globals.Function.Environment.Variables.SKILLS_LOCAL: a local-only setting",
        "template.Resources.RpcFunction.Properties.Environment.Variables.SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES: "
        "a local-only setting",
        "template.Outputs.Note.Value.Fn::Sub: mentions SKILLS_LOCAL_HOSTED_RESOLVE",
    ]


def test_route_resolution_prefers_the_specific_route() -> None:
    routes = [
        {"function": "A", "method": "ANY", "path": "/rpc/{proxy+}"},
        {"function": "B", "method": "POST", "path": "/rpc/conversations/{id}/messages"},
        {"function": "C", "method": "GET", "path": "/rpc/health"},
    ]
    assert resolve(routes, "POST", "/rpc/conversations/c1/messages")["function"] == "B"  # type: ignore[index]
    assert resolve(routes, "GET", "/rpc/conversations/c1/messages")["function"] == "A"  # type: ignore[index]
    assert resolve(routes, "GET", "/rpc/health")["function"] == "C"  # type: ignore[index]
    assert resolve(routes, "GET", "/rpc") is None
    assert resolve(routes, "GET", "/other/x") is None


# ------------------------------------------------------------------------------- reserved concurrency


def reserved_concurrency_problems(template: Template) -> list[str]:
    """Every function has a reserved concurrency of its own (a Number parameter, 0 meaning none, through a
    condition), so one function's flood cannot drain the others' executions; the defaults leave the account
    100 unreserved executions of the default 1,000, and the workers' reservation covers their queue's cap."""
    problems: list[str] = []
    parameters, conditions = template["Parameters"], template.get("Conditions", {})
    total = 0
    for name, resource in functions(template).items():
        value = resource["Properties"].get("ReservedConcurrentExecutions")
        branches = value.get("Fn::If") if isinstance(value, dict) else None
        if not branches or branches[2] != {"Ref": "AWS::NoValue"} or "Ref" not in branches[1]:
            problems.append(f"{name}: no ReservedConcurrentExecutions from a parameter")
            continue
        parameter = parameters.get(branches[1]["Ref"], {})
        if parameter.get("Type") != "Number" or int(parameter.get("Default", 0)) < 1:
            problems.append(f"{name}: {branches[1]['Ref']} is not a Number parameter with a positive default")
            continue
        if conditions.get(branches[0]) != {"Fn::Not": [{"Fn::Equals": [branches[1], 0]}]}:
            problems.append(f"{name}: {branches[0]} is not 'the parameter is not 0'")
        total += int(parameter["Default"])
        if name == "WorkerFunction" and int(parameter["Default"]) < int(parameters["WorkerMaxConcurrency"]["Default"]):
            problems.append("WorkerFunction: its reservation is below WorkerMaxConcurrency")
    if total > 900:
        problems.append(f"the defaults reserve {total} executions: fewer than 100 of 1,000 stay unreserved")
    return problems


def test_every_function_has_its_own_reserved_concurrency(template: Template) -> None:
    assert reserved_concurrency_problems(template) == []
    assert len(functions(template)) == 7


def test_a_function_without_a_reservation_or_a_greedy_default_is_found(template: Template) -> None:
    del template["Resources"]["HostedFunction"]["Properties"]["ReservedConcurrentExecutions"]
    template["Parameters"]["ChatTurnReservedConcurrency"]["Default"] = 900
    problems = reserved_concurrency_problems(template)
    assert any(p.startswith("HostedFunction:") for p in problems)
    assert any("unreserved" in p for p in problems)
