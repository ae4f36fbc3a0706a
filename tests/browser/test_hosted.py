"""The Hosted workflows section (托管工作流), through the page, against a stack whose HostedFunction reaches the
real MCP test server (tests/hosted_server.py over HTTPS, via the `hosted` and `hosted_stack` fixtures), checked
against the API.

Each endpoint is an `article[data-endpoint="<name>"]`; its tools are rows `[data-tool-row="<tool>"]` with two
`role="switch"` buttons (`data-switch="enabled"` / `"requiresApproval"`). Pending approvals are
`li[data-approval="<approvalId>"]` with buttons `data-decision="approve"` / `"deny"`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from skillcore.approvals import service as approvals
from skillcore.approvals.models import EndpointBinding
from skillcore.db.dynamo import Db
from skillcore.settings import Settings
from skillcore_local.ddb_local import client as ddb_client
from tests.browser import confirming
from tests.browser.conftest import TIMEOUT_MS, PageApi, screenshot
from tests.hosted_server import NAME, HostedServer
from tests.local_stack import StackClient

# Registering connects to the test server and lists its tools: allow for a loaded machine.
SLOW_MS = 30_000


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


class Api(PageApi):
    def endpoints(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/hosted-endpoints")["items"]

    def endpoint(self, endpoint_id: str) -> dict[str, Any]:
        return self.ok("GET", f"/rpc/hosted-endpoints/{endpoint_id}")

    def register(self, name: str, url: str, **extra: str) -> dict[str, Any]:
        return self.ok("POST", "/rpc/hosted-endpoints", {"name": name, "displayName": f"Flow {name}", "url": url,
                                                         **extra}, status=201)

    def tools(self, endpoint_id: str) -> dict[str, dict[str, Any]]:
        return {t["name"]: t for t in self.endpoint(endpoint_id)["snapshot"]["tools"]}

    def approvals(self, status: str) -> list[dict[str, Any]]:
        return self.ok("GET", f"/rpc/approvals?status={status}")["items"]


def card(page: Page, name: str) -> Locator:
    return page.locator(f'article[data-endpoint="{name}"]')


def tool_switch(page: Page, name: str, tool: str, which: str) -> Locator:
    return card(page, name).locator(f'[data-tool-row="{tool}"] [role="switch"][data-switch="{which}"]')


def open_section(page: Page, signed_in: Any) -> str:
    """Signs a new user in on the section; their id."""
    user = str(signed_in(section="hosted", prefix="hosted"))
    expect(page.get_by_role("heading", level=1)).to_have_text("托管工作流")
    return user


def fill_register(page: Page, name: str, url: str, token: str | None = None) -> None:
    form = page.get_by_test_id("register-form")
    form.get_by_label("名称（英文标识）").fill(name)
    form.get_by_label("显示名称").fill(f"Flow {name}")
    form.get_by_label("地址（URL）").fill(url)
    if token is not None:
        form.get_by_label("访问令牌（可选）").fill(token)


def submit_register(page: Page) -> Any:
    with page.expect_response(lambda r: r.url.endswith("/rpc/hosted-endpoints") and r.request.method == "POST",
                              timeout=SLOW_MS) as answer:
        page.get_by_test_id("register-form").get_by_role("button", name="登记").click()
    return answer.value


def test_register_shows_host_masked_url_and_tools_never_the_secrets(page: Page, hosted_stack: StackClient,
                                                                     hosted: HostedServer, signed_in: Any) -> None:
    open_section(page, signed_in)
    expect(page.get_by_text("还没有登记托管工作流。")).to_be_visible()
    expect(page.get_by_text("没有待审批的调用。")).to_be_visible()
    token_field = page.get_by_label("访问令牌（可选）")
    expect(token_field).to_have_attribute("type", "password")
    fill_register(page, "page_flow", hosted.url(), token="secret-token-xyz")
    answer = submit_register(page)
    assert answer.status == 201, answer.text()
    api = Api(page, hosted_stack)
    (stored,) = api.endpoints()
    assert stored["name"] == "page_flow" and stored["host"] == NAME

    endpoint = card(page, "page_flow")
    expect(endpoint.get_by_test_id("endpoint-host")).to_have_text(NAME)
    expect(endpoint.get_by_test_id("endpoint-url")).to_have_text(stored["urlMasked"])
    expect(endpoint.get_by_test_id("endpoint-status")).to_have_text("已启用")
    expect(page.get_by_test_id("register-notice")).to_have_text("已登记“Flow page_flow”，读取到 2 个工具。")
    for tool in ("add", "echo"):
        expect(tool_switch(page, "page_flow", tool, "enabled")).to_have_attribute("aria-checked", "true")
        expect(tool_switch(page, "page_flow", tool, "requiresApproval")).to_have_attribute("aria-checked", "true")
    # the form is emptied, the token too; neither the URL's path nor the token is anywhere on the page
    expect(token_field).to_have_value("")
    expect(page.get_by_label("地址（URL）")).to_have_value("")
    content = page.content()
    assert "secret-token-xyz" not in content and f"{NAME}/mcp" not in content
    assert "/mcp" not in stored["urlMasked"]
    expect(page.get_by_test_id("quota")).to_have_text("已登记 1 / 10 个端点")

    # English on request; a reload reads the list again from the server
    page.get_by_role("button", name="English").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Hosted workflows")
    expect(endpoint.get_by_test_id("endpoint-status")).to_have_text("Active")
    page.reload()
    expect(card(page, "page_flow").get_by_test_id("endpoint-host")).to_have_text(NAME)
    expect(page.get_by_role("link", name=re.compile("Hosted workflows"))).to_have_attribute("aria-current", "page")
    screenshot(page, "hosted-endpoint")


@pytest.mark.parametrize(("url", "reason", "words"), [
    ("https://internal.mcp.test/mcp", "address_loopback", "这个域名解析到本机回环地址，不允许连接。"),
    ("https://api.elsewhere.test/mcp", "domain_not_allowed", "这个域名不在运营方允许的域名列表中。"),
    ("https://127.0.0.1/mcp", "ip_literal", "不能直接使用 IP 地址，请使用域名。"),
])
def test_a_refused_url_says_why_at_the_url_field(page: Page, hosted_stack: StackClient, signed_in: Any,
                                                 url: str, reason: str, words: str) -> None:
    open_section(page, signed_in)
    fill_register(page, "refused_flow", url, token="tok")
    answer = submit_register(page)
    assert answer.status == 422 and answer.json()["error"]["details"] == {"reason": reason}
    field = page.get_by_label("地址（URL）")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_be_focused()
    error = page.locator("#hosted-url-error")
    expect(error).to_have_text(words)
    expect(field).to_have_accessible_description(re.compile(re.escape(words)))
    # what was typed stays for correcting; nothing was registered
    expect(field).to_have_value(url)
    assert Api(page, hosted_stack).endpoints() == []
    if reason == "address_loopback":
        screenshot(page, "hosted-refused")


def test_a_taken_name_is_shown_at_the_name_field(page: Page, hosted_stack: StackClient, hosted: HostedServer,
                                                 signed_in: Any) -> None:
    open_section(page, signed_in)
    api = Api(page, hosted_stack)
    api.register("taken_flow", hosted.url())
    page.reload()
    expect(card(page, "taken_flow")).to_be_visible()
    fill_register(page, "taken_flow", hosted.url())
    answer = submit_register(page)
    assert answer.status == 409
    field = page.get_by_label("名称（英文标识）")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#hosted-name-error")).to_have_text("你已经有一个同名的端点。")
    # a malformed name is the server's validation error, at the same field
    fill_register(page, "X", hosted.url())
    assert submit_register(page).status == 422
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#hosted-name-error")).not_to_be_empty()
    assert [e["name"] for e in api.endpoints()] == ["taken_flow"]


def test_an_endpoint_that_fails_shows_the_envelope_s_message(page: Page, hosted_stack: StackClient,
                                                             hosted: HostedServer, signed_in: Any) -> None:
    open_section(page, signed_in)
    fill_register(page, "broken_flow", hosted.url("/nothing-here"))
    answer = submit_register(page)
    assert answer.status == 502
    envelope = answer.json()["error"]
    alert = page.get_by_test_id("register-form").get_by_role("alert")
    expect(alert).to_contain_text("外部服务的回答无效。")  # the page's words for the code, not the server's sentence
    assert envelope["message"] not in alert.inner_text()
    expect(alert.locator("code")).to_have_text("upstream_error")
    # no field is blamed for what the endpoint did
    expect(page.get_by_label("地址（URL）")).not_to_have_attribute("aria-invalid", "true")
    assert Api(page, hosted_stack).endpoints() == []


def patch_answer(page: Page) -> Any:
    return page.expect_response(lambda r: "/rpc/hosted-endpoints/" in r.url and r.request.method == "PATCH")


def test_tool_switches_and_the_endpoint_status_reach_the_api(page: Page, hosted_stack: StackClient,
                                                             hosted: HostedServer, signed_in: Any) -> None:
    open_section(page, signed_in)
    api = Api(page, hosted_stack)
    created = api.register("switch_flow", hosted.url())
    page.reload()
    approval = tool_switch(page, "switch_flow", "add", "requiresApproval")
    expect(approval).to_have_accessible_name("工具 add（Flow switch_flow）每次调用需要审批")
    with patch_answer(page) as answer:
        approval.click()
    assert answer.value.status == 200
    assert answer.value.request.post_data_json == {"expectedVersion": 1, "tools": [{"name": "add", "requiresApproval": False}]}
    expect(approval).to_have_attribute("aria-checked", "false")
    expect(approval).to_be_focused()
    tools = api.tools(created["endpointId"])
    assert (tools["add"]["requiresApproval"], tools["echo"]["requiresApproval"]) == (False, True)

    # the keyboard works the enable switch
    enabled = tool_switch(page, "switch_flow", "echo", "enabled")
    enabled.focus()
    with patch_answer(page) as answer:
        page.keyboard.press("Space")
    assert answer.value.status == 200
    expect(enabled).to_have_attribute("aria-checked", "false")
    assert api.tools(created["endpointId"])["echo"]["enabled"] is False
    expect(card(page, "switch_flow").get_by_test_id("endpoint-version")).to_have_text("版本 3")

    # disable and enable the endpoint
    endpoint = card(page, "switch_flow")
    with patch_answer(page) as answer:
        endpoint.get_by_role("button", name="停用端点").click()
        confirming.answer(page)
    assert answer.value.status == 200
    expect(endpoint.get_by_test_id("endpoint-status")).to_have_text("已停用")
    assert api.endpoint(created["endpointId"])["status"] == "disabled"
    with patch_answer(page) as answer:
        endpoint.get_by_role("button", name="启用端点").click()
    expect(endpoint.get_by_test_id("endpoint-status")).to_have_text("已启用")
    assert api.endpoint(created["endpointId"])["status"] == "active"


def test_a_version_conflict_reads_again_and_says_so(page: Page, hosted_stack: StackClient, hosted: HostedServer,
                                                    signed_in: Any) -> None:
    open_section(page, signed_in)
    api = Api(page, hosted_stack)
    created = api.register("conflict_flow", hosted.url())
    page.reload()
    expect(card(page, "conflict_flow").get_by_test_id("endpoint-version")).to_have_text("版本 1")
    # another tab changes the endpoint meanwhile
    api.ok("PATCH", f"/rpc/hosted-endpoints/{created['endpointId']}",
           {"expectedVersion": 1, "tools": [{"name": "echo", "enabled": False}]})
    switch = tool_switch(page, "conflict_flow", "add", "enabled")
    with patch_answer(page) as answer:
        switch.click()
    assert answer.value.status == 409 and answer.value.json()["error"]["code"] == "version_conflict"
    endpoint = card(page, "conflict_flow")
    expect(endpoint.get_by_test_id("endpoint-notice")).to_have_text(
        "这个端点已在别处被修改，已重新读取最新状态（版本 2），请再操作一次。")
    # the page now shows the server's state (echo off, add still on), and the next click goes through
    expect(tool_switch(page, "conflict_flow", "echo", "enabled")).to_have_attribute("aria-checked", "false")
    expect(switch).to_have_attribute("aria-checked", "true")
    with patch_answer(page) as answer:
        switch.click()
    assert answer.value.status == 200
    assert api.tools(created["endpointId"])["add"]["enabled"] is False


def test_delete_asks_first_and_can_be_kept(page: Page, hosted_stack: StackClient, hosted: HostedServer,
                                            signed_in: Any) -> None:
    open_section(page, signed_in)
    api = Api(page, hosted_stack)
    api.register("delete_flow", hosted.url())
    page.reload()
    endpoint = card(page, "delete_flow")
    delete = endpoint.get_by_role("button", name="删除端点“Flow delete_flow”")
    delete.click()
    dialog = page.get_by_role("alertdialog", name="删除这个端点？")
    expect(dialog).to_contain_text("确定删除端点“Flow delete_flow”吗？")
    expect(dialog.get_by_role("button", name="保留")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(delete).to_be_focused()
    assert len(api.endpoints()) == 1
    delete.click()
    with page.expect_response(lambda r: r.request.method == "DELETE") as answer:
        dialog.get_by_role("button", name="确认删除").click()
    assert answer.value.status == 204
    expect(card(page, "delete_flow")).to_have_count(0)
    expect(page.get_by_test_id("list-notice")).to_have_text("已删除“Flow delete_flow”。")
    expect(page.get_by_text("还没有登记托管工作流。")).to_be_visible()
    assert api.endpoints() == []


def db_of(hosted_stack: StackClient) -> Db:
    settings = Settings.from_env(hosted_stack.env)
    return Db(client=ddb_client(settings.dynamodb_endpoint or ""), tables=settings.tables)


def ask_approval(hosted_stack: StackClient, user: str, endpoint_id: str, tool: str, arguments: dict[str, Any]) -> str:
    """A pending approval made by the approvals service, as a call that needs one makes it (bound to a version
    and fingerprint of no consequence here: only listed and decided)."""
    operation = approvals.operation_of(endpoint_id, tool, arguments)
    asked = approvals.ask(db_of(hosted_stack), user, operation, arguments, client_call_id=uuid.uuid4().hex,
                          binding=EndpointBinding(endpoint_version=1, snapshot_fingerprint="0" * 64),
                          now=datetime.now(UTC))
    return asked.approval_id


def test_pending_approvals_are_approved_and_denied(page: Page, hosted_stack: StackClient, hosted: HostedServer,
                                                   signed_in: Any) -> None:
    user = open_section(page, signed_in)
    api = Api(page, hosted_stack)
    created = api.register("approve_flow", hosted.url())
    hostile = {"text": "<img src=x onerror=alert(1)><b>bold</b>"}
    first = ask_approval(hosted_stack, user, created["endpointId"], "echo", hostile)
    second = ask_approval(hosted_stack, user, created["endpointId"], "add", {"a": 1, "b": 2})
    page.reload()
    section = page.get_by_test_id("approvals")
    item = section.locator(f'li[data-approval="{first}"]')
    expect(item.get_by_test_id("approval-tool")).to_have_text("echo")
    expect(item.get_by_test_id("approval-endpoint")).to_have_text("Flow approve_flow")
    # the preview is text, never markup
    preview = item.get_by_test_id("approval-preview")
    expect(preview).to_contain_text("<img src=x onerror=alert(1)>")
    assert preview.locator("img, b").count() == 0
    expect(item.get_by_test_id("approval-expires")).to_contain_text("GMT+8")
    expect(section.get_by_test_id("approvals-count")).to_have_text("2")
    expect(page.get_by_test_id("nav-count-hosted")).to_contain_text("2")
    screenshot(page, "hosted-approvals")

    with page.expect_response(lambda r: r.url.endswith(f"/rpc/approvals/{first}")) as answer:
        item.get_by_role("button", name="批准调用 echo（Flow approve_flow）").click()
    assert answer.value.status == 200 and answer.value.request.post_data_json == {"decision": "approve"}
    expect(item).to_have_count(0)
    expect(section.get_by_test_id("approvals-notice")).to_have_text("已批准调用 echo：回到试用表单重新发送即可使用。")
    expect(page.get_by_test_id("nav-count-hosted")).to_contain_text("1")

    other = section.locator(f'li[data-approval="{second}"]')
    with page.expect_response(lambda r: r.url.endswith(f"/rpc/approvals/{second}")) as answer:
        other.get_by_role("button", name="拒绝调用 add（Flow approve_flow）").click()
    assert answer.value.status == 200
    expect(section.get_by_text("没有待审批的调用。")).to_be_visible()
    expect(page.get_by_test_id("nav-count-hosted")).to_have_count(0)
    assert [a["approvalId"] for a in api.approvals("approved")] == [first]
    assert [a["approvalId"] for a in api.approvals("denied")] == [second]
    assert api.approvals("pending") == []


def test_an_approval_shows_its_whole_arguments_in_a_scrolling_block_with_bidi_escaped(
        page: Page, hosted_stack: StackClient, hosted: HostedServer, signed_in: Any) -> None:
    """A long argument sorted before the one that matters (the padding attack on a cut preview) and a right-to-left
    override: the block holds the whole text, scrolls instead of cutting, and shows the override as an escape."""
    user = open_section(page, signed_in)
    api = Api(page, hosted_stack)
    created = api.register("whole_flow", hosted.url())
    padding = "p" * 4000
    arguments = {"text": padding, "zz_recipient": "alice\u202e@evil.example"}
    approval_id = ask_approval(hosted_stack, user, created["endpointId"], "echo", arguments)
    whole = '{"text":"' + padding + '","zz_recipient":"alice\\u{202E}@evil.example"}'
    page.reload()
    preview = page.locator(f'li[data-approval="{approval_id}"]').get_by_test_id("approval-preview")
    expect(preview).to_have_text(whole)
    shown = preview.evaluate("e => e.textContent")
    assert shown == whole and "\u202e" not in shown
    sizes = preview.evaluate("e => ({scroll: e.scrollHeight, client: e.clientHeight, overflow: getComputedStyle(e).overflowY})")
    assert sizes["scroll"] > sizes["client"] and sizes["overflow"] == "auto", sizes  # scrolls, never cut
    preview.evaluate("e => { e.scrollTop = e.scrollHeight; }")
    expect(preview).to_be_visible()
    expect(page.locator(f"#{preview.get_attribute('aria-describedby')}")).to_contain_text("\\u{…}")


def test_an_approval_decided_elsewhere_says_it_is_not_pending(page: Page, hosted_stack: StackClient,
                                                              hosted: HostedServer, signed_in: Any) -> None:
    user = open_section(page, signed_in)
    api = Api(page, hosted_stack)
    created = api.register("gone_flow", hosted.url())
    approval_id = ask_approval(hosted_stack, user, created["endpointId"], "echo", {"text": "hi"})
    # opened by a link, as a try-it form links to it: brought into view and focused
    page.goto(f"/skills/#/hosted?approval={approval_id}")
    item = page.locator(f'li[data-approval="{approval_id}"]')
    expect(item).to_be_focused()
    api.ok("POST", f"/rpc/approvals/{approval_id}", {"decision": "deny"})
    with page.expect_response(lambda r: r.url.endswith(f"/rpc/approvals/{approval_id}")) as answer:
        item.get_by_role("button", name=re.compile("批准调用 echo")).click()
    assert answer.value.status == 409 and answer.value.json()["error"]["code"] == "approval_not_pending"
    expect(item.get_by_test_id("approval-gone")).to_have_text("这个请求已经不是待审批状态（已拒绝），列表已刷新。")
    # the list is read again and the decided approval leaves it
    expect(item).to_have_count(0)
    expect(page.get_by_text("没有待审批的调用。")).to_be_visible()


def test_the_try_it_form_is_built_from_the_input_schema(page: Page, hosted_stack: StackClient, hosted: HostedServer,
                                                        signed_in: Any) -> None:
    open_section(page, signed_in)
    api = Api(page, hosted_stack)
    api.register("form_flow", hosted.url())
    page.reload()
    endpoint = card(page, "form_flow")
    endpoint.get_by_role("button", name="试用工具 add").click()
    form = endpoint.get_by_test_id("try-it")
    expect(form.get_by_role("heading", name="试用 add")).to_be_focused()
    a, b = form.get_by_label(re.compile(r"^a")), form.get_by_label(re.compile(r"^b"))
    # integers: number inputs, marked required (in words for a screen reader, a star for the eye)
    for field in (a, b):
        expect(field).to_have_attribute("type", "number")
        expect(field).to_have_attribute("step", "1")
        expect(field).to_have_attribute("aria-required", "true")
    expect(form.locator("label", has_text="a").first).to_contain_text("（必填）")
    # nothing is sent while the form itself can tell what is missing or wrong
    calls: list[str] = []
    page.on("request", lambda r: calls.append(r.url) if r.url.endswith("/calls") else None)
    form.get_by_role("button", name="发送调用").click()
    expect(a).to_have_attribute("aria-invalid", "true")
    expect(a).to_be_focused()
    expect(a).to_have_accessible_description(re.compile("这是必填项。"))
    expect(b).to_have_attribute("aria-invalid", "true")
    a.fill("1.5")
    b.fill("2")
    form.get_by_role("button", name="发送调用").click()
    expect(a).to_have_accessible_description(re.compile("请填写整数。"))
    expect(b).not_to_have_attribute("aria-invalid", "true")
    assert calls == []
    # the echo tool: one string field; Close gives the focus back to its button
    endpoint.get_by_role("button", name="试用工具 echo").click()
    form = endpoint.get_by_test_id("try-it")
    expect(form).to_have_attribute("data-tool", "echo")
    expect(form.get_by_label(re.compile(r"^text"))).to_have_attribute("type", "text")
    form.get_by_role("button", name="关闭").click()
    expect(endpoint.get_by_test_id("try-it")).to_have_count(0)
    expect(endpoint.get_by_role("button", name="试用工具 echo")).to_be_focused()


SHOUT_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "What to shout."},
        "loud": {"type": "boolean"},
        "level": {"type": "string", "enum": ["low", "high"]},
        "times": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["text"],
}


def test_refresh_shows_the_diff_and_accept_adopts_it(page: Page, hosted_stack: StackClient, hosted: HostedServer,
                                                     signed_in: Any) -> None:
    open_section(page, signed_in)
    api = Api(page, hosted_stack)
    created = api.register("drift_flow", hosted.url())
    page.reload()
    endpoint = card(page, "drift_flow")
    refresh = endpoint.get_by_role("button", name="检查工具列表")
    with page.expect_response(lambda r: r.url.endswith("/refresh"), timeout=SLOW_MS) as answer:
        refresh.click()
    assert answer.value.status == 200 and answer.value.json() == {"changed": False}
    expect(endpoint.get_by_test_id("endpoint-notice")).to_have_text("工具列表没有变化。")
    expect(endpoint.get_by_test_id("drift")).to_have_count(0)
    try:
        hosted.add_tool("shout", "Shout the text.", SHOUT_SCHEMA)
        hosted.set_description("echo", "Echo the text back, changed.")
        hosted.remove_tool("add")
        with page.expect_response(lambda r: r.url.endswith("/refresh"), timeout=SLOW_MS) as answer:
            refresh.click()
    finally:
        hosted.reset_tools()
    refreshed = answer.value.json()
    assert answer.value.status == 200 and refreshed["changed"] is True
    expect(endpoint.get_by_test_id("endpoint-status")).to_have_text("工具列表有变化，待确认")
    drift = endpoint.get_by_test_id("drift")
    expect(drift.get_by_test_id("diff-added")).to_have_text("shout")
    expect(drift.get_by_test_id("diff-removed")).to_have_text("add")
    expect(drift.get_by_test_id("diff-changed")).to_have_text("echo")
    # the pinned list is still what is shown (and what works); the changed tool is marked
    expect(endpoint.locator('[data-tool-row="echo"]')).to_contain_text("待确认")
    expect(endpoint.locator('[data-tool-row="add"]').get_by_test_id("tool-removed")).to_have_text("将移除")
    screenshot(page, "hosted-drift")
    # a reload shows the pending drift from the endpoint itself
    page.reload()
    endpoint = card(page, "drift_flow")
    expect(endpoint.get_by_test_id("drift").get_by_test_id("diff-added")).to_have_text("shout")
    version = api.endpoint(created["endpointId"])["version"]

    with page.expect_response(lambda r: r.url.endswith("/snapshot/accept")) as answer:
        endpoint.get_by_role("button", name="接受新的工具列表").click()
    assert answer.value.status == 200, answer.value.text()
    assert answer.value.request.post_data_json == {"expectedVersion": version,
                                                   "fingerprint": refreshed["diff"]["fingerprint"]}
    expect(endpoint.get_by_test_id("endpoint-notice")).to_have_text("已接受新的工具列表。")
    expect(endpoint.get_by_test_id("endpoint-status")).to_have_text("已启用")
    expect(endpoint.get_by_test_id("drift")).to_have_count(0)
    expect(endpoint.locator('[data-tool-row="add"]')).to_have_count(0)
    # the added tool starts disabled
    expect(tool_switch(page, "drift_flow", "shout", "enabled")).to_have_attribute("aria-checked", "false")
    stored = api.endpoint(created["endpointId"])
    assert stored["status"] == "active" and "pendingDiff" not in stored
    assert stored["snapshot"]["fingerprint"] == refreshed["diff"]["fingerprint"]
    assert {t["name"]: t["enabled"] for t in stored["snapshot"]["tools"]} == {"echo": True, "shout": False}

    # the try-it form of the new tool: one field per property, JSON for the array
    with patch_answer(page) as patched:
        tool_switch(page, "drift_flow", "shout", "enabled").click()
    assert patched.value.status == 200
    endpoint.get_by_role("button", name="试用工具 shout").click()
    form = endpoint.get_by_test_id("try-it")
    expect(form.get_by_label(re.compile(r"^text"))).to_have_accessible_description(re.compile("What to shout."))
    expect(form.get_by_label(re.compile(r"^loud"))).to_have_attribute("type", "checkbox")
    expect(form.get_by_label(re.compile(r"^level")).locator("option")).to_have_text(["（请选择）", "low", "high"])
    expect(form.get_by_label(re.compile(r"^times"))).to_have_attribute("step", "any")
    tags = form.get_by_label(re.compile(r"^tags"))
    expect(tags).to_have_js_property("tagName", "TEXTAREA")
    tags.fill("[not json")
    form.get_by_role("button", name="发送调用").click()
    # the first field in error takes the focus: the required text, then the JSON that does not parse
    text = form.get_by_label(re.compile(r"^text"))
    expect(text).to_be_focused()
    expect(tags).to_have_attribute("aria-invalid", "true")
    expect(tags).to_have_accessible_description(re.compile("不是有效的 JSON"))
    expect(tags).to_have_attribute("spellcheck", "false")
    text.fill("hello")
    form.get_by_role("button", name="发送调用").click()
    expect(tags).to_be_focused()
    screenshot(page, "hosted-try-it-form")


GRANT = {"skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke", "scope": {"type": "user"}}


def call_answer(page: Page) -> Any:
    return page.expect_response(lambda r: r.url.endswith("/calls") and r.request.method == "POST", timeout=SLOW_MS)


def test_try_it_calls_the_tool_and_an_approval_lets_it_through(page: Page, hosted_stack: StackClient,
                                                               hosted: HostedServer, signed_in: Any) -> None:
    open_section(page, signed_in)
    api = Api(page, hosted_stack)
    created = api.register("call_flow", hosted.url())
    api.ok("PATCH", f"/rpc/hosted-endpoints/{created['endpointId']}",
           {"expectedVersion": 1, "tools": [{"name": "add", "requiresApproval": False}]})
    page.reload()
    endpoint = card(page, "call_flow")
    endpoint.get_by_role("button", name="试用工具 add").click()
    form = endpoint.get_by_test_id("try-it")
    form.get_by_label(re.compile(r"^a")).fill("2")
    form.get_by_label(re.compile(r"^b")).fill("3")
    # without the grant: said so, with the way to grant it
    with call_answer(page) as answer:
        form.get_by_role("button", name="发送调用").click()
    assert answer.value.status == 422 and answer.value.json()["error"]["code"] == "permission_required"
    expect(form.get_by_test_id("grant-required").get_by_role("link", name="前往执行权限授权")).to_have_attribute(
        "href", "#/permissions?skill=hosted-workflows&permission=hosted_workflow%3Ainvoke")
    api.ok("PATCH", "/rpc/skills/permissions", {**GRANT, "granted": True})

    with call_answer(page) as answer:
        form.get_by_role("button", name="发送调用").click()
    assert answer.value.status == 200, answer.value.text()
    sent = answer.value.request.post_data_json
    assert sent["toolName"] == "add" and sent["arguments"] == {"a": 2, "b": 3} and "approvalId" not in sent
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", sent["clientCallId"])
    result = form.get_by_test_id("call-result")
    expect(result.get_by_test_id("call-content")).to_have_text(answer.value.json()["content"])
    expect(result.get_by_test_id("call-content")).to_contain_text("5")
    expect(result.get_by_test_id("call-status")).to_have_text("调用成功")
    expect(result.get_by_test_id("call-duration")).to_have_text(f"耗时 {answer.value.json()['durationMs']} 毫秒")
    # a second send is a new call (a fresh clientCallId)
    with call_answer(page) as again:
        form.get_by_role("button", name="发送调用").click()
    assert again.value.status == 200
    assert again.value.request.post_data_json["clientCallId"] != sent["clientCallId"]
    assert again.value.json()["callId"] != answer.value.json()["callId"]
    screenshot(page, "hosted-try-it")

    # echo requires approval: the call links to the pending approval, which is approved here and then used
    endpoint.get_by_role("button", name="试用工具 echo").click()
    form = endpoint.get_by_test_id("try-it")
    form.get_by_label(re.compile(r"^text")).fill("<b>hi</b>")
    with call_answer(page) as answer:
        form.get_by_role("button", name="发送调用").click()
    assert answer.value.status == 409
    approval_id = answer.value.json()["error"]["details"]["approvalId"]
    link = form.get_by_test_id("approval-required").get_by_role("link", name="查看待审批的请求")
    link.click()
    item = page.locator(f'li[data-approval="{approval_id}"]')
    expect(item).to_be_focused()
    expect(item.get_by_test_id("approval-preview")).to_contain_text("<b>hi</b>")
    expect(page.get_by_test_id("nav-count-hosted")).to_contain_text("1")
    expect(form.get_by_test_id("send-approved")).to_be_visible()
    # approving it on the page sends the try again by itself, with the approval (issue 24)
    with call_answer(page) as answer:
        with page.expect_response(lambda r: r.url.endswith(f"/rpc/approvals/{approval_id}")) as decided:
            item.get_by_role("button", name="批准调用 echo（Flow call_flow）").click()
        assert decided.value.status == 200
    assert answer.value.status == 200, answer.value.text()
    assert answer.value.request.post_data_json["approvalId"] == approval_id
    expect(form.get_by_test_id("call-content")).to_contain_text("echo: <b>hi</b>")
    assert form.get_by_test_id("call-content").locator("b").count() == 0
    assert [a["approvalId"] for a in api.approvals("used")] == [approval_id]
