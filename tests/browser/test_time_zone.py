"""One time zone: the page shows and takes times in the profile's zone, never the browser's, and the person
changes it in the header. The browser here is in Asia/Shanghai; the profile in America/New_York, then Asia/Tokyo.
Dates read per language through Intl, the same in the list as beside the date field (English: "15 Jan 2027, 09:30
GMT-5", never 01/15 or 15/01). Screenshots: test-artifacts/page/zone-<lang>.png."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.conftest import PageApi, new_user, screenshot, sign_in
from tests.browser.page_checks import axe_violations
from tests.local_stack import StackClient

GRANT = {"skillId": "goal-check-in-reminder", "permissionCode": "proactive_message:write",
         "scope": {"type": "user"}, "granted": True}


def test_times_follow_the_profile_s_zone_and_the_zone_is_changed_on_the_page(page: Page, stack: StackClient) -> None:
    user = new_user("zone")
    token = stack.token(user)
    for method, path, body in (("PUT", "/rpc/me", {"timezone": "America/New_York"}),
                               ("POST", "/rpc/agents", {"name": "Mika"}),
                               ("PATCH", "/rpc/skills/permissions", GRANT)):
        status, answer = stack.call(method, path, body, token=token)
        assert status in (200, 201), answer
    sign_in(page, user, section="reminders")
    api = PageApi(page, stack)
    expect(page.get_by_test_id("zone")).to_have_text("America/New_York")
    expect(page.get_by_test_id("reminder-zone")).to_have_text("按你的时区 America/New_York 计算")

    # The field's wall time is read in the profile's zone (the browser is 13 hours ahead of it).
    page.get_by_label("本地日期和时间").fill("2027-01-15T09:30")
    expect(page.get_by_test_id("reminder-when-text")).to_have_text("即 2027/01/15 GMT-5 09:30")
    with page.expect_response(lambda r: r.request.method == "POST"
                              and r.url.endswith("/rpc/skills/background-jobs")) as sent:
        page.get_by_role("button", name="安排提醒").click()
    assert sent.value.status == 201, sent.value.text()
    assert sent.value.request.post_data_json["runAt"] == "2027-01-15T09:30:00-05:00"
    (job,) = api.ok("GET", "/rpc/skills/background-jobs")["items"]
    assert job["scheduledAt"] == "2027-01-15T14:30:00Z"
    row = page.locator(f'tr[data-job="{job["jobId"]}"]')
    expect(row.locator("td").nth(1)).to_have_text("2027/01/15 GMT-5 09:30")

    expect(page.get_by_text("已安排提醒：2027/01/15 GMT-5 09:30。")).to_be_visible()
    # In English the list and the text beside the field read the same way, the month named; the Chinese notice
    # does not stay behind.
    page.get_by_role("button", name="English").click()
    expect(page.get_by_text("已安排提醒")).to_have_count(0)
    expect(row.locator("td").nth(1)).to_have_text("15 Jan 2027, 09:30 GMT-5")
    page.get_by_label("Local date and time").fill("2027-01-15T09:30")
    expect(page.get_by_test_id("reminder-when-text")).to_have_text("That is 15 Jan 2027, 09:30 GMT-5")
    screenshot(page, "zone-en")

    # The zone is changed in the header: the profile is updated, and the same instant is shown in the new zone.
    page.get_by_role("button", name="Change time zone").click()
    form = page.locator("#zone-form")
    expect(form.get_by_label("Your time zone")).to_be_focused()
    expect(form).to_contain_text("Scheduled reminders keep their moment")
    assert axe_violations(page) == []
    screenshot(page, "zone-form-en")
    form.get_by_label("Your time zone").select_option("Asia/Tokyo")
    with page.expect_response(lambda r: r.request.method == "PUT" and r.url.endswith("/rpc/me")) as saved:
        form.get_by_role("button", name="Save time zone").click()
    assert saved.value.status == 200 and saved.value.request.post_data_json == {"timezone": "Asia/Tokyo"}
    expect(page.get_by_test_id("zone")).to_have_text("Asia/Tokyo")
    expect(page.get_by_test_id("zone-notice")).to_have_text("Time zone changed to Asia/Tokyo.")
    expect(page.get_by_role("button", name="Change time zone")).to_be_focused()
    expect(row.locator("td").nth(1)).to_have_text("15 Jan 2027, 23:30 GMT+9")
    expect(page.get_by_test_id("reminder-zone")).to_have_text("In your time zone, Asia/Tokyo")
    assert api.ok("GET", "/rpc/me")["timezone"] == "Asia/Tokyo"
    assert api.ok("GET", "/rpc/skills/background-jobs")["items"][0]["scheduledAt"] == "2027-01-15T14:30:00Z"
    # What the page says of existing automation jobs is what the server does: the default job keeps its zone.
    (default,) = [j for j in api.ok("GET", "/rpc/automation-jobs")["items"] if j["isDefault"]]
    assert default["timezone"] == "America/New_York"

    page.get_by_role("button", name="中文").click()
    expect(row.locator("td").nth(1)).to_have_text("2027/01/15 GMT+9 23:30")
    screenshot(page, "zone-zh")
    api.ok("POST", f"/rpc/skills/background-jobs/{job['jobId']}/cancel")


def test_the_audit_filter_reads_its_times_in_the_profile_s_zone(page: Page, stack: StackClient, signed_in: Any) -> None:
    user = signed_in(section="activity", prefix="zone-audit")
    token = stack.token(user)
    assert stack.call("PUT", "/rpc/me", {"timezone": "Europe/London"}, token=token)[0] == 200
    page.reload()
    expect(page.get_by_test_id("zone")).to_have_text("Europe/London")
    page.get_by_label("起始时间（含）").fill("2026-12-04T10:00")
    with page.expect_request(lambda r: "/rpc/skills/audit-events?" in r.url and "from=" in r.url) as asked:
        page.get_by_role("button", name="筛选", exact=True).click()
    assert re.search(r"from=2026-12-04T10%3A00%3A00Z", asked.value.url), asked.value.url
