"""An automatic rollback as the person meets it on the page (目录 / Catalog), in both languages: a code package's
new version reaches this person as a canary (the page says so), its tool fails in their chat turns, the scan rolls
it back, and the page then shows the previous version serving again, no canary, nothing pending. The flow around
the page goes over HTTP as in tests/stack/test_rollback_http.py (whose publisher and users it reuses); axe-core
finds nothing on either state. Screenshots: test-artifacts/page/rollback-<lang>-{canary,rolled-back}.png."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from skillcore.packages.upgrades import in_canary
from tests.browser.conftest import screenshot, sign_in
from tests.browser.page_checks import axe_violations, describe
from tests.code_package_support import HOSTILE_EVALS, install
from tests.local_stack import StackClient
from tests.sandbox_support import wasm
from tests.stack.test_rollback_http import LONG, SHORT, Publisher, User, scan, settings

WORDS = {
    "zh": {"installed": "已安装，正在使用版本 {v}", "canary": "灰度版本"},
    "en": {"installed": "Installed, using version {v}", "canary": "Canary version"},
}


def inside(stack: StackClient, version: str) -> User:
    percent = settings(stack).canary_percent
    while True:
        found = User(stack)
        if in_canary(found.user, version, percent):
            return found


def no_violations(page: Page) -> None:
    page.wait_for_load_state("networkidle")
    expect(page.locator("main .loading")).to_have_count(0)
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_rolled_back_canary_is_seen_on_the_page(page: Page, stack: StackClient, tmp_path: Path, lang: str) -> None:
    words = WORDS[lang]
    skill = f"roll-{uuid.uuid4().hex[:8]}"
    publisher = Publisher(stack, tmp_path, skill)
    assert publisher.release("1.0.0")["state"] == "published"
    person, other = inside(stack, "1.1.0"), inside(stack, "1.1.0")
    outside = next(u for u in (User(stack) for _ in range(10_000))
                   if not in_canary(u.user, "1.1.0", settings(stack).canary_percent))
    for user in (person, other, outside):
        install(stack, user, skill)
    bad = publisher.release("1.1.0", wasm=wasm("two_faced"), evals=HOSTILE_EVALS)
    assert bad["state"] == "approved"

    sign_in(page, person.user)
    if lang == "en":
        page.get_by_role("button", name="English").click()
        expect(page.locator("html")).to_have_attribute("lang", "en")
    item = page.locator(f'li[data-catalog-skill="{skill}"]')
    installed = item.get_by_test_id("installed")
    expect(installed).to_contain_text(words["installed"].format(v="1.1.0"))
    expect(installed).to_contain_text(words["canary"])
    no_violations(page)
    screenshot(page, f"rollback-{lang}-canary")

    # the canary's calls fail (its module spins or traps); the stable version's calls succeed beside them
    for i in range(settings(stack).rollout_min_calls):
        turn = (person if i % 2 == 0 else other).turn(SHORT if i % 4 < 2 else LONG)
        assert turn["run"]["outcome"] == "failed", turn["run"]
        if i % 5 == 0:
            assert outside.turn(SHORT)["run"]["outcome"] == "succeeded"
    assert scan(stack)["rolledBack"] >= 1
    assert publisher.read(bad["releaseId"])["state"] == "rolled_back"

    page.reload()
    expect(installed).to_contain_text(words["installed"].format(v="1.0.0"))
    expect(installed).not_to_contain_text(words["canary"])
    expect(item.get_by_test_id("pending-upgrade")).to_have_count(0)
    no_violations(page)
    screenshot(page, f"rollback-{lang}-rolled-back")
