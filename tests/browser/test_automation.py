"""Automation jobs on the page: the default daily memory job (says its runs will skip without memory:write,
with the switch next to it), edit (only the changed field sent), pause and resume, a weekly job created and
deleted through the confirmation dialog, and the runs a scan at the slot records (`POST /_local/scan {"time"}`)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from playwright.sync_api import Locator, Page, expect

from skillcore.clock import to_api_time
from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient

DEFAULT_TITLE = "每日记忆整理"
SHANGHAI = ZoneInfo("Asia/Shanghai")


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class PageUser(PageApi):
    def jobs(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/automation-jobs")["items"]

    def default_job(self) -> dict[str, Any]:
        (job,) = [j for j in self.jobs() if j["isDefault"]]
        return job


def scan(stack: StackClient, at: datetime) -> None:
    status, body = stack.call("POST", "/_local/scan", {"time": to_api_time(at)})
    assert status == 200, body


def card(page: Page, title: str) -> Locator:
    return page.get_by_role("article", name=re.compile(re.escape(title)))


def shanghai(value: str) -> str:
    """A UTC time as the page shows it in Asia/Shanghai (zh-CN): 2026/12/04 GMT+8 09:30."""
    local = parse(value).astimezone(SHANGHAI)
    return local.strftime("%Y/%m/%d") + " GMT+8 " + local.strftime("%H:%M")


def test_automation_jobs_through_the_page(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="automation", prefix="auto")
    user = PageUser(page, stack)
    expect(page.get_by_role("heading", level=1)).to_have_text("自动化任务")

    # The default job, marked, says that its runs will skip, with the grant's switch right next to it.
    default = card(page, DEFAULT_TITLE)
    expect(default.get_by_test_id("default-tag")).to_have_text("默认")
    expect(default.get_by_test_id("schedule")).to_have_text("每天 10:00")
    job = user.default_job()
    expect(default.get_by_test_id("next-run-job-zone")).to_have_text(shanghai(job["nextRunAt"]))
    expect(default.get_by_test_id("will-skip")).to_contain_text("memory:write")
    switch = default.get_by_role("switch", name="授予记忆整理的 memory:write 权限")
    expect(switch).to_have_attribute("aria-checked", "false")

    # Some chat for the job to read, and a scan at its slot: without the grant the run is skipped.
    agent = user.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    user.ok(
        "POST",
        f"/rpc/conversations/{agent['defaultConversationId']}/messages",
        {"clientMessageId": "c1", "text": "我喜欢爬山"},
    )
    scan(stack, parse(job["nextRunAt"]))
    default.get_by_role("button", name=f"“{DEFAULT_TITLE}”的运行记录").click()
    runs = default.get_by_role("table", name=f"“{DEFAULT_TITLE}”的运行记录")
    expect(runs.locator("tbody tr")).to_have_count(1)
    expect(runs.locator("[data-status]")).to_have_text("跳过")
    expect(runs.locator('[data-reason="grant_missing"]')).to_have_text("未授权")
    expect(runs).to_contain_text(shanghai(job["nextRunAt"]))

    # Flip the switch: the grant is made (user scope) and the warning goes.
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "true")
    expect(default.get_by_test_id("will-skip")).to_have_count(0)
    grants = user.ok("GET", "/rpc/skills/permissions")["items"]
    assert [(g["skillId"], g["permissionCode"], g["scope"], g["status"]) for g in grants] == [
        ("memory-extraction", "memory:write", {"type": "user"}, "active")
    ]

    # Edit the time: only the changed field goes out; the next run is recomputed and shown in the zone.
    default.get_by_role("button", name=f"编辑“{DEFAULT_TITLE}”").click()
    form = page.get_by_role("form", name=f"编辑“{DEFAULT_TITLE}”")
    expect(form.get_by_label("频率")).to_be_disabled()
    form.get_by_label("本地时间（时:分）").fill("09:30")
    with page.expect_request(lambda r: r.method == "PATCH" and "/rpc/automation-jobs/" in r.url) as sent:
        form.get_by_role("button", name="保存").click()
    assert sent.value.post_data_json == {"localTime": "09:30"}
    expect(page.get_by_test_id("automation-notice")).to_have_text(f"已保存“{DEFAULT_TITLE}”。")
    expect(default.get_by_test_id("schedule")).to_have_text("每天 09:30")
    edited = user.default_job()
    assert (
        edited["localTime"] == "09:30"
        and parse(edited["nextRunAt"]).astimezone(SHANGHAI).strftime("%H:%M") == "09:30"
    )
    expect(default.get_by_test_id("next-run-job-zone")).to_have_text(shanghai(edited["nextRunAt"]))

    # Pause, then resume: the status and the next run follow the API's answer.
    default.get_by_role("button", name=f"暂停“{DEFAULT_TITLE}”").click()
    expect(default.locator("h2 ~ [data-status]")).to_have_text("已暂停")
    assert user.default_job()["status"] == "paused"
    default.get_by_role("button", name=f"恢复“{DEFAULT_TITLE}”").click()
    expect(default.locator("h2 ~ [data-status]")).to_have_text("运行中")
    resumed = user.default_job()
    assert resumed["status"] == "active"
    expect(default.get_by_test_id("next-run-job-zone")).to_have_text(shanghai(resumed["nextRunAt"]))

    # A weekly job in another zone: the next run in its zone and in the user's.
    page.get_by_role("button", name="新建任务").click()
    create = page.get_by_role("form", name="新建自动化任务")
    create.get_by_label("标题").fill("每周回顾")
    create.get_by_label("频率").select_option("weekly")
    create.get_by_label("星期").select_option("3")
    create.get_by_label("本地时间（时:分）").fill("08:15")
    expect(create.get_by_label("时区（IANA 名称）")).to_have_value("Asia/Shanghai")
    create.get_by_label("时区（IANA 名称）").fill("Europe/London")
    create.get_by_label("提示词").fill("回顾这一周的目标")
    expect(create.get_by_role("checkbox", name="memory_write")).to_be_checked()
    create.get_by_role("checkbox", name="memory_forget").uncheck()
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/rpc/automation-jobs")) as sent:
        create.get_by_role("button", name="创建任务").click()
    assert sent.value.post_data_json == {
        "title": "每周回顾",
        "scheduleType": "weekly",
        "localTime": "08:15",
        "weekday": 3,
        "timezone": "Europe/London",
        "config": {"prompt": "回顾这一周的目标", "tools": ["memory_write"]},
    }
    weekly = card(page, "每周回顾")
    expect(weekly.get_by_test_id("schedule")).to_have_text("每周三 08:15")
    (created,) = [j for j in user.jobs() if j["title"] == "每周回顾"]
    london = parse(created["nextRunAt"]).astimezone(ZoneInfo("Europe/London"))
    assert (london.isoweekday(), london.strftime("%H:%M")) == (3, "08:15")
    expect(weekly.get_by_test_id("next-run-job-zone")).to_contain_text(london.strftime("%Y/%m/%d"))
    expect(weekly.get_by_test_id("next-run-job-zone")).to_contain_text("08:15")
    expect(weekly.get_by_test_id("next-run-user-zone")).to_have_text(shanghai(created["nextRunAt"]))
    screenshot(page, "automation")

    # Delete it: the confirmation dialog, answered with the keyboard; Escape keeps the job.
    weekly.get_by_role("button", name="删除“每周回顾”").click()
    confirm = page.get_by_role("alertdialog", name="删除这个自动化任务？")
    expect(confirm).to_contain_text("确定删除“每周回顾”吗？")
    expect(confirm.get_by_role("button", name="保留")).to_be_focused()
    page.keyboard.press("Escape")
    expect(confirm).to_have_count(0)
    expect(weekly.get_by_role("button", name="删除“每周回顾”")).to_be_focused()
    weekly.get_by_role("button", name="删除“每周回顾”").click()
    expect(confirm.get_by_role("button", name="保留")).to_be_focused()
    page.keyboard.press("Tab")
    expect(confirm.get_by_role("button", name="确认删除")).to_be_focused()
    page.keyboard.press("Enter")
    expect(weekly).to_have_count(0)
    expect(page.get_by_test_id("automation-notice")).to_have_text("已删除“每周回顾”。")
    assert [j["title"] for j in user.jobs()] == [DEFAULT_TITLE]

    # A scan at the new slot: with the grant the run succeeds and is listed.
    scan(stack, parse(resumed["nextRunAt"]))
    default.get_by_role("button", name="刷新运行记录").click()
    expect(runs.locator("tbody tr")).to_have_count(2)
    (run,) = [
        r
        for r in user.ok("GET", f"/rpc/automation-jobs/{job['jobId']}/runs")["items"]
        if r["scheduledSlot"] == resumed["nextRunAt"]
    ]
    assert run["status"] == "succeeded", run
    listed = runs.locator(f'tr[data-run="{run["runId"]}"]')
    expect(listed.locator("[data-status]")).to_have_text("成功")
    expect(listed).to_contain_text(shanghai(resumed["nextRunAt"]))


def test_unknown_tool_and_english(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="automation", prefix="auto")
    page.get_by_role("button", name="English").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Automation jobs")
    page.get_by_role("button", name="New job").click()
    create = page.get_by_role("form", name="New automation job")
    create.get_by_label("Title").fill("Odd tools")
    create.get_by_label("Prompt").fill("do it")
    create.get_by_label("Other tool names (comma-separated)").fill("shell_exec")
    create.get_by_role("button", name="Create job").click()
    expect(create.get_by_role("alert")).to_contain_text("unknown_tool")
    expect(create).to_contain_text("Registered tools:")
    expect(create.get_by_role("checkbox", name="agent-memory.search")).to_be_visible()
    user = PageUser(page, stack)
    assert [j["title"] for j in user.jobs()] == ["每日记忆整理"]
    # The default job's title, stored in Chinese, reads in English (defaultTexts), as does its prompt.
    default = card(page, "Daily memory tidy-up")
    expect(default.get_by_test_id("will-skip")).to_contain_text("will be skipped")
    expect(default.get_by_role("heading", level=2)).not_to_contain_text("每日记忆整理")
