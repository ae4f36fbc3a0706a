"""Goal check-in reminders on the page: the stage-4 seed's manual checks ("手工验证") done through the form and
the job list, with `POST /_local/scan {"time"}` as the scan's "now" and `POST /_local/faults` for the faults.

The stack is shared by the whole session, so a scan may meet other tests' jobs: every assertion is about
this test's own jobs and messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from skillcore import faults
from skillcore.clock import to_api_time
from tests.browser import confirming
from tests.browser.conftest import new_user, screenshot, sign_in
from tests.local_stack import StackClient

SKILL = "goal-check-in-reminder"
PERMISSION = "proactive_message:write"
GRANT_LINK = "#/permissions?skill=goal-check-in-reminder&permission=proactive_message%3Awrite"


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class PageUser:
    """The signed-in page's user, calling the API with the page's own token."""

    def __init__(self, page: Page, stack: StackClient) -> None:
        self.page = page
        self.stack = stack
        self.token = page.evaluate("sessionStorage.getItem('skillcore.token')")

    def ok(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        got, payload = self.stack.call(method, path, body, token=self.token)
        assert got == status, (method, path, got, payload)
        return payload

    def agent(self, name: str) -> dict[str, Any]:
        return self.ok("POST", "/rpc/agents", {"name": name}, status=201)

    def grant(self, granted: bool = True) -> None:
        self.ok(
            "PATCH",
            "/rpc/skills/permissions",
            {"skillId": SKILL, "permissionCode": PERMISSION, "scope": {"type": "user"}, "granted": granted},
        )

    def jobs(self) -> list[dict[str, Any]]:
        return self.ok("GET", "/rpc/skills/background-jobs?limit=100")["items"]

    def messages(self, conversation_id: str) -> list[dict[str, Any]]:
        return self.ok("GET", f"/rpc/conversations/{conversation_id}/messages?limit=100")["items"]

    def cancel_leftovers(self) -> None:
        for job in self.jobs():
            if job["status"] in ("scheduled", "retrying"):
                self.stack.call(
                    "POST", f"/rpc/skills/background-jobs/{job['jobId']}/cancel", token=self.token
                )


def scan(stack: StackClient, at: datetime, expect_status: int = 200) -> Any:
    status, body = stack.call("POST", "/_local/scan", {"time": to_api_time(at)})
    assert status == expect_status, body
    return body


def arm(stack: StackClient, kind: str) -> None:
    status, body = stack.call(
        "POST", "/_local/faults", {"point": "background.before_side_effect", "times": 1, "kind": kind}
    )
    assert status == 200, body


@pytest.fixture
def user(page: Page, stack: StackClient, signed_in: Any) -> Iterator[PageUser]:
    faults.clear()
    signed_in(section="reminders", prefix="remind")
    caller = PageUser(page, stack)
    yield caller
    faults.clear()
    caller.cancel_leftovers()  # nothing of this test stays due for the next test's scans


def submit_button(page: Page) -> Locator:
    return page.get_by_role("button", name="安排提醒")


def row(page: Page, job_id: str) -> Locator:
    return page.locator(f'tr[data-job="{job_id}"]')


def create_on_page(page: Page, user: PageUser, note: str) -> dict[str, Any]:
    """Fills the form (the default time: a few minutes ahead) and submits; returns the new job."""
    before = {j["jobId"] for j in user.jobs()}
    page.get_by_label("关注点（可选）").fill(note)
    with page.expect_response(
        lambda r: r.url.endswith("/rpc/skills/background-jobs") and r.request.method == "POST"
    ) as answer:
        submit_button(page).click()
    assert answer.value.status == 201, answer.value.text()
    expect(page.get_by_role("status").filter(has_text="已安排提醒")).to_be_visible()
    (job,) = [j for j in user.jobs() if j["jobId"] not in before]
    expect(row(page, job["jobId"]).locator("[data-status]")).to_have_text("等待")
    return job


def test_reminders_through_the_page(page: Page, stack: StackClient, user: PageUser) -> None:
    # No agent yet: the form says so and links to the agents section.
    expect(page.get_by_role("heading", level=1)).to_have_text("目标复盘提醒")
    expect(page.get_by_text("还没有 Agent")).to_be_visible()
    expect(page.get_by_role("link", name="去创建 Agent")).to_have_attribute("href", "#/agents")

    agent = user.agent("Mika")
    page.reload()
    expect(page.get_by_label("Agent", exact=True)).to_have_value(agent["agentId"])
    expect(page.get_by_test_id("reminder-zone")).to_contain_text("Asia/Shanghai")

    # Without the grant the form stays, its submit is disabled, with the reason and the link to the switch.
    button = submit_button(page)
    expect(button).to_be_disabled()
    reason = page.get_by_test_id("reminder-blocked")
    expect(reason).to_contain_text("proactive_message:write")
    expect(button).to_have_attribute("aria-describedby", "reminder-blocked")
    expect(button).to_have_accessible_description(re.compile("proactive_message:write"))
    expect(reason.get_by_role("link", name="前往执行权限开启")).to_have_attribute("href", GRANT_LINK)
    expect(page.get_by_label("本地日期和时间")).to_be_visible()

    # The default time is a few minutes ahead, in the browser's zone.
    value = page.get_by_label("本地日期和时间").input_value()
    chosen = datetime.fromisoformat(value)
    now_local = datetime.fromisoformat(
        page.evaluate("new Date(Date.now() + 8 * 3600e3).toISOString().slice(0, 16)")
    )
    assert timedelta(minutes=3) <= chosen - now_local <= timedelta(minutes=6), (value, now_local)

    user.grant()
    page.get_by_role("button", name="刷新").click()
    expect(button).to_be_enabled()
    expect(page.get_by_test_id("reminder-blocked")).to_have_count(0)

    # A note counts its characters.
    page.get_by_label("关注点（可选）").fill("每天跑步 30 分钟")
    expect(page.get_by_text("10/500 字")).to_be_visible()

    # Create a reminder: it waits, then the scan delivers it and the list (polling) shows it done.
    first = create_on_page(page, user, "每天跑步 30 分钟")
    assert first["scheduledAt"].endswith("Z")
    assert first["note"] == "每天跑步 30 分钟" and first["agentId"] == agent["agentId"]
    first_row = row(page, first["jobId"])
    expect(first_row).to_contain_text("Mika")
    expect(first_row).to_contain_text("每天跑步 30 分钟")
    expect(first_row.get_by_test_id("attempts")).to_have_text("0/3")
    expect(first_row.get_by_role("button", name=re.compile("取消"))).to_be_visible()
    scan(stack, parse(first["nextAttemptAt"]) + timedelta(seconds=1))
    expect(first_row.locator("[data-status]")).to_have_text("完成")
    expect(first_row.get_by_role("button")).to_have_count(0)  # a finished job offers no cancel
    messages = user.messages(agent["defaultConversationId"])
    assert [(m["messageId"], m["origin"]) for m in messages] == [(first["jobId"], "background")]
    assert "每天跑步 30 分钟" in messages[0]["text"]

    # Another, cancelled on the page before it runs: no message after the scan.
    second = create_on_page(page, user, "second")
    second_row = row(page, second["jobId"])
    second_row.get_by_role("button", name=re.compile("取消")).click()
    confirming.answer(page)
    expect(second_row.locator("[data-status]")).to_have_text("取消")
    expect(page.get_by_role("status").filter(has_text="已取消提醒")).to_be_visible()
    expect(second_row.get_by_role("button")).to_have_count(0)
    scan(stack, parse(second["nextAttemptAt"]) + timedelta(seconds=1))
    assert [m["messageId"] for m in user.messages(agent["defaultConversationId"])] == [first["jobId"]]

    # A third, then the grant revoked: the scan fails it with the error code and writes no message.
    third = create_on_page(page, user, "third")
    user.grant(False)
    scan(stack, parse(third["nextAttemptAt"]) + timedelta(seconds=1))
    third_row = row(page, third["jobId"])
    expect(third_row.locator("[data-status]")).to_have_text("失败")
    expect(third_row.get_by_test_id("error-code")).to_have_text("未授权")
    expect(third_row.get_by_test_id("error-code")).to_have_attribute("data-code", "grant_missing")
    expect(third_row.get_by_role("button")).to_have_count(0)
    assert [m["messageId"] for m in user.messages(agent["defaultConversationId"])] == [first["jobId"]]
    page.get_by_role("button", name="刷新").click()
    expect(button).to_be_disabled()

    # The status filter asks the API for one status.
    page.get_by_label("按状态筛选").select_option("cancelled")
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(row(page, second["jobId"])).to_be_visible()
    page.get_by_label("按状态筛选").select_option("")
    expect(page.locator("tbody tr")).to_have_count(3)
    screenshot(page, "reminders")


def test_a_time_out_of_range_shows_the_api_error(page: Page, user: PageUser) -> None:
    user.agent("Mika")
    user.grant()
    page.reload()
    expect(submit_button(page)).to_be_enabled()
    page.get_by_label("本地日期和时间").fill("2020-01-01T09:00")
    submit_button(page).click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("run_at_out_of_range")
    assert user.jobs() == []


def test_running_and_retrying_jobs(page: Page, stack: StackClient, user: PageUser) -> None:
    user.agent("Mika")
    user.grant()
    page.reload()
    expect(submit_button(page)).to_be_enabled()

    # A worker that dies mid-job leaves it running: the page offers no cancel.
    job = create_on_page(page, user, "crash")
    due = parse(job["nextAttemptAt"])
    scan(stack, due - timedelta(seconds=1))  # whatever else is due runs first, so the fault meets this job
    arm(stack, "crash")
    at = due + timedelta(seconds=1)
    scan(stack, at, expect_status=500)
    job_row = row(page, job["jobId"])
    expect(job_row.locator("[data-status]")).to_have_text("运行")
    expect(job_row.get_by_test_id("attempts")).to_have_text("1/3")
    expect(job_row.get_by_role("button")).to_have_count(0)
    screenshot(page, "reminders-running")
    # Its lease expires: the recovery puts it back to retrying, with the error code and a cancel button.
    scan(stack, at + timedelta(minutes=2, seconds=1))
    expect(job_row.locator("[data-status]")).to_have_text("重试")
    expect(job_row.get_by_test_id("error-code")).to_have_text("lease_expired")
    expect(job_row.get_by_test_id("attempts")).to_have_text("1/3")
    expect(job_row.get_by_role("button", name=re.compile("取消"))).to_be_visible()

    # A transient error: retrying, attempts 1.
    other = create_on_page(page, user, "transient")
    due = parse(other["nextAttemptAt"])
    scan(stack, due - timedelta(seconds=1))
    arm(stack, "transient")
    scan(stack, due + timedelta(seconds=1))
    other_row = row(page, other["jobId"])
    expect(other_row.locator("[data-status]")).to_have_text("重试")
    expect(other_row.get_by_test_id("attempts")).to_have_text("1/3")
    expect(other_row.get_by_test_id("error-code")).to_have_text("暂时性错误")
    expect(other_row.get_by_test_id("error-code")).to_have_attribute("data-code", "transient_error")


def test_a_job_that_started_meanwhile_answers_not_cancellable(
    page: Page, stack: StackClient, user: PageUser
) -> None:
    """The list is a few seconds old when the job starts: the cancel is refused with 409, shown on the page."""
    user.agent("Mika")
    user.grant()
    page.reload()
    job = create_on_page(page, user, "race")
    job_row = row(page, job["jobId"])
    cancel = job_row.get_by_role("button", name=re.compile("取消"))
    expect(cancel).to_be_visible()

    # Hold the list's re-reads, so the page keeps showing the job as waiting while it starts.
    held: list[Any] = []
    holding = [True]

    def hold(route: Any) -> None:
        if holding[0] and route.request.method == "GET":
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(r"/rpc/skills/background-jobs(\?.*)?$"), hold)
    # Until a re-read is held: the polling never has two in flight, so none can bring the new state now.
    # (The route handler runs inside Playwright's calls; a short wait lets it run, bounded by the timeout.)
    for _ in range(200):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the list was not re-read while a job was waiting"
    due = parse(job["nextAttemptAt"])
    scan(stack, due - timedelta(seconds=1))
    arm(stack, "crash")
    scan(stack, due + timedelta(seconds=1), expect_status=500)
    expect(job_row.locator("[data-status]")).to_have_text("等待")
    with page.expect_response(lambda r: r.url.endswith("/cancel")) as answer:
        cancel.click()
        confirming.answer(page)
    assert answer.value.status == 409
    expect(job_row.get_by_role("alert")).to_contain_text("job_not_cancellable")
    holding[0] = False
    for route in held:
        route.continue_()
    expect(job_row.locator("[data-status]")).to_have_text("运行")
    expect(job_row.get_by_role("button")).to_have_count(0)
    expect(job_row.get_by_role("alert")).to_contain_text("job_not_cancellable")


def test_english(page: Page, user: PageUser) -> None:
    agent = user.agent("Mika")
    page.reload()
    page.get_by_role("button", name="English").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Goal check-in reminders")
    expect(page.get_by_role("button", name="Schedule reminder")).to_be_disabled()
    expect(page.get_by_test_id("reminder-blocked")).to_contain_text("proactive_message:write")
    user.grant()
    page.get_by_role("button", name="Refresh").click()
    expect(page.get_by_role("button", name="Schedule reminder")).to_be_enabled()
    with page.expect_response(
        lambda r: r.url.endswith("/rpc/skills/background-jobs") and r.request.method == "POST"
    ):
        page.get_by_role("button", name="Schedule reminder").click()
    (job,) = [j for j in user.jobs() if j["agentId"] == agent["agentId"]]
    expect(row(page, job["jobId"]).locator("[data-status]")).to_have_text("Scheduled")


def test_run_at_carries_the_offset_of_the_chosen_instant(browser: Browser, stack: StackClient) -> None:
    """In a zone with daylight saving, a summer time chosen in winter carries the summer offset; a wall time
    skipped by the spring jump is said on the page and sent as the real time it resolves to."""
    context = browser.new_context(base_url=stack.url, timezone_id="Europe/Berlin", locale="zh-CN")
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        sign_in(page, new_user("remind"), section="reminders")
        user = PageUser(page, stack)
        user.agent("Mika")
        user.grant()
        page.reload()
        expect(page.get_by_test_id("reminder-zone")).to_contain_text("Europe/Berlin")
        when = page.get_by_label("本地日期和时间")

        def submitted(value: str) -> Any:
            when.fill(value)
            with page.expect_request(
                lambda r: r.method == "POST" and r.url.endswith("/rpc/skills/background-jobs")
            ) as sent:
                submit_button(page).click()
            expect(page.get_by_role("status").filter(has_text="已安排提醒")).to_be_visible()
            return sent.value.post_data_json

        # Far enough ahead of December that the scan of another test never runs them; within the year.
        summer = submitted("2027-03-28T12:00")
        assert summer["runAt"] == "2027-03-28T12:00:00+02:00", summer
        winter = submitted("2027-03-27T12:00")
        assert winter["runAt"] == "2027-03-27T12:00:00+01:00", winter
        when.fill("2027-03-28T02:30")
        expect(page.get_by_text("在 Europe/Berlin 不存在")).to_contain_text("2027-03-28T03:30:00+02:00")
        skipped = submitted("2027-03-28T02:30")
        assert skipped["runAt"] == "2027-03-28T03:30:00+02:00", skipped
        scheduled = sorted(j["scheduledAt"] for j in user.jobs())
        assert scheduled == ["2027-03-27T11:00:00Z", "2027-03-28T01:30:00Z", "2027-03-28T10:00:00Z"]
        user.cancel_leftovers()
        assert not errors, errors
    finally:
        context.close()
