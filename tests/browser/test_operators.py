"""The operators' section (运营), through the page, against the local stack: an operator registers a publisher
with its public key in the form, a signed package submitted by that publisher appears in the review queue with
its permissions, the publisher's texts quoted and the automatic checks' report; the operator approves it with a
reason and it shows in the catalog; revoking the key refuses the publisher's next submission. Someone outside
the admin group sees no such section in the navigation."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests import package_support as ps
from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient


def test_an_operator_registers_reviews_publishes_and_revokes(
        page: Page, signed_in: Callable[..., str], stack: StackClient) -> None:
    operator = signed_in(section="operators", prefix="operator", admin=True)
    publisher_user = f"publisher-{uuid.uuid4().hex[:10]}"
    publisher_id = f"pub-{uuid.uuid4().hex[:10]}"
    skill = f"tidy-{uuid.uuid4().hex[:8]}"
    keys = ps.KeyPair()
    expect(page.get_by_role("heading", name="运营", level=1)).to_be_visible()
    expect(page.get_by_role("link", name="运营")).to_have_attribute("aria-current", "page")

    page.get_by_label("发布者标识").fill(publisher_id)
    page.get_by_label("显示名称").fill("Acme 笔记")
    page.get_by_label("提交版本的账号（用户标识）").fill(publisher_user)
    page.get_by_label("可信等级").select_option("verified_publisher")
    page.get_by_label("公钥（PEM，publisher.pub 的内容）").fill(keys.pem)
    page.get_by_role("button", name="登记", exact=True).click()
    expect(page.get_by_test_id("operators-status")).to_have_text(f"已登记发布者“{publisher_id}”。")
    card = page.locator(f'li[data-publisher="{publisher_id}"]')
    expect(card.locator(f'li[data-key="{keys.key_id}"]')).to_have_attribute("data-status", "active")

    # the publisher submits a signed version over the API
    data = ps.package_zip(skill, publisher=publisher_id)
    publisher = stack.token(publisher_user)
    status, release = stack.call("POST", "/rpc/releases", {"package": ps.b64(data), "signature": keys.sign(data)},
                                 token=publisher)
    assert status == 201 and release["state"] == "checked", release

    page.reload()
    item = page.locator(f'li[data-release="{release["releaseId"]}"]')
    expect(item.get_by_role("heading", name=f"{skill} 1.0.0")).to_be_visible()
    expect(item.get_by_test_id("release-permissions")).to_contain_text("memory:read L1 · persistent")
    expect(item.locator("blockquote.quoted")).to_contain_text("Tidies the day's notes into three points.")
    report = item.get_by_test_id("report")
    for check in ("structure", "compatibility", "defences", "permissions", "evals"):
        expect(report.locator(f'li[data-check="{check}"]')).to_have_attribute("data-passed", "true")
    expect(report.locator('li[data-check="evals"]')).to_contain_text("2 个用例")
    approve = item.get_by_role("button", name="批准并发布")
    expect(approve).to_be_disabled()  # a decision needs a reason
    item.get_by_label("理由").fill("内容和权限都合适")
    screenshot(page, "operators-review")
    approve.click()
    expect(page.get_by_test_id("operators-status")).to_have_text(f"已发布 {skill} 1.0.0。")
    expect(item).to_have_count(0)
    expect(page.get_by_test_id("catalog").locator(f'li[data-skill="{skill}"]')).to_contain_text("已验证的发布者")

    api = PageApi(page, stack)
    decided = api.ok("GET", f"/rpc/admin/releases/{release['releaseId']}")
    assert (decided["state"], decided["reason"], decided["decidedBy"]) == ("published", "内容和权限都合适", operator)

    card.get_by_role("button", name=f"吊销公钥 {keys.key_id}").click()
    expect(card.locator(f'li[data-key="{keys.key_id}"]')).to_have_attribute("data-status", "revoked")
    newer = ps.package_zip(skill, version="1.1.0", publisher=publisher_id)
    status, refused = stack.call("POST", "/rpc/releases", {"package": base64.b64encode(newer).decode(),
                                                           "signature": keys.sign(newer)}, token=publisher)
    assert (status, refused["error"]["code"]) == (422, "key_revoked")


def test_the_section_is_not_offered_outside_the_admin_group(page: Page, signed_in: Callable[..., str]) -> None:
    signed_in(section="skills")
    expect(page.get_by_role("link", name="技能", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="运营")).to_have_count(0)
    page.goto("/skills/#/operators")
    expect(page.get_by_text("这一部分只对运营人员（管理员组）开放。")).to_be_visible()
