"""template.yaml's Skills page: the bucket stays private, CloudFront serves the page and /rpc/*, the CSP is the
one the local gateway computes, the app client has the code flow, and no resource depends on itself.

As in test_template.py, each rule is a checker run on the real template (no problems) and on a broken copy
(the problem is found). The distribution's paths function runs in node: tests/harness/integration/
test_page_paths_function.py.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from skillcore_local.page import WEB_ROOT, content_security_policy
from skillcore_local.template import load_template

Template = dict[str, Any]

CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
CACHING_OPTIMIZED = "658327ea-f89d-4fab-a63d-7e88639e58f6"
ALL_VIEWER_EXCEPT_HOST = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
ALL_METHODS = {"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"}
COGNITO_ORIGIN = "https://${Domain}.auth.${AWS::Region}.amazoncognito.com"
EXAMPLE_ORIGIN = "https://example.auth.us-east-1.amazoncognito.com"


@pytest.fixture
def template() -> Template:
    return copy.deepcopy(load_template())


def resources(template: Template) -> dict[str, Any]:
    return template["Resources"]


def props(template: Template, name: str) -> dict[str, Any]:
    return resources(template)[name]["Properties"]


# ------------------------------------------------------------------------------------------- dependencies


def references(value: Any) -> set[str]:
    """Logical ids a value names: Ref, Fn::GetAtt, and the ${Name} / ${Name.Attr} of Fn::Sub."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "Ref" and isinstance(item, str):
                found.add(item)
            elif key == "Fn::GetAtt":
                found.add(item[0] if isinstance(item, list) else item.split(".")[0])
            elif key == "Fn::Sub":
                text, variables = (item, {}) if isinstance(item, str) else (item[0], item[1])
                names = {m.split(".")[0] for m in re.findall(r"\$\{([^}!]+)\}", text)}
                found |= names - set(variables)
                found |= references(variables)
            else:
                found |= references(item)
    elif isinstance(value, list):
        for item in value:
            found |= references(item)
    return found


def dependency_cycles(template: Template) -> list[list[str]]:
    """Every cycle among the resources' references and DependsOn (what CloudFormation rejects)."""
    names = set(resources(template))
    edges: dict[str, set[str]] = {}
    for name, resource in resources(template).items():
        depends = resource.get("DependsOn", [])
        targets = references(resource.get("Properties", {})) | set(
            [depends] if isinstance(depends, str) else depends
        )
        edges[name] = targets & names
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for name in sorted(names):
        if name not in state:
            visit(name)
    return cycles


def test_no_resource_depends_on_itself(template: Template) -> None:
    assert dependency_cycles(template) == []


def test_a_callback_url_from_the_distribution_is_a_cycle(template: Template) -> None:
    client = props(template, "UserPoolClient")
    client["CallbackURLs"] = [{"Fn::Sub": "https://${Distribution.DomainName}/skills/"}]
    cycles = dependency_cycles(template)
    assert cycles and {"HttpApi", "UserPoolClient", "Distribution"} <= set(cycles[0])


# ------------------------------------------------------------------------------------------- the CSP


def csp_branches(template: Template) -> tuple[str, str]:
    """(with this stack's Cognito pool, with an external issuer), the Cognito origin as EXAMPLE_ORIGIN."""
    config = props(template, "PageHeadersPolicy")["ResponseHeadersPolicyConfig"]
    csp = config["SecurityHeadersConfig"]["ContentSecurityPolicy"]
    assert csp["Override"] is True
    condition, cognito, external = csp["ContentSecurityPolicy"]["Fn::If"]
    assert condition == "UseCognito"
    text, variables = cognito["Fn::Sub"]
    assert variables == {"Domain": {"Ref": "UserPoolDomain"}}
    assert text.count(COGNITO_ORIGIN) == 1
    return text.replace(COGNITO_ORIGIN, EXAMPLE_ORIGIN), external


def csp_problems(template: Template) -> list[str]:
    index_html = (WEB_ROOT / "index.html").read_text(encoding="utf-8")
    cognito, external = csp_branches(template)
    problems = []
    if cognito != content_security_policy(index_html, connect=(EXAMPLE_ORIGIN,)):
        problems.append("the Cognito CSP is not content_security_policy(index.html, connect=(the domain,))")
    if external != content_security_policy(index_html):
        problems.append("the external-issuer CSP is not content_security_policy(index.html)")
    return problems


def test_the_page_csp_is_the_one_the_local_gateway_sends(template: Template) -> None:
    assert csp_problems(template) == []


def test_a_stale_import_map_hash_is_found(template: Template) -> None:
    config = props(template, "PageHeadersPolicy")["ResponseHeadersPolicyConfig"]
    csp = config["SecurityHeadersConfig"]["ContentSecurityPolicy"]["ContentSecurityPolicy"]
    csp["Fn::If"][1]["Fn::Sub"][0] = re.sub(
        r"'sha256-[^']+'", "'sha256-stale='", csp["Fn::If"][1]["Fn::Sub"][0]
    )
    assert csp_problems(template) == [
        "the Cognito CSP is not content_security_policy(index.html, connect=(the domain,))"
    ]


def test_the_page_sends_the_security_headers(template: Template) -> None:
    headers = props(template, "PageHeadersPolicy")["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    assert headers["StrictTransportSecurity"]["AccessControlMaxAgeSec"] >= 31536000
    assert headers["ContentTypeOptions"]["Override"] is True
    assert headers["FrameOptions"]["FrameOption"] == "DENY"
    assert headers["ReferrerPolicy"]["ReferrerPolicy"] == "no-referrer"


# ------------------------------------------------------------------------------------------- bucket, CloudFront


def bucket_problems(template: Template) -> list[str]:
    bucket = props(template, "PageBucket")
    problems = []
    block = bucket.get("PublicAccessBlockConfiguration", {})
    for key in ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"):
        if block.get(key) is not True:
            problems.append(f"public access: {key} is not true")
    if not bucket.get("BucketEncryption", {}).get("ServerSideEncryptionConfiguration"):
        problems.append("no default encryption")
    if bucket.get("OwnershipControls") != {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}:
        problems.append("object ownership is not enforced")
    statements = props(template, "PageBucketPolicy")["PolicyDocument"]["Statement"]
    tls = [
        s
        for s in statements
        if s["Effect"] == "Deny" and s.get("Condition") == {"Bool": {"aws:SecureTransport": "false"}}
    ]
    if not tls or tls[0]["Action"] != "s3:*" or tls[0]["Principal"] != "*":
        problems.append("no TLS-only statement")
    for s in statements:
        if s["Effect"] == "Allow":
            source = s.get("Condition", {}).get("StringEquals", {}).get("AWS:SourceArn")
            if s.get("Principal") != {
                "Service": "cloudfront.amazonaws.com"
            } or "Distribution" not in references(source):
                problems.append(f"{s.get('Sid')}: allows someone other than this distribution")
    return problems


def test_the_page_bucket_is_private_encrypted_and_tls_only(template: Template) -> None:
    assert bucket_problems(template) == []


def test_a_public_bucket_is_found(template: Template) -> None:
    props(template, "PageBucket")["PublicAccessBlockConfiguration"]["BlockPublicPolicy"] = False
    statements = props(template, "PageBucketPolicy")["PolicyDocument"]["Statement"]
    statements.append({"Sid": "Public", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject"})
    assert bucket_problems(template) == [
        "public access: BlockPublicPolicy is not true",
        "Public: allows someone other than this distribution",
    ]


def behaviours(template: Template) -> dict[str, dict[str, Any]]:
    config = props(template, "Distribution")["DistributionConfig"]
    found = {item["PathPattern"]: item for item in config.get("CacheBehaviors", [])}
    found["*"] = config["DefaultCacheBehavior"]
    return found


def distribution_problems(template: Template) -> list[str]:
    config = props(template, "Distribution")["DistributionConfig"]
    origins = {origin["Id"]: origin for origin in config["Origins"]}
    problems = []
    page, api = origins.get("page", {}), origins.get("api", {})
    if references(page.get("OriginAccessControlId")) != {"PageOriginAccessControl"}:
        problems.append("the page origin is not signed with the origin access control")
    oac = props(template, "PageOriginAccessControl")["OriginAccessControlConfig"]
    if (oac["SigningProtocol"], oac["SigningBehavior"], oac["OriginAccessControlOriginType"]) != (
        "sigv4",
        "always",
        "s3",
    ):
        problems.append("the origin access control does not always sign S3 requests with sigv4")
    if api.get("DomainName") != {"Fn::Sub": "${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}"}:
        problems.append("the api origin is not the HTTP API")
    if api.get("CustomOriginConfig", {}).get("OriginProtocolPolicy") != "https-only":
        problems.append("the api origin is not HTTPS only")
    found = behaviours(template)
    rpc = found.get("/rpc/*", {})
    if rpc.get("TargetOriginId") != "api":
        problems.append("/rpc/* does not go to the api")
    if rpc.get("CachePolicyId") != CACHING_DISABLED:
        problems.append("/rpc/* is cached")
    if rpc.get("OriginRequestPolicyId") != ALL_VIEWER_EXCEPT_HOST:
        problems.append("/rpc/* does not forward the viewer's headers (Authorization)")
    if set(rpc.get("AllowedMethods", [])) != ALL_METHODS:
        problems.append("/rpc/* does not allow every method")
    for pattern in ("*", "/skills/*"):
        behaviour = found.get(pattern, {})
        if behaviour.get("TargetOriginId") != "page" or behaviour.get("CachePolicyId") != CACHING_OPTIMIZED:
            problems.append(f"{pattern} is not the page's bucket")
        if behaviour.get("ResponseHeadersPolicyId") != {"Ref": "PageHeadersPolicy"}:
            problems.append(f"{pattern} lacks the page's security headers")
        if behaviour.get("ViewerProtocolPolicy") not in ("redirect-to-https", "https-only"):
            problems.append(f"{pattern} answers over HTTP")
    return problems


def test_cloudfront_serves_the_page_from_the_bucket_and_rpc_from_the_api(template: Template) -> None:
    assert distribution_problems(template) == []


def test_a_cached_rpc_without_authorization_is_found(template: Template) -> None:
    rpc = behaviours(template)["/rpc/*"]
    rpc["CachePolicyId"] = CACHING_OPTIMIZED
    del rpc["OriginRequestPolicyId"]
    rpc["AllowedMethods"] = ["GET", "HEAD"]
    assert distribution_problems(template) == [
        "/rpc/* is cached",
        "/rpc/* does not forward the viewer's headers (Authorization)",
        "/rpc/* does not allow every method",
    ]


# ------------------------------------------------------------------------------------------- Cognito


def test_the_app_client_has_the_code_flow_for_the_page_domain(template: Template) -> None:
    client = props(template, "UserPoolClient")
    page_url = {"Fn::Sub": "https://${PageDomain}/skills/"}
    no_value = {"Ref": "AWS::NoValue"}
    assert client["AllowedOAuthFlowsUserPoolClient"] == {"Fn::If": ["HasPageDomain", True, no_value]}
    assert client["AllowedOAuthFlows"] == {"Fn::If": ["HasPageDomain", ["code"], no_value]}
    assert client["AllowedOAuthScopes"] == {"Fn::If": ["HasPageDomain", ["openid", "email"], no_value]}
    assert client["CallbackURLs"] == {"Fn::If": ["HasPageDomain", [page_url], no_value]}
    assert client["LogoutURLs"] == {"Fn::If": ["HasPageDomain", [page_url], no_value]}
    assert client["SupportedIdentityProviders"] == ["COGNITO"]
    assert client["GenerateSecret"] is False  # a public client: the browser exchanges the code
    for name in ("UserPoolDomain", "ManagedLoginBranding"):
        assert resources(template)[name]["Condition"] == "UseCognito"
    assert props(template, "UserPoolDomain")["ManagedLoginVersion"] == 2


def test_the_outputs_publish_needs_exist(template: Template) -> None:
    outputs = template["Outputs"]
    for name in ("PageUrl", "PageBucketName", "DistributionId", "DistributionDomainName"):
        assert name in outputs and "Condition" not in outputs[name]
    assert outputs["CognitoDomain"]["Condition"] == "UseCognito"
    assert outputs["CognitoDomain"]["Value"] == {
        "Fn::Sub": "https://${UserPoolDomain}.auth.${AWS::Region}.amazoncognito.com"
    }
