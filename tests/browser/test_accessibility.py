"""axe-core on every section of a new user's page (nothing in it yet), in Chinese and in English: no violation of
any impact, and every switch has a name of its own. The same sections with data are checked by
tests/browser/test_one_language.py. Screenshots: test-artifacts/page/a11y-empty-<lang>-<section>.png."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.page_checks import axe_violations, describe, switch_names
from tests.browser.seeded import SECTIONS


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_empty_section_passes_axe(page: Page, signed_in: Any, lang: str) -> None:
    signed_in(prefix=f"a11y-{lang}")
    if lang == "en":
        page.get_by_role("button", name="English").click()
        expect(page.locator("html")).to_have_attribute("lang", "en")
    found: dict[str, str] = {}
    for section in SECTIONS:
        page.goto(f"/skills/#/{section}")
        expect(page.locator("main h1")).to_be_visible()
        expect(page.locator("main .loading")).to_have_count(0)
        page.wait_for_load_state("networkidle")
        expect(page.locator("main .loading")).to_have_count(0)
        violations = axe_violations(page)
        names = switch_names(page)
        if violations or len(names) != len(set(names)):
            found[section] = describe(violations) + f"\nswitches: {names}"
        if section in ("skills", "permissions"):
            assert names, f"{section}: no switch found (the check would be vacuous)"
    assert found == {}, found
