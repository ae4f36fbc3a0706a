"""The contract served by the local stack over real HTTP: `GET /rpc/openapi.json` is the checked-in document,
`/docs` is Swagger UI from node_modules (nothing from a CDN), and neither exists in the deployed API."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillcore_local.docs import ContractFiles
from skillcore_local.gateway import Gateway
from skillcore_local.invoke import FunctionRegistry
from skillcore_local.payload import http_event
from skillcore_local.routing import http_routes, match_route
from skillcore_local.template import ROOT
from tests.local_stack import RawResponse, StackClient

pytestmark = pytest.mark.stack


def test_openapi_json_is_the_checked_in_document(stack: StackClient) -> None:
    response = stack.request("GET", "/rpc/openapi.json")
    assert response.status == 200
    assert response.header("content-type") == "application/json; charset=utf-8"
    assert response.body == (ROOT / "openapi.json").read_bytes()
    document = response.json()
    assert document["openapi"].startswith("3.1")
    assert any(path.endswith("/health") for path in document["paths"])


def test_the_viewer_page_loads_every_asset_from_the_local_stack(stack: StackClient) -> None:
    page = stack.request("GET", "/docs")
    assert page.status == 200
    assert page.header("content-type") == "text/html; charset=utf-8"
    html = page.body.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert {"/docs/swagger-ui-bundle.js", "/docs/swagger-initializer.js", "/docs/swagger-ui.css"} <= set(
        assets
    )
    for asset in assets:
        assert asset.startswith("/docs/"), f"{asset} is not served by the local stack"
        loaded = stack.request("GET", asset)
        assert loaded.status == 200, asset
        assert len(loaded.body) > 0
        expected = (
            "text/css"
            if asset.endswith(".css")
            else "image/png"
            if asset.endswith(".png")
            else "text/javascript"
        )
        assert (loaded.header("content-type") or "").startswith(expected), asset
    assert stack.request("GET", "/docs/").body == page.body


def test_the_initializer_points_at_the_local_document_and_calls_nothing_outside(stack: StackClient) -> None:
    script = stack.request("GET", "/docs/swagger-initializer.js").body.decode()
    assert 'url: "/rpc/openapi.json"' in script
    assert "validatorUrl: null" in script  # else the page sends the document to validator.swagger.io
    for text in (script, stack.request("GET", "/docs").body.decode()):
        assert not re.search(r"https?://", text)
    # The package's own initializer (the public Petstore example) is never what the page runs.
    assert b"petstore" not in stack.request("GET", "/docs/swagger-initializer.js").body


@pytest.mark.parametrize(
    "path",
    [
        "/docs/../package.json",
        "/docs/%2e%2e/package.json",
        "/docs/..%2fpackage.json",
        "/docs/package.json",
        "/docs/README.md",
        "/docs/LICENSE",
        "/docs/.hidden.js",
        "/docs/sub/swagger-ui.css",
        "/docs/nothing-here.js",
    ],
)
def test_the_viewer_serves_only_the_package_assets(stack: StackClient, path: str) -> None:
    response = stack.request("GET", path)
    assert response.status == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("path", ["/rpc/openapi.json", "/docs", "/docs/swagger-ui.css"])
def test_the_contract_routes_are_read_only(stack: StackClient, path: str) -> None:
    for method in ("POST", "PUT", "DELETE", "PROPFIND"):
        response = stack.request(method, path, token=stack.token("docs-user"))
        assert response.status == 405, (method, path)
        assert response.header("allow") == "GET, HEAD"
        assert response.json()["error"]["code"] == "method_not_allowed"
    head = stack.request("HEAD", path)
    assert head.status == 200 and head.body == b""
    assert int(head.header("content-length") or 0) == len(stack.request("GET", path).body)


def test_neither_route_is_deployed(stack: StackClient) -> None:
    # API Gateway routes only what template.yaml declares: nothing matches /docs.
    assert match_route(http_routes(), "GET", "/docs") is None
    assert match_route(http_routes(), "GET", "/docs/swagger-ui.css") is None
    # /rpc/openapi.json would reach the RpcFunction, which has no such route.
    route, params = match_route(http_routes(), "GET", "/rpc/openapi.json") or (None, {})
    assert route is not None and route.function == "RpcFunction"
    event = http_event(
        method="GET",
        target="/rpc/openapi.json",
        headers=[("Host", "localhost")],
        body=b"",
        route=route,
        path_params=params,
        claims={"sub": "docs-user", "iss": "skillcore-local", "aud": "skillcore", "exp": 4102444800},
        source_ip="127.0.0.1",
    )
    result = stack.local.registry.invoke("RpcFunction", event)
    assert result["statusCode"] == 404
    assert json.loads(result["body"])["error"]["code"] == "not_found"


# ---------------------------------------------------------------------------------------------- own files


@pytest.fixture
def files(tmp_path: Path) -> ContractFiles:
    viewer = tmp_path / "swagger-ui-dist"
    viewer.mkdir()
    (viewer / "swagger-ui.css").write_text("body {}")
    return ContractFiles(openapi=tmp_path / "openapi.json", viewer=viewer)


@pytest.fixture
def gateway(files: ContractFiles) -> Iterator[Gateway]:
    with Gateway(FunctionRegistry(), port=0, access_log=False, contract=files) as running:
        yield running


def _get(gateway: Gateway, path: str) -> RawResponse:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return RawResponse(response.status, response.getheaders(), response.read())
    finally:
        connection.close()


def test_the_document_is_read_on_each_request(gateway: Gateway, files: ContractFiles) -> None:
    missing = _get(gateway, "/rpc/openapi.json")
    assert missing.status == 404
    assert "make openapi" in missing.json()["error"]["message"]

    files.openapi.write_text('{"openapi": "3.1.0", "v": 1}')
    assert _get(gateway, "/rpc/openapi.json").json()["v"] == 1
    files.openapi.write_text('{"openapi": "3.1.0", "v": 2}')  # `make openapi` while the stack runs
    served = _get(gateway, "/rpc/openapi.json")
    assert served.json()["v"] == 2
    assert served.header("cache-control") == "no-cache"


def test_without_the_package_the_viewer_says_how_to_install_it(
    gateway: Gateway, files: ContractFiles
) -> None:
    assert _get(gateway, "/docs/swagger-ui.css").status == 200
    (files.viewer / "swagger-ui.css").unlink()
    files.viewer.rmdir()
    for path in ("/docs", "/docs/swagger-ui.css"):
        response = _get(gateway, path)
        assert response.status == 404
        assert "make node" in response.json()["error"]["message"]
