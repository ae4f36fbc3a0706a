"""The Activity section's audit filters: outcome, action, skill and time range (in the profile's zone) drive
the query; a filtered list pages with "load more"; rows show names and who decided."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from playwright.sync_api import Page, expect

from skillcore.db.dynamo import make_db
from skillcore.ids import new_id
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision
from skillcore.policy.audit_store import put_audit
from skillcore.settings import Settings
from tests.browser.conftest import PageApi
from tests.local_stack import StackClient

T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
KINDS = [
    ("memory-recall", AuditAction.TOOL_EXECUTE, Decision.DENIED),
    ("memory-recall", AuditAction.TOOL_EXECUTE, Decision.SUCCEEDED),
    ("hosted-workflows", AuditAction.HOSTED_ENDPOINT_APPROVAL, Decision.ALLOWED),
    ("hosted-workflows", AuditAction.HOSTED_ENDPOINT_CALL, Decision.DENIED),
]


def seed(stack: StackClient, user: str, count: int) -> list[AuditEvent]:
    db = make_db(Settings.from_env(stack.env))
    events = []
    for i, (skill, action, decision) in zip(range(count), itertools.cycle(KINDS), strict=False):
        at = T0 + timedelta(minutes=i)
        approval = action is AuditAction.HOSTED_ENDPOINT_APPROVAL
        event = AuditEvent(event_id=new_id(at), user_id=user, at=at, skill_id=skill, skill_version="1.0.0",
                           action=action, decision=decision,
                           metadata=AuditMetadata(endpoint_id="ep-1" if skill == "hosted-workflows" else None,
                                                  caller_kind="person" if approval else None))
        put_audit(db, event)
        events.append(event)
    return events


def test_filter_denied_only_then_page(page: Page, stack: StackClient, signed_in: Any) -> None:
    user = signed_in(section="skills")
    events = seed(stack, user, 100)  # 50 denied: 20 + 20 + 10 over three pages
    queries: list[dict[str, list[str]]] = []
    page.on("request", lambda r: queries.append(parse_qs(urlsplit(r.url).query))
            if "/skills/audit-events" in r.url else None)
    page.get_by_role("link", name="活动").click()
    rows = page.get_by_test_id("audit").locator("tbody tr")
    expect(rows).to_have_count(20)

    page.get_by_label("决定", exact=True).select_option("denied")
    page.get_by_role("button", name="筛选", exact=True).click()
    expect(rows.first).to_have_attribute("data-decision", "denied")
    expect(rows).to_have_count(20)
    more = page.get_by_role("button", name="加载更多: 审计记录")
    more.click()
    expect(rows).to_have_count(40)
    more.click()
    expect(rows).to_have_count(50)
    expect(more).to_have_count(0)
    expect(page.locator("tbody tr[data-decision]:not([data-decision='denied'])")).to_have_count(0)
    shown = rows.evaluate_all("rows => rows.map(r => r.dataset.event)")
    denied = sorted((e.event_id for e in events if e.decision is Decision.DENIED), reverse=True)
    assert shown == denied  # every denied event once, newest first
    assert queries[-1]["decision"] == ["denied"] and "cursor" in queries[-1]

    # the hosted approvals, by action and skill: names, not codes, and who decided
    page.get_by_label("决定", exact=True).select_option("")
    page.get_by_label("动作", exact=True).select_option("hosted_endpoint.approval")
    page.get_by_label("技能", exact=True).select_option("hosted-workflows")
    page.get_by_role("button", name="筛选", exact=True).click()
    expect(rows.first).to_have_attribute("data-action", "hosted_endpoint.approval")
    expect(rows).to_have_count(20)
    expect(rows.first).to_contain_text("托管工作流")
    expect(rows.first).to_contain_text("审批托管调用")
    expect(rows.first.get_by_test_id("decided-by")).to_have_text("决定者：本人")

    # a time range, typed in the profile's zone: 08:10 (inclusive) to 08:15 (exclusive) UTC, as wall times there
    zone = ZoneInfo(PageApi(page, stack).ok("GET", "/rpc/me").get("timezone") or "Asia/Shanghai")
    page.get_by_role("button", name="清除筛选").click()
    expect(rows).to_have_count(20)
    wall = lambda minutes: (T0 + timedelta(minutes=minutes)).astimezone(zone).strftime("%Y-%m-%dT%H:%M")  # noqa: E731
    page.get_by_label("起始时间（含）").fill(wall(10))
    page.get_by_label("结束时间（不含）").fill(wall(15))
    page.get_by_role("button", name="筛选", exact=True).click()
    expect(rows).to_have_count(5)
    assert queries[-1]["from"] == ["2026-11-01T08:10:00Z"] and queries[-1]["to"] == ["2026-11-01T08:15:00Z"]
    wanted = sorted((e.event_id for e in events if T0 + timedelta(minutes=10) <= e.at < T0 + timedelta(minutes=15)),
                    reverse=True)
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.event)") == wanted


def test_the_filters_in_english(page: Page, stack: StackClient, signed_in: Any) -> None:
    user = signed_in(section="skills")
    seed(stack, user, 4)
    page.evaluate("localStorage.setItem('skillcore.lang', 'en')")
    page.reload()
    page.get_by_role("link", name="Activity").click()
    page.get_by_label("Decision", exact=True).select_option("allowed")
    page.get_by_role("button", name="Filter", exact=True).click()
    rows = page.get_by_test_id("audit").locator("tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first.get_by_test_id("decided-by")).to_have_text("decided by: person")
