"""The Agents and chat section in the browser: create an agent (the server's field errors shown at the field),
pick one, chat on its default conversation and see how each reply was produced (plain reply, tool skill,
prompt skill, workflow), and the stage-4 seed's manual checks ("手工验证") that happen in the chat: ask about
a memory without the memory:read grant (no memory, the grant notice), with it (the memory), revoked again (no
memory); `/memory-recall` runs as a tool skill; a goal check-in reminder arrives as a background message.

The stack is shared by the whole session, so a scan may meet other tests' jobs: every assertion is about this
test's own agent and messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Locator, Page, Route, expect

from skillcore.clock import to_api_time
from tests.browser import confirming
from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient

MEMORY_SKILL = "memory-recall"
REMINDER_SKILL = "goal-check-in-reminder"
QUESTION = "你还记得我喜欢什么吗"
MEMORY_TEXT = "我喜欢爬山"
GRANT_NOTICE = "需要你的授权"
MESSAGES_URL = re.compile(r"/rpc/conversations/[^/]+/messages(\?.*)?$")


def bearer(page: Page) -> str:
    token = page.evaluate("sessionStorage.getItem('skillcore.token')")
    assert token
    return str(token)


def ok(stack: StackClient, page: Page, method: str, path: str, body: Any = None, status: int = 200) -> Any:
    return PageApi(page, stack).ok(method, path, body, status)


def grant(stack: StackClient, page: Page, skill_id: str, permission: str, granted: bool = True) -> None:
    """The one place a test grants or revokes: as a person would, with the permission's switch in the
    Permissions section (user scope), then back to where the test was."""
    back = page.url
    page.goto(f"/skills/#/permissions?skill={skill_id}&permission={quote(permission)}")
    switch = page.locator(f'[data-skill="{skill_id}"] [data-permission="{permission}"]')
    expect(switch).to_be_focused()
    want = "true" if granted else "false"
    if switch.get_attribute("aria-checked") != want:
        with page.expect_response(
            lambda r: r.url.endswith("/rpc/skills/permissions") and r.request.method == "PATCH"
        ) as answer:
            switch.click()
            if not granted:
                confirming.answer(page)
        assert answer.value.status == 200, answer.value.text()
    expect(switch).to_have_attribute("aria-checked", want)
    codes = {
        (g["skillId"], g["permissionCode"])
        for g in ok(stack, page, "GET", "/rpc/skills/permissions")["items"]
        if g["status"] == "active" and g["scope"]["type"] == "user"
    }
    assert ((skill_id, permission) in codes) is granted
    page.goto(back)


def with_agent(page: Page, stack: StackClient, name: str = "Mika") -> dict[str, Any]:
    """An agent made through the API; the shell reads agents at boot, so the page reloads."""
    agent = ok(stack, page, "POST", "/rpc/agents", {"name": name}, status=201)
    page.reload()
    expect(chat_heading(page)).to_have_text(f"与 {name} 聊天")
    return agent


def chat_heading(page: Page) -> Locator:
    return page.get_by_role("heading", level=2, name=re.compile("聊天$|^Chat with"))


def box(page: Page) -> Locator:
    return page.get_by_role("textbox", name=re.compile("^(消息|Message)$"))


def send_button(page: Page) -> Locator:
    return page.get_by_role("button", name=re.compile("^(发送|发送中…|Send|Sending…)$"))


def messages(page: Page) -> Locator:
    return page.get_by_test_id("chat-log").locator("li[data-message]")


def last_reply(page: Page) -> Locator:
    return page.get_by_test_id("chat-log").locator('li[data-role="assistant"]').last


def say(page: Page, text: str) -> tuple[Locator, dict[str, Any]]:
    """Types `text` and presses Enter; returns the reply's item and the turn the API answered."""
    box(page).fill(text)
    with page.expect_response(
        lambda r: MESSAGES_URL.search(r.url) is not None and r.request.method == "POST"
    ) as answer:
        box(page).press("Enter")
    assert answer.value.status == 200, answer.value.text()
    turn = answer.value.json()
    reply = page.locator(f'li[data-message="{turn["reply"]["messageId"]}"]')
    expect(reply).to_be_visible()
    expect(box(page)).to_have_value("")
    return reply, turn


def expect_run(reply: Locator, kind: str, skill: str | None, outcome: str) -> None:
    expect(reply.get_by_test_id("run-kind")).to_have_text(kind)
    if skill is None:
        expect(reply.get_by_test_id("run-skill")).to_have_count(0)
    else:
        expect(reply.get_by_test_id("run-skill")).to_have_text(skill)
    expect(reply.get_by_test_id("run-outcome")).to_have_text(outcome)


def test_create_an_agent_with_field_errors_first(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="agents")
    expect(page.get_by_role("heading", level=1)).to_have_text("Agent 与聊天")
    expect(page.get_by_text("还没有 Agent。在下面创建第一个。")).to_be_visible()
    name = page.get_by_label("名称")
    create = page.get_by_role("button", name="创建", exact=True)

    # An empty name: the server refuses it, the page says why at the field and puts the focus there.
    with page.expect_response(
        lambda r: r.url.endswith("/rpc/agents") and r.request.method == "POST"
    ) as answer:
        create.click()
    assert answer.value.status == 422
    assert answer.value.json()["error"]["details"]["errors"][0]["path"] == "name"
    expect(name).to_have_attribute("aria-invalid", "true")
    expect(name).to_have_accessible_description(re.compile("请填写这一项。"))
    expect(page.locator("#agent-name-error")).to_have_text("请填写这一项。")
    expect(name).to_be_focused()

    # Only spaces: refused too, with its own reason.
    name.fill("   ")
    create.click()
    expect(page.locator("#agent-name-error")).to_have_text("不能只有空格。")
    expect(name).to_have_value("   ")
    assert ok(stack, page, "GET", "/rpc/agents")["items"] == []

    # The limits are counted as one types; the input stops at 40 characters.
    name.fill("x" * 45)
    expect(name).to_have_value("x" * 40)
    expect(page.locator("#agent-name-count")).to_have_text("40/40 字")

    name.fill("Mika")
    page.get_by_label("人设（可选）").fill("温和的朋友")
    with page.expect_response(
        lambda r: r.url.endswith("/rpc/agents") and r.request.method == "POST"
    ) as answer:
        create.click()
    assert answer.value.status == 201
    mika = answer.value.json()
    expect(page.get_by_test_id("agents-status")).to_have_text("已创建 Agent“Mika”。")
    expect(name).to_have_value("")
    expect(name).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("#agent-name-error")).to_have_count(0)
    expect(page).to_have_url(re.compile(rf"#/agents\?agent={mika['agentId']}$"))
    picked = page.get_by_role("link", name=re.compile("^Mika"))
    expect(picked).to_have_attribute("aria-current", "true")
    expect(chat_heading(page)).to_have_text("与 Mika 聊天")
    expect(page.get_by_text("还没有消息。发第一条吧。")).to_be_visible()
    (listed,) = ok(stack, page, "GET", "/rpc/agents")["items"]
    assert (listed["agentId"], listed["name"], listed["persona"]) == (mika["agentId"], "Mika", "温和的朋友")

    # A second one; then back to the first, by keyboard, with the focus visible.
    name.fill("Nori")
    create.click()
    expect(page.get_by_test_id("agents-status")).to_have_text("已创建 Agent“Nori”。")
    expect(chat_heading(page)).to_have_text("与 Nori 聊天")
    picked.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    expect(picked).to_be_focused()
    assert picked.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    expect(chat_heading(page)).to_have_text("与 Mika 聊天")
    expect(picked).to_have_attribute("aria-current", "true")

    # The shell's list is in step: the other sections' agent pickers hold both, without a reload.
    page.get_by_role("link", name="记忆", exact=True).click()
    expect(page.get_by_label("Agent").locator("option")).to_have_text(["Mika", "Nori"])


def test_chat_turns_show_their_run_kind(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="agents")
    agent = with_agent(page, stack)
    expect(page.get_by_text("还没有消息。发第一条吧。")).to_be_visible()
    expect(send_button(page)).to_be_disabled()  # nothing to send yet

    reply, turn = say(page, "你好")
    assert turn["run"]["kind"] == "plain"
    expect(reply.get_by_test_id("message-text")).to_have_text("我听到了：“你好”。")
    expect(reply).to_contain_text("Mika")
    expect_run(reply, "普通回复", None, "成功")
    expect(messages(page)).to_have_count(2)
    expect(messages(page).first).to_have_attribute("data-role", "user")
    expect(messages(page).first).to_contain_text("你")

    # Shift+Enter is a new line, Enter sends the two lines as one message.
    box(page).fill("第一行")
    box(page).press("Shift+Enter")
    box(page).press_sequentially("第二行")
    expect(box(page)).to_have_value("第一行\n第二行")
    with page.expect_response(
        lambda r: MESSAGES_URL.search(r.url) is not None and r.request.method == "POST"
    ):
        box(page).press("Enter")
    expect(messages(page)).to_have_count(4)
    assert messages(page).nth(2).get_by_test_id("message-text").inner_text() == "第一行\n第二行"

    reply, _ = say(page, "/plan")
    expect_run(reply, "提示词技能", "daily-plan", "成功")
    reply, _ = say(page, "/goal 跑一次十公里")
    expect_run(reply, "工作流", "goal-setting", "成功")
    expect(reply.get_by_test_id("message-text")).to_contain_text("跑一次十公里")
    reply, _ = say(page, "/cancel")
    expect_run(reply, "工作流", "goal-setting", "成功")

    # While a message is on its way the send is disabled (and Enter does nothing); the reply then shows.
    held: list[Route] = []
    page.route(
        MESSAGES_URL,
        lambda route: held.append(route) if route.request.method == "POST" else route.continue_(),
    )
    box(page).fill("慢一点")
    box(page).press("Enter")
    expect(send_button(page)).to_be_disabled()
    expect(send_button(page)).to_have_text("发送中…")
    expect(page.get_by_test_id("chat-status")).to_have_text("消息已发出，正在等待回复…")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    box(page).press("Enter")
    page.wait_for_timeout(200)
    assert len(held) == 1
    held[0].continue_()
    page.unroute(MESSAGES_URL)
    expect(messages(page)).to_have_count(12)
    expect(last_reply(page).get_by_test_id("message-text")).to_have_text("我听到了：“慢一点”。")
    expect(send_button(page)).to_have_text("发送")
    expect(box(page)).to_be_focused()

    # A failed send keeps the message in the box, says so, and a retry sends it with the same client id.
    sent: list[dict[str, Any]] = []

    def fail(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        body = route.request.post_data_json
        assert isinstance(body, dict)
        sent.append(body)
        route.fulfill(
            status=503,
            content_type="application/json",
            body=json.dumps({"error": {"code": "internal", "message": "服务暂时不可用", "details": {}}}),
        )

    page.route(MESSAGES_URL, fail)
    box(page).fill("再试一次")
    box(page).press("Enter")
    # The page says an `internal` refusal in its own words (the envelope's sentence is the server's).
    expect(page.get_by_role("alert")).to_contain_text("服务出错了，请稍后重试。")
    expect(page.get_by_test_id("chat-status")).to_have_text("消息没有发出，仍保留在输入框里，可以重试。")
    expect(box(page)).to_have_value("再试一次")
    expect(box(page)).to_be_focused()
    expect(messages(page)).to_have_count(12)
    page.unroute(MESSAGES_URL)
    with page.expect_request(
        lambda r: MESSAGES_URL.search(r.url) is not None and r.method == "POST"
    ) as retry:
        send_button(page).click()
    expect(messages(page)).to_have_count(14)
    expect(page.get_by_role("alert")).to_have_count(0)
    assert retry.value.post_data_json == sent[0]

    # The history is the server's: after a reload the same messages, oldest first.
    history = ok(
        stack, page, "GET", f"/rpc/conversations/{agent['defaultConversationId']}/messages?limit=100"
    )
    page.reload()
    expect(messages(page)).to_have_count(14)
    shown = messages(page).evaluate_all("items => items.map(i => i.dataset.message)")
    assert shown == [m["messageId"] for m in history["items"]]
    # The runs are not in the history: the page kept them for this tab's session, so every reply keeps its label.
    kinds = page.get_by_test_id("chat-log").get_by_test_id("run-kind")
    expect(kinds).to_have_text(
        ["普通回复", "普通回复", "提示词技能", "工作流", "工作流", "普通回复", "普通回复"]
    )


def test_memory_read_grant_and_revoke_change_the_reply(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    """The seed's checks: without memory:read no memory and the grant notice; with it the memory; revoked,
    refused again; an explicit /memory-recall runs as a tool skill."""
    signed_in(section="agents")
    agent = with_agent(page, stack)
    ok(
        stack,
        page,
        "POST",
        f"/rpc/agents/{agent['agentId']}/memories",
        {"title": "爱好", "content": MEMORY_TEXT},
        status=201,
    )

    reply, turn = say(page, QUESTION)
    assert (turn["run"]["kind"], turn["run"]["skillId"], turn["run"]["outcome"]) == (
        "tool",
        MEMORY_SKILL,
        "denied",
    )
    expect(reply.get_by_test_id("message-text")).to_contain_text(GRANT_NOTICE)
    expect(reply).not_to_contain_text(MEMORY_TEXT)
    expect_run(reply, "工具技能", MEMORY_SKILL, "未授权")
    expect(reply.get_by_role("link", name="前往执行权限开启")).to_have_attribute(
        "href", f"#/permissions?skill={MEMORY_SKILL}"
    )

    grant(stack, page, MEMORY_SKILL, "memory:read")
    reply, turn = say(page, QUESTION)
    expect(reply.get_by_test_id("message-text")).to_have_text(f"我记得这些：\n{MEMORY_TEXT}", use_inner_text=True)
    expect_run(reply, "工具技能", MEMORY_SKILL, "成功")
    expect(reply.get_by_role("link")).to_have_count(0)

    reply, turn = say(page, "/memory-recall 爬山")
    assert turn["run"]["kind"] == "tool"
    expect(reply.get_by_test_id("message-text")).to_contain_text(MEMORY_TEXT)
    expect_run(reply, "工具技能", MEMORY_SKILL, "成功")

    grant(stack, page, MEMORY_SKILL, "memory:read", granted=False)
    reply, turn = say(page, QUESTION)
    assert turn["run"]["outcome"] == "denied"
    expect(reply.get_by_test_id("message-text")).to_contain_text(GRANT_NOTICE)
    expect(reply).not_to_contain_text(MEMORY_TEXT)
    expect_run(reply, "工具技能", MEMORY_SKILL, "未授权")


@pytest.fixture
def reminder_cleanup(page: Page, stack: StackClient) -> Iterator[None]:
    yield
    # Nothing of this test stays due for another test's scans.
    got, jobs = stack.call("GET", "/rpc/skills/background-jobs?limit=100", token=bearer(page))
    for job in jobs["items"] if got == 200 else []:
        if job["status"] in ("scheduled", "retrying"):
            stack.call("POST", f"/rpc/skills/background-jobs/{job['jobId']}/cancel", token=bearer(page))


def test_a_reminder_arrives_in_the_history_as_a_background_message(
    page: Page, stack: StackClient, signed_in: Any, reminder_cleanup: None
) -> None:
    signed_in(section="agents")
    agent = with_agent(page, stack)
    reply, _ = say(page, "这周我想每天跑步")
    expect_run(reply, "普通回复", None, "成功")
    reply, _ = say(page, "/plan")
    expect_run(reply, "提示词技能", "daily-plan", "成功")

    grant(stack, page, REMINDER_SKILL, "proactive_message:write")
    run_at = datetime.now(UTC) + timedelta(minutes=2)
    job = ok(
        stack,
        page,
        "POST",
        "/rpc/skills/background-jobs",
        {
            "skillId": REMINDER_SKILL,
            "agentId": agent["agentId"],
            "runAt": to_api_time(run_at),
            "note": "每天跑步",
        },
        status=201,
    )
    due = datetime.fromisoformat(job["nextAttemptAt"].replace("Z", "+00:00"))
    status, summary = stack.call("POST", "/_local/scan", {"time": to_api_time(due + timedelta(seconds=1))})
    assert status == 200, summary

    # The page re-reads the history on its own: the proactive message appears, labelled as a background one.
    proactive = page.locator(f'li[data-message="{job["jobId"]}"]')
    expect(proactive).to_be_visible()
    expect(proactive).to_have_attribute("data-origin", "background")
    expect(proactive.get_by_test_id("origin")).to_have_text("后台消息")
    expect(proactive).to_contain_text("由后台任务主动发送")
    expect(proactive.get_by_test_id("message-text")).to_contain_text("我们约定的目标复盘时间到了。")
    expect(proactive.get_by_test_id("message-text")).to_contain_text("每天跑步")
    expect(proactive.get_by_test_id("run")).to_have_count(0)
    expect(messages(page)).to_have_count(5)
    expect(messages(page).last).to_have_attribute("data-message", job["jobId"])
    # Chat messages carry no origin label.
    expect(page.get_by_test_id("chat-log").get_by_test_id("origin")).to_have_count(1)
    screenshot(page, "agents-chat")


def test_history_error_and_retry(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="agents")
    ok(stack, page, "POST", "/rpc/agents", {"name": "Mika"}, status=201)

    def broken(route: Route) -> None:
        if route.request.method == "GET":
            route.fulfill(
                status=500,
                content_type="application/json",
                body=json.dumps({"error": {"code": "internal", "message": "出了点问题", "details": {}}}),
            )
        else:
            route.continue_()

    page.route(MESSAGES_URL, broken)
    page.reload()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("服务出错了，请稍后重试。")
    expect(alert).to_contain_text("internal")
    page.unroute(MESSAGES_URL)
    alert.get_by_role("button", name="重试").click()
    expect(page.get_by_text("还没有消息。发第一条吧。")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)


def test_english(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="agents")
    with_agent(page, stack)
    page.get_by_role("button", name="English").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Agents and chat")
    expect(chat_heading(page)).to_have_text("Chat with Mika")
    reply, _ = say(page, "hello")
    expect(reply.get_by_test_id("message-text")).to_have_text("I hear you: “hello”.")
    expect_run(reply, "Plain reply", None, "succeeded")
    reply, _ = say(page, "/memory-recall")
    expect_run(reply, "Tool skill", MEMORY_SKILL, "not permitted")
    expect(reply.get_by_role("link", name="Turn it on under Permissions")).to_be_visible()
    page.get_by_label("Name").fill("")
    page.get_by_role("button", name="Create", exact=True).click()
    expect(page.locator("#agent-name-error")).to_have_text("Fill this in.")


def test_a_long_history_and_a_message_written_elsewhere(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    """Over a hundred messages (two pages of the API) all show, oldest first; a turn another client posts
    appears on its own, the page re-reading only from the last page on."""
    signed_in(section="agents")
    agent = with_agent(page, stack)
    path = f"/rpc/conversations/{agent['defaultConversationId']}/messages"
    for n in range(51):
        ok(stack, page, "POST", path, {"clientMessageId": f"bulk-{n}", "text": f"第 {n} 条"})
    page.reload()
    expect(messages(page)).to_have_count(102)
    expect(messages(page).first.get_by_test_id("message-text")).to_have_text("第 0 条")
    expect(messages(page).last.get_by_test_id("message-text")).to_have_text("我听到了：“第 50 条”。")

    reads: list[str] = []
    page.on(
        "request", lambda r: reads.append(r.url) if MESSAGES_URL.search(r.url) and r.method == "GET" else None
    )
    turn = ok(stack, page, "POST", path, {"clientMessageId": "elsewhere", "text": "从别处发来"})
    expect(messages(page)).to_have_count(104)
    expect(messages(page).last).to_have_attribute("data-message", turn["reply"]["messageId"])
    expect(messages(page).last.get_by_test_id("run")).to_have_count(
        0
    )  # not sent from this page: no run known
    assert reads and all("cursor=" in url for url in reads), reads
    shown = messages(page).evaluate_all("items => items.map(i => i.dataset.message)")
    listed: list[str] = []
    cursor = None
    while True:
        got = ok(stack, page, "GET", f"{path}?limit=100" + (f"&cursor={quote(cursor)}" if cursor else ""))
        listed += [m["messageId"] for m in got["items"]]
        cursor = got["nextCursor"]
        if not cursor:
            break
    assert shown == listed


def test_a_message_sent_while_the_history_loads_is_kept(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    signed_in(section="agents")
    agent = with_agent(page, stack)
    path = f"/rpc/conversations/{agent['defaultConversationId']}/messages"
    ok(stack, page, "POST", path, {"clientMessageId": "early", "text": "早"})

    held: list[Route] = []
    page.route(
        MESSAGES_URL, lambda route: held.append(route) if route.request.method == "GET" else route.continue_()
    )
    page.reload()
    expect(page.get_by_role("status").filter(has_text="加载中")).to_be_visible()
    box(page).fill("我先说")
    with page.expect_response(
        lambda r: MESSAGES_URL.search(r.url) is not None and r.request.method == "POST"
    ):
        box(page).press("Enter")
    expect(box(page)).to_have_value("")
    for route in held:
        route.continue_()
    page.unroute(MESSAGES_URL)
    expect(messages(page)).to_have_count(4)
    expect(messages(page).get_by_test_id("message-text")).to_have_text(
        ["早", "我听到了：“早”。", "我先说", "我听到了：“我先说”。"]
    )
