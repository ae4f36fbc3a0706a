"""template.yaml's key of hosted endpoint secrets (HostedSecretsKey): who may use it, for what, in which context.

The key policy leaves the account root the key's administration and nothing else; it names the one role that
may generate data keys (HostedFunction's: it seals an endpoint's URL and token on registration) and the roles
that may decrypt (HostedFunction's, ChatTurnFunction's and McpFunction's: each calls hosted tools, so each opens
sealed secrets), always with the encryption context hosted/secrets.py passes (`context_of`: exactly `userId`
and `endpointId`, both present). No other role or policy of the template may use a KMS key at all.

As in test_template.py, each rule is a checker returning its problems, run on the real template (none) and on
broken copies (the problem is found).
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterator
from typing import Any

import pytest

from skillcore.hosted.secrets import context_of
from skillcore_local.template import load_template

Template = dict[str, Any]

KEY = "HostedSecretsKey"
ADMIN_ACTIONS = frozenset({
    "kms:Create*", "kms:Describe*", "kms:Enable*", "kms:List*", "kms:Put*", "kms:Update*", "kms:Revoke*",
    "kms:Disable*", "kms:Get*", "kms:Delete*", "kms:TagResource", "kms:UntagResource", "kms:ScheduleKeyDeletion",
    "kms:CancelKeyDeletion",
})
# The actions that open or make secrets with the key: none may be left to the account (to any IAM policy).
USE_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:Encrypt",
               "kms:ReEncryptFrom", "kms:ReEncryptTo")
# Who may do what with the key (the SAM-generated role of each function).
MAY = {
    "kms:GenerateDataKey": {"HostedFunctionRole"},
    "kms:Decrypt": {"HostedFunctionRole", "ChatTurnFunctionRole", "McpFunctionRole"},
}
CONTEXT_KEYS = sorted(context_of("u", "e"))  # the keys the code binds every data key to
CONDITION = {
    "ForAllValues:StringEquals": {"kms:EncryptionContextKeys": CONTEXT_KEYS},
    "Null": {f"kms:EncryptionContext:{key}": "false" for key in CONTEXT_KEYS},
}


@pytest.fixture
def template() -> Template:
    return copy.deepcopy(load_template())


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def target(value: Any) -> str | None:
    """The logical id of `!GetAtt X.Arn` / `!Ref X`; None for anything else."""
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        got = value["Fn::GetAtt"]
        return got[0] if isinstance(got, list) else str(got).split(".")[0]
    if isinstance(value, dict) and "Ref" in value:
        return str(value["Ref"])
    return None


def normalised(condition: Any) -> Any:
    """A condition with its values as sorted lists of strings, so `[a, b]`, `[b, a]` and `"false"`/`false` compare."""
    if isinstance(condition, dict):
        return {key: normalised(value) for key, value in condition.items()}
    return sorted(str(v).lower() if isinstance(v, bool) else str(v) for v in as_list(condition))


def matches(pattern: str, action: str) -> bool:
    return pattern == "*" or fnmatch.fnmatchcase(action.lower(), pattern.lower())


def iam_statements(template: Template) -> Iterator[tuple[str, set[str], dict[str, Any]]]:
    """(where, the roles it applies to, statement) for every IAM statement of the template: functions' Policies
    (their SAM role), AWS::IAM::Policy and ManagedPolicy resources (their Roles), and AWS::IAM::Role resources."""
    for name, resource in template["Resources"].items():
        kind, props = resource["Type"], resource.get("Properties") or {}
        if kind == "AWS::Serverless::Function":
            for policy in props.get("Policies") or []:
                if isinstance(policy, dict):
                    for statement in policy.get("Statement") or []:
                        yield name, {f"{name}Role"}, statement
        elif kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            roles = {target(role) or str(role) for role in as_list(props.get("Roles") or [])}
            for statement in (props.get("PolicyDocument") or {}).get("Statement") or []:
                yield name, roles, statement
        elif kind == "AWS::IAM::Role":
            for policy in props.get("Policies") or []:
                for statement in (policy.get("PolicyDocument") or {}).get("Statement") or []:
                    yield name, {name}, statement


# ------------------------------------------------------------------------------------------- checkers


def key_policy_problems(template: Template) -> list[str]:
    problems: list[str] = []
    key = template["Resources"][KEY]["Properties"]
    statements = key["KeyPolicy"]["Statement"]
    granted: dict[str, set[str]] = {action: set() for action in MAY}
    administers = 0
    for statement in statements:
        sid = statement.get("Sid", "?")
        if statement.get("Effect") != "Allow":
            continue
        actions = set(as_list(statement.get("Action") or []))
        principals = as_list((statement.get("Principal") or {}).get("AWS") or statement.get("Principal"))
        texts = [p.get("Fn::Sub") if isinstance(p, dict) and "Fn::Sub" in p else p for p in principals]
        if any(isinstance(text, str) and text.endswith(":root") for text in texts):
            administers += 1
            if actions != ADMIN_ACTIONS:
                problems.append(f"{sid}: the account root must have the administration actions only, "
                                f"not {sorted(actions ^ ADMIN_ACTIONS)}")
            if len(principals) != 1:
                problems.append(f"{sid}: the administration statement names more than the account root")
            problems += [f"{sid}: the account may {action} ({pattern})" for pattern in sorted(actions)
                         for action in USE_ACTIONS if matches(pattern, action)]
            continue
        roles = {target(p) for p in principals}
        if None in roles:
            problems.append(f"{sid}: a principal that is not a function role of this template: {principals}")
            continue
        for action in actions:
            if action not in MAY:
                problems.append(f"{sid}: {action} is no use of the key any function needs")
                continue
            granted[action] |= {role for role in roles if role}
        if normalised(statement.get("Condition")) != normalised(CONDITION):
            problems.append(f"{sid}: must require exactly the encryption context {CONTEXT_KEYS}, present")
    if administers != 1:
        problems.append(f"{administers} statements for the account root; one (administration) expected")
    for action, roles in MAY.items():
        if granted[action] != roles:
            problems.append(f"{action}: the key policy names {sorted(granted[action])}, not {sorted(roles)}")
    return problems


def iam_kms_problems(template: Template) -> list[str]:
    """Only the named roles hold a KMS use action in an IAM policy, only on the key, only with the context."""
    problems: list[str] = []
    granted: dict[str, set[str]] = {action: set() for action in MAY}
    for where, roles, statement in iam_statements(template):
        if statement.get("Effect") != "Allow":
            continue
        for pattern in as_list(statement.get("Action") or []):
            used = [action for action in USE_ACTIONS if matches(pattern, action)]
            if not used:
                continue
            resources = [target(r) for r in as_list(statement.get("Resource"))]
            if resources != [KEY]:
                problems.append(f"{where}: {pattern} on {statement.get('Resource')}, not only {KEY}")
            if normalised(statement.get("Condition")) != normalised(CONDITION):
                problems.append(f"{where}: {pattern} without exactly the encryption context {CONTEXT_KEYS}")
            for action in used:
                for role in roles:
                    if role not in MAY.get(action, set()):
                        problems.append(f"{where}: {role} may {action} ({pattern}), which only "
                                        f"{sorted(MAY.get(action, set()))} may")
                    else:
                        granted[action].add(role)
    for action, roles in MAY.items():
        if granted[action] != roles:
            problems.append(f"{action}: IAM grants it to {sorted(granted[action])}, not {sorted(roles)}")
    return problems


# ------------------------------------------------------------------------------------------- the template


def test_the_key_policy_names_who_seals_and_who_opens_and_leaves_the_account_administration(
        template: Template) -> None:
    assert key_policy_problems(template) == []


def test_only_the_named_roles_may_use_the_key_and_only_in_the_endpoint_context(template: Template) -> None:
    assert iam_kms_problems(template) == []


def test_the_conditions_name_the_context_the_code_passes() -> None:
    assert CONTEXT_KEYS == ["endpointId", "userId"]


# ------------------------------------------------------------------------------------------- broken copies


def key_statement(template: Template, sid: str) -> dict[str, Any]:
    return next(s for s in template["Resources"][KEY]["Properties"]["KeyPolicy"]["Statement"] if s["Sid"] == sid)


def test_a_root_with_every_kms_action_is_found(template: Template) -> None:
    key_statement(template, "AccountAdministers")["Action"] = "kms:*"
    problems = key_policy_problems(template)
    assert any("administration actions only" in p for p in problems)
    assert "AccountAdministers: the account may kms:Decrypt (kms:*)" in problems


def test_another_decrypting_role_or_a_missing_condition_in_the_key_policy_is_found(template: Template) -> None:
    opens = key_statement(template, "HostedCallersOpen")
    opens["Principal"]["AWS"].append({"Fn::GetAtt": ["RpcFunctionRole", "Arn"]})
    del opens["Condition"]["Null"]
    problems = key_policy_problems(template)
    assert "HostedCallersOpen: must require exactly the encryption context ['endpointId', 'userId'], present" in (
        problems)
    assert any(p.startswith("kms:Decrypt: the key policy names") and "RpcFunctionRole" in p for p in problems)


def test_a_sealing_chat_is_found(template: Template) -> None:
    seals = key_statement(template, "HostedFunctionSeals")
    seals["Principal"]["AWS"] = [seals["Principal"]["AWS"], {"Fn::GetAtt": ["ChatTurnFunctionRole", "Arn"]}]
    assert any(p.startswith("kms:GenerateDataKey: the key policy names") for p in key_policy_problems(template))


def test_an_iam_decrypt_for_another_function_or_without_the_context_is_found(template: Template) -> None:
    template["Resources"]["WorkerFunction"]["Properties"]["Policies"][0]["Statement"].append(
        {"Effect": "Allow", "Action": "kms:Decrypt*", "Resource": "*"})
    problems = iam_kms_problems(template)
    assert "WorkerFunction: WorkerFunctionRole may kms:Decrypt (kms:Decrypt*), which only " \
           "['ChatTurnFunctionRole', 'HostedFunctionRole', 'McpFunctionRole'] may" in problems
    assert "WorkerFunction: kms:Decrypt* on *, not only HostedSecretsKey" in problems
    assert "WorkerFunction: kms:Decrypt* without exactly the encryption context ['endpointId', 'userId']" in problems


def test_an_opening_policy_that_also_seals_is_found(template: Template) -> None:
    statement = template["Resources"]["HostedSecretsOpening"]["Properties"]["PolicyDocument"]["Statement"][0]
    statement["Action"] = ["kms:Decrypt", "kms:GenerateDataKey"]
    problems = iam_kms_problems(template)
    assert any("McpFunctionRole may kms:GenerateDataKey" in p for p in problems)
