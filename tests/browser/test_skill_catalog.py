"""The skill catalog in the Skills section (目录 / Catalog), through the page, against the local stack, in both
languages: a published skill shows its trust level and the permissions it asks for with their risk levels before
anything is installed; installing grants nothing (the skill is listed with its permission not granted); an upgrade
that adds a permission waits for consent, shows what it adds, and serves once accepted; uninstalling asks first.
axe-core finds no violation on the catalog before install, with an upgrade waiting, and after. Screenshots:
test-artifacts/page/catalog-<lang>-*.png."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from skillcore.packages.upgrades import in_canary
from skillcore.settings import Settings
from tests import package_support as ps
from tests.browser.conftest import new_user, screenshot, sign_in
from tests.browser.page_checks import axe_violations, describe
from tests.local_stack import StackClient

READ = {"code": "memory:read", "riskLevel": "L1", "approvalMode": "persistent"}
WRITE = {"code": "memory:write", "riskLevel": "L2", "approvalMode": "persistent"}

WORDS = {
    "zh": {"install": "安装", "grantsNothing": "安装不授予任何权限。", "trust": "已验证的发布者",
           "installed": "已安装，正在使用版本 {v}", "accept": "同意升级到 {v}", "uninstall": "卸载",
           "confirm": "卸载这个技能？"},
    "en": {"install": "Install", "grantsNothing": "Installing grants nothing.", "trust": "Verified publisher",
           "installed": "Installed, using version {v}", "accept": "Upgrade to {v}", "uninstall": "Uninstall",
           "confirm": "Uninstall this skill?"},
}


class Catalog:
    """An operator and a publisher set up over the API: a verified publisher's skill, published."""

    def __init__(self, stack: StackClient) -> None:
        self.stack = stack
        self.skill = f"tidy-{uuid.uuid4().hex[:8]}"
        self.publisher_id = f"pub-{uuid.uuid4().hex[:10]}"
        publisher_user = f"publisher-{uuid.uuid4().hex[:10]}"
        self.publisher = stack.token(publisher_user)
        self.operator = stack.token(f"operator-{uuid.uuid4().hex[:10]}", admin=True)
        self.keys = ps.KeyPair()
        status, body = stack.call("POST", "/rpc/admin/publishers", {
            "publisherId": self.publisher_id, "displayName": "Acme", "userId": publisher_user,
            "trustLevel": "verified_publisher", "publicKey": self.keys.pem}, token=self.operator)
        assert status == 201, body

    def publish(self, version: str, permissions: list[dict[str, str]]) -> dict[str, Any]:
        data = ps.package_zip(self.skill, version=version, publisher=self.publisher_id, permissions=permissions)
        status, release = self.stack.call("POST", "/rpc/releases", {"package": ps.b64(data),
                                                                    "signature": self.keys.sign(data)},
                                          token=self.publisher)
        assert status == 201 and release["state"] == "checked", release
        status, decided = self.stack.call("POST", f"/rpc/admin/releases/{release['releaseId']}/decision",
                                          {"decision": "approve", "reason": "reviewed"}, token=self.operator)
        assert status == 200, decided
        return decided


def no_violations(page: Page) -> None:
    page.wait_for_load_state("networkidle")
    expect(page.locator("main .loading")).to_have_count(0)
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_install_from_the_catalog_and_consent_to_an_upgrade(page: Page, stack: StackClient, lang: str) -> None:
    words = WORDS[lang]
    catalog = Catalog(stack)
    assert catalog.publish("1.0.0", [READ])["state"] == "published"
    percent = Settings.from_env(stack.env).canary_percent
    user = next(u for u in (new_user(f"catalog-{lang}") for _ in range(10_000)) if in_canary(u, "1.1.0", percent))
    sign_in(page, user)
    if lang == "en":
        page.get_by_role("button", name="English").click()
        expect(page.locator("html")).to_have_attribute("lang", "en")

    item = page.locator(f'li[data-catalog-skill="{catalog.skill}"]')
    expect(item.get_by_test_id("trust")).to_have_text(words["trust"])
    asks = item.get_by_test_id("catalog-permissions")
    expect(asks.locator('li[data-code="memory:read"]')).to_contain_text("L1")
    expect(item.get_by_text(words["grantsNothing"])).to_be_visible()
    expect(item.locator("blockquote.quoted")).to_contain_text("Tidies the day's notes into three points.")
    no_violations(page)
    screenshot(page, f"catalog-{lang}-before")

    item.get_by_role("button", name=words["install"], exact=True).click()
    expect(item.get_by_test_id("installed")).to_contain_text(words["installed"].format(v="1.0.0"))
    # installing grants nothing: the skill is listed among the skills, its permission not granted
    card = page.locator(f'article[data-skill="{catalog.skill}"]')
    expect(card.get_by_test_id("trust")).to_have_text(words["trust"])
    status, grants = stack.call("GET", "/rpc/skills/permissions", token=stack.token(user))
    assert status == 200 and not [g for g in grants["items"] if g["skillId"] == catalog.skill]

    # an upgrade that adds a permission waits for consent, in the canary share this user is in
    assert catalog.publish("1.1.0", [READ, WRITE])["state"] == "approved"
    page.reload()
    pending = item.get_by_test_id("pending-upgrade")
    expect(pending.get_by_test_id("pending-permissions").locator('li[data-code="memory:write"]')).to_contain_text("L2")
    expect(item.get_by_test_id("installed")).to_contain_text(words["installed"].format(v="1.0.0"))
    no_violations(page)
    screenshot(page, f"catalog-{lang}-pending")
    pending.get_by_role("button", name=words["accept"].format(v="1.1.0")).click()
    expect(item.get_by_test_id("installed")).to_contain_text(words["installed"].format(v="1.1.0"))
    expect(item.get_by_test_id("pending-upgrade")).to_have_count(0)

    # uninstall asks first, then the install button is back
    item.get_by_role("button", name=words["uninstall"], exact=True).click()
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_have_accessible_name(words["confirm"])
    dialog.get_by_role("button", name=words["uninstall"], exact=True).click()
    expect(item.get_by_role("button", name=words["install"], exact=True)).to_be_visible()
    expect(card).to_have_count(0)
    no_violations(page)
