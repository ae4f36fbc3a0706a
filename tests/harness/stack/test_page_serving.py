"""The Skills page as the local gateway serves it, over real HTTP: redirects, headers, the CSP with the import
map's hash, the vendor modules byte for byte, refused paths and methods, and the local sign-in's token route.

In AWS the same files come from S3 through CloudFront (`template.yaml`), and none of `/_local/*` exists there:
the last test checks that the template routes nothing but `/rpc` and `/mcp` to a function.
"""

from __future__ import annotations

import json
import re

import pytest

from skillcore_local.jwt_local import verify
from skillcore_local.page import NODE_MODULES, WEB_ROOT, content_security_policy, vendor_files
from skillcore_local.template import load_template
from tests.local_stack import JWT_SECRET, StackClient

pytestmark = pytest.mark.usefixtures("stack")


def test_bare_prefix_redirects_permanently_to_the_page(stack: StackClient) -> None:
    response = stack.request("GET", "/skills")
    assert response.status == 308
    assert response.header("location") == "/skills/"


@pytest.mark.parametrize("path", ["/skills/", "/skills/index.html"])
def test_index_carries_the_policy_with_the_import_maps_hash(stack: StackClient, path: str) -> None:
    response = stack.request("GET", path)
    assert response.status == 200
    assert response.header("content-type") == "text/html; charset=utf-8"
    index_html = (WEB_ROOT / "index.html").read_text(encoding="utf-8")
    assert response.body.decode("utf-8") == index_html
    csp = response.header("content-security-policy")
    assert csp == content_security_policy(index_html)
    assert re.search(r"script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'", csp or "")
    assert "'unsafe-inline'" not in (csp or "")
    assert response.header("x-content-type-options") == "nosniff"
    assert response.header("referrer-policy") == "no-referrer"
    assert response.header("cache-control") == "no-cache"


def test_every_vendor_module_is_served_byte_for_byte_from_node_modules(stack: StackClient) -> None:
    names = vendor_files()
    assert names, "web/vendor.json names no module"
    for name, module in names.items():
        response = stack.request("GET", f"/skills/vendor/{name}")
        assert response.status == 200, name
        assert response.header("content-type") == "text/javascript; charset=utf-8"
        assert response.body == (NODE_MODULES / module).read_bytes(), name


def test_section_modules_styles_and_data_are_served_with_their_types(stack: StackClient) -> None:
    expected = {
        "/skills/app.js": "text/javascript; charset=utf-8",
        "/skills/sections/skills/index.js": "text/javascript; charset=utf-8",
        "/skills/lib/api.js": "text/javascript; charset=utf-8",
        "/skills/styles.css": "text/css; charset=utf-8",
        "/skills/data/evals.json": "application/json; charset=utf-8",
    }
    for path, content_type in expected.items():
        response = stack.request("GET", path)
        assert response.status == 200, path
        assert response.header("content-type") == content_type, path
        assert response.body == (WEB_ROOT / path.removeprefix("/skills/")).read_bytes(), path


def test_config_says_local_sign_in(stack: StackClient) -> None:
    response = stack.request("GET", "/skills/config.json")
    assert response.status == 200
    assert response.json() == {"auth": {"type": "local", "loginUrl": "/_local/login"}}


@pytest.mark.parametrize(
    "path",
    [
        "/skills/../template.yaml",
        "/skills/%2e%2e/template.yaml",
        "/skills/sections/../../template.yaml",
        "/skills/..%2ftemplate.yaml",
        "/skills/.hidden",
        "/skills/vendor.json",
        "/skills/vendor/../../package.json",
        "/skills/vendor/preact/dist/preact.module.js",
        "/skills/vendor/unknown.js",
        "/skills/no-such-file.js",
        "/skills/sections",
        "/skills/index.htm",
        "/skills/lib//api.js",
        "/skills/app.js%00.png",
    ],
)
def test_paths_outside_the_page_or_unknown_are_404_envelopes(stack: StackClient, path: str) -> None:
    response = stack.request("GET", path)
    assert response.status == 404, path
    assert response.json()["error"]["code"] == "not_found"
    assert b"AWSTemplateFormatVersion" not in response.body and b'"dependencies"' not in response.body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_page_files_refuse_writes_with_405_and_allow(stack: StackClient, method: str) -> None:
    response = stack.request(method, "/skills/app.js", raw_body=b"{}")
    assert response.status == 405
    assert response.header("allow") == "GET, HEAD"
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_head_answers_headers_without_a_body(stack: StackClient) -> None:
    got = stack.request("GET", "/skills/app.js")
    head = stack.request("HEAD", "/skills/app.js")
    assert head.status == 200
    assert head.body == b""
    assert head.header("content-type") == got.header("content-type")
    assert head.header("content-length") == str(len(got.body))


def test_login_page_has_its_own_strict_policy_and_script(stack: StackClient) -> None:
    page = stack.request("GET", "/_local/login")
    assert page.status == 200
    assert page.header("content-type") == "text/html; charset=utf-8"
    policy = page.header("content-security-policy") or ""
    assert "default-src 'none'" in policy and "'unsafe-inline'" not in policy
    assert b'<script src="/_local/login.js"></script>' in page.body
    script = stack.request("GET", "/_local/login.js")
    assert script.status == 200
    assert script.header("content-type") == "text/javascript; charset=utf-8"
    assert stack.request("POST", "/_local/login", raw_body=b"").status == 405


def test_token_route_mints_a_local_token_for_the_user(stack: StackClient) -> None:
    status, body = stack.call("POST", "/_local/token", {"user": "alice.page@example"})
    assert status == 200
    claims = verify(f"Bearer {body['token']}", secret=JWT_SECRET)
    assert claims["sub"] == "alice.page@example"
    assert "cognito:groups" not in claims
    # The token is accepted by the API, as the page uses it.
    assert stack.call("GET", "/rpc/health", token=body["token"])[0] == 200


def test_token_route_admin_box_adds_the_admin_group(stack: StackClient) -> None:
    status, body = stack.call("POST", "/_local/token", {"user": "root-page", "admin": True})
    assert status == 200
    claims = verify(f"Bearer {body['token']}", secret=JWT_SECRET)
    assert claims["cognito:groups"] == ["admin"]
    status, _ = stack.call("GET", "/rpc/admin/audit-events?userId=someone", token=body["token"])
    assert status == 200


@pytest.mark.parametrize(
    ("body", "paths"),
    [
        ({}, ["user"]),
        ({"user": ""}, ["user"]),
        ({"user": "has space"}, ["user"]),
        ({"user": "x" * 129}, ["user"]),
        ({"user": 7}, ["user"]),
        ({"user": "bob", "admin": "yes"}, ["admin"]),
        ({"user": "bob", "role": "admin"}, ["role"]),
    ],
)
def test_token_route_names_each_invalid_field(stack: StackClient, body: dict[str, object], paths: list[str]) -> None:
    status, payload = stack.call("POST", "/_local/token", body)
    assert status == 422, payload
    assert payload["error"]["code"] == "validation_error"
    assert [e["path"] for e in payload["error"]["details"]["errors"]] == paths


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'"alice"', b""])
def test_token_route_refuses_a_body_that_is_not_an_object(stack: StackClient, raw: bytes) -> None:
    response = stack.request("POST", "/_local/token", raw_body=raw, headers={"Content-Type": "application/json"})
    assert response.status == 400
    assert response.json()["error"]["code"] == "bad_request"


def test_token_route_is_post_only(stack: StackClient) -> None:
    response = stack.request("GET", "/_local/token")
    assert response.status == 405
    assert response.header("allow") == "POST"


def test_aws_routes_nothing_local_or_page_to_a_function() -> None:
    """In AWS the page comes from S3 and `/_local/*` has no route at all, so API Gateway answers 404 there."""
    template = load_template()
    paths: set[str] = set()
    for resource in template["Resources"].values():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            if event.get("Type") == "HttpApi":
                paths.add(event["Properties"]["Path"])
    assert paths, "the template routes no HTTP API event"
    assert all(p.startswith(("/rpc", "/mcp")) for p in paths), sorted(p for p in paths if not p.startswith("/rpc"))
    assert not json.dumps(sorted(paths)).count("_local")
