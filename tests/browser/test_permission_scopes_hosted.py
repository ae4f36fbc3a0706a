"""Finer scopes on the Permissions section for the hosted workflows skill: a grant narrowed on the page to one
hosted endpoint, one of its tools and a maximum on an argument (the real MCP test server of tests/hosted_server.py),
shown on the row with the endpoint's name, and enforced on a call (checked through the API)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.conftest import TIMEOUT_MS, PageApi
from tests.hosted_server import HostedServer
from tests.local_stack import StackClient

SKILL = "hosted-workflows"
CODE = "hosted_workflow:invoke"


@pytest.fixture
def context(browser: Browser, hosted_stack: StackClient) -> Iterator[BrowserContext]:
    """The browser conftest's context, on the stack that reaches the test MCP server."""
    context = browser.new_context(
        base_url=hosted_stack.url, timezone_id="Asia/Shanghai", locale="zh-CN", viewport={"width": 1280, "height": 900}
    )
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


def test_a_grant_narrowed_to_an_endpoint_tool_and_maximum(page: Page, hosted_stack: StackClient,
                                                          hosted: HostedServer, signed_in: Any) -> None:
    signed_in(section="permissions", prefix="scopes")
    api = PageApi(page, hosted_stack)
    endpoint = api.ok("POST", "/rpc/hosted-endpoints", {"name": "flow", "displayName": "Flow one",
                                                        "url": hosted.url("/mcp")}, status=201)
    api.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}", {
        "expectedVersion": endpoint["version"],
        "tools": [{"name": t["name"], "requiresApproval": False} for t in endpoint["snapshot"]["tools"]]})
    page.reload()
    row = page.locator(f'[data-skill="{SKILL}"] [data-permission-row="{CODE}"]')
    narrow = row.get_by_test_id("narrow")
    narrow.locator("summary").click()
    narrow.get_by_label("只允许这个端点").select_option(label="Flow one")
    narrow.get_by_test_id("narrow-endpoint").get_by_label("add").check()
    narrow.get_by_label("工具", exact=True).select_option("add")
    narrow.get_by_label("参数名").fill("a")
    narrow.get_by_label("值", exact=True).fill("10")
    with page.expect_response(lambda r: r.url.endswith("/rpc/skills/permissions")
                              and r.request.method == "PATCH") as answer:
        narrow.get_by_role("button", name="按此范围授予").click()
    assert answer.value.status == 200, answer.value.json()
    assert answer.value.request.post_data_json["scope"] == {
        "type": "user", "resources": [{"kind": "hosted_endpoint", "id": endpoint["endpointId"], "tools": ["add"]}],
        "arguments": [{"name": "a", "tool": "add", "maximum": 10}]}
    expect(row.get_by_test_id("grant-narrowing")).to_have_text("限定于：端点 Flow one（工具：add）；add.a ≤ 10")
    page.reload()
    expect(row.get_by_test_id("grant-narrowing")).to_have_text("限定于：端点 Flow one（工具：add）；add.a ≤ 10")

    def call(tool: str, arguments: dict[str, Any]) -> tuple[int, Any]:
        return hosted_stack.call("POST", f"/rpc/hosted-endpoints/{endpoint['endpointId']}/calls",
                                 {"toolName": tool, "arguments": arguments, "clientCallId": uuid.uuid4().hex[:12]},
                                 token=api.token)

    assert call("add", {"a": 10, "b": 1})[0] == 200
    for tool, arguments, mismatch in (("add", {"a": 11, "b": 1}, "argument_maximum"), ("echo", {"text": "x"}, "tool")):
        status, body = call(tool, arguments)
        assert (status, body["error"]["code"], body["error"]["details"]["mismatch"]) == (
            403, "grant_scope_mismatch", mismatch)
