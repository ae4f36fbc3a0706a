"""The Memories and Activity sections in the browser: add and forget a memory through the page, the runs and the
audit trail the API wrote, and the evaluation summary the page ships (web/data/evals.json)."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import Page, expect

from scripts import evals
from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient


def bearer(page: Page) -> str:
    token = page.evaluate("sessionStorage.getItem('skillcore.token')")
    assert token
    return str(token)


def ok(stack: StackClient, page: Page, method: str, path: str, body: Any = None, status: int = 200) -> Any:
    return PageApi(page, stack).ok(method, path, body, status)


def with_agent(page: Page, stack: StackClient, name: str = "Mika") -> dict[str, Any]:
    """An agent made through the API; the page reads agents at boot, so it reloads."""
    agent = ok(stack, page, "POST", "/rpc/agents", {"name": name}, status=201)
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    return agent


def test_without_an_agent_the_memories_section_says_so_and_links_to_agents(
    page: Page, signed_in: Any
) -> None:
    signed_in(section="memories")
    expect(page.get_by_role("heading", level=1)).to_have_text("记忆")
    expect(page.get_by_text("还没有 Agent")).to_be_visible()
    page.get_by_role("link", name="先创建一个 Agent").click()
    expect(page).to_have_url(re.compile(r"#/agents$"))


def test_add_a_memory_then_forget_it(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="memories")
    agent = with_agent(page, stack)
    expect(page.get_by_label("Agent")).to_have_value(agent["agentId"])
    expect(page.get_by_text("这个 Agent 还没有有效的记忆。")).to_be_visible()

    page.get_by_label("标题").fill("喜欢的茶")
    expect(page.locator("#memory-title-count")).to_have_text("4/80 字")
    page.get_by_label("内容").fill("用户最喜欢乌龙茶，不加糖。")
    expect(page.get_by_label("重要度")).to_have_value("3")
    page.get_by_label("重要度").select_option("4")
    page.get_by_role("button", name="添加", exact=True).click()

    expect(page.get_by_test_id("memories-status")).to_have_text("已添加“喜欢的茶”。")
    item = page.locator("li[data-memory]").filter(has=page.get_by_role("heading", name="喜欢的茶"))
    expect(item).to_have_count(1)
    expect(item).to_contain_text("用户最喜欢乌龙茶，不加糖。")
    expect(item).to_contain_text("重要度 4/5")
    expect(item).to_contain_text("用户添加")
    # The form is empty again for the next one.
    expect(page.get_by_label("标题")).to_have_value("")
    listed = ok(stack, page, "GET", f"/rpc/agents/{agent['agentId']}/memories?status=active")["items"]
    assert [(m["title"], m["importance"], m["source"]) for m in listed] == [("喜欢的茶", 4, "user")]
    screenshot(page, "memories")

    # Forget: the confirmation dialog, by keyboard; the focus starts on "cancel", Escape backs out and gives the
    # focus back.
    forget = item.get_by_role("button", name="遗忘“喜欢的茶”")
    forget.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("alertdialog", name="遗忘这条记忆？")
    expect(dialog).to_have_accessible_description("确定遗忘“喜欢的茶”吗？遗忘后它不会再被回忆。")
    expect(dialog.get_by_role("button", name="取消")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(forget).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog.get_by_role("button", name="取消")).to_be_focused()
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="确认遗忘")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_test_id("memories-status")).to_have_text("已遗忘“喜欢的茶”。")
    expect(page.get_by_text("这个 Agent 还没有有效的记忆。")).to_be_visible()
    page.get_by_label("已遗忘").check()
    forgotten = page.locator("li[data-memory]").filter(has=page.get_by_role("heading", name="喜欢的茶"))
    expect(forgotten).to_have_count(1)
    # A forgotten memory offers no forget button.
    expect(forgotten.get_by_role("button")).to_have_count(0)
    page.get_by_label("有效").check()
    expect(page.get_by_text("这个 Agent 还没有有效的记忆。")).to_be_visible()
    status, body = stack.call(
        "GET", f"/rpc/agents/{agent['agentId']}/memories?status=forgotten", token=bearer(page)
    )
    assert status == 200 and [m["status"] for m in body["items"]] == ["forgotten"]


def test_the_server_field_errors_show_next_to_the_fields(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    signed_in(section="memories")
    with_agent(page, stack)
    # Past the browser's own limit (maxlength), the server's 422 is what the person sees: its message and
    # code, the field's error next to the field, never a stack.
    page.locator("#memory-title").evaluate("input => input.removeAttribute('maxlength')")
    page.get_by_label("标题").fill("长" * 81)
    expect(page.locator("#memory-title-count")).to_have_text("81/80 字")
    page.get_by_label("内容").fill("内容")
    page.get_by_role("button", name="添加", exact=True).click()
    alert = page.locator("form").get_by_role("alert")
    expect(alert).to_contain_text("有内容不符合要求")
    expect(alert).to_contain_text("validation_error")
    expect(page.locator("#memory-title-error")).to_contain_text("80")
    expect(page.get_by_label("标题")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("内容")).not_to_have_attribute("aria-invalid", "true")
    assert "Traceback" not in page.content() and "at async" not in page.content()
    # What was typed stays, so the person can correct it.
    expect(page.get_by_label("内容")).to_have_value("内容")


def test_the_activity_section_lists_the_grant_the_run_and_the_evaluation_summary(
    page: Page, stack: StackClient, signed_in: Any
) -> None:
    signed_in(section="activity")
    expect(page.get_by_role("heading", level=1)).to_have_text("活动")
    expect(page.get_by_text("还没有运行记录")).to_be_visible()
    expect(page.get_by_text("还没有审计记录")).to_be_visible()

    agent = ok(stack, page, "POST", "/rpc/agents", {"name": "Mika"}, status=201)
    ok(
        stack,
        page,
        "PATCH",
        "/rpc/skills/permissions",
        {
            "skillId": "memory-recall",
            "permissionCode": "memory:read",
            "scope": {"type": "user"},
            "granted": True,
        },
    )
    conversation = agent["defaultConversationId"]
    ok(
        stack,
        page,
        "POST",
        f"/rpc/conversations/{conversation}/messages",
        {"clientMessageId": "activity-1", "text": "你好"},
    )
    page.get_by_role("button", name="刷新").click()

    grant = page.get_by_test_id("audit").locator("tr[data-action='permission.grant']")
    expect(grant).to_have_count(1)
    expect(grant).to_contain_text("记忆检索")  # the skill's name, where the page has one
    expect(grant).to_contain_text("授予权限")
    expect(grant.get_by_test_id("decided-by")).to_have_text("决定者：本人")
    expect(grant).to_contain_text("用户")
    runs = page.get_by_test_id("runs").locator("tbody tr")
    expect(runs).to_have_count(1)
    # The conversation by its agent's name, a link to the chat: never its id.
    expect(runs.get_by_role("link", name="Mika")).to_have_attribute("href", f"#/agents?agent={agent['agentId']}")
    expect(runs).not_to_contain_text(conversation)
    expect(runs).to_contain_text("毫秒")

    # The evaluation summary: each skill's precision and recall, from the data file `make evals` wrote.
    shipped = json.loads(evals.SUMMARY.read_text(encoding="utf-8"))
    table = page.get_by_test_id("evals")
    for row in shipped["selector"]["skills"]:
        line = table.locator(f"tr[data-skill='{row['skillId']}']")
        expect(line.get_by_test_id("precision")).to_contain_text(f"{row['precision']:.3f}")
        expect(line.get_by_test_id("recall")).to_contain_text(f"{row['recall']:.3f}")
    payload = shipped["payload"]
    expect(page.get_by_test_id("payload-evals")).to_contain_text(f"{payload['right']}/{payload['total']}")
    screenshot(page, "activity")


def test_the_evaluation_summary_is_fetched_only_when_activity_opens(page: Page, signed_in: Any) -> None:
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    signed_in(section="skills")
    assert not [url for url in fetched if url.endswith("/skills/data/evals.json")]
    page.get_by_role("link", name="活动").click()
    expect(page.get_by_test_id("evals")).to_be_visible()
    assert [url for url in fetched if url.endswith("/skills/data/evals.json")]


def test_load_more_follows_the_cursor(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="skills")
    # 25 grant and revoke events: more than one page (20), so the second comes with "load more".
    for n in range(25):
        ok(
            stack,
            page,
            "PATCH",
            "/rpc/skills/permissions",
            {
                "skillId": "memory-recall",
                "permissionCode": "memory:read",
                "scope": {"type": "user"},
                "granted": n % 2 == 0,
            },
        )
    page.get_by_role("link", name="活动").click()
    rows = page.get_by_test_id("audit").locator("tbody tr")
    expect(rows).to_have_count(20)
    page.get_by_role("button", name="加载更多: 审计记录").click()
    expect(rows).to_have_count(25)
    expect(page.get_by_role("button", name="加载更多: 审计记录")).to_have_count(0)
    expect(rows.first).to_contain_text("授予权限")
    expect(page.get_by_test_id("audit").locator("tr[data-action='permission.revoke']")).to_have_count(12)
