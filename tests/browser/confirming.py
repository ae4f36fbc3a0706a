"""The confirmation dialog of destructive actions (web/lib/confirm.js), answered as a person would."""

from __future__ import annotations

from playwright.sync_api import Locator, Page, expect


def dialog(page: Page) -> Locator:
    return page.get_by_role("alertdialog")


def answer(page: Page, *, yes: bool = True) -> None:
    """Waits for the dialog, clicks its confirm (or keep) button, and waits for it to close."""
    asked = dialog(page)
    expect(asked).to_be_visible()
    asked.locator('[data-confirm="yes"]' if yes else '[data-confirm="keep"]').click()
    expect(asked).to_have_count(0)
