"""One language and accessibility, with data: a user with something in every section (tests/browser/seeded.py),
each section visited in Chinese and in English, with its lists opened (automation runs and prompts, a capability's
editor, a hosted tool's try-it form). On each: no text of the other language outside user content, ids and code
spans (tests/browser/page_checks.py says how it is told), no conversation id is shown, axe-core finds no violation
of any impact, and every switch has a name of its own. Screenshots: test-artifacts/page/lang-<lang>-<section>.png.

The user's own texts are in the language of the page visited, so whatever the detector finds came from the page or
the server: the default job's title and prompt, a grant notice, a reminder's message, names and reason codes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.conftest import LATE_TIMERS, TIMEOUT_MS, new_user, screenshot, sign_in
from tests.browser.page_checks import axe_violations, describe, foreign_texts, page_texts, switch_names
from tests.browser.seeded import _EN, _ZH, SECTIONS, seed
from tests.hosted_server import HostedServer
from tests.local_stack import StackClient


@pytest.fixture
def context(browser: Browser, hosted_stack: StackClient) -> Iterator[BrowserContext]:
    """The browser conftest's context, on the stack that reaches the test MCP server."""
    context = browser.new_context(base_url=hosted_stack.url, timezone_id="Asia/Shanghai", locale="zh-CN",
                                  viewport={"width": 1280, "height": 900})
    context.add_init_script(LATE_TIMERS)
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


def settle(page: Page) -> None:
    """The section and everything it loads shown: no loading state left, the network quiet."""
    expect(page.locator("main .loading")).to_have_count(0)
    page.wait_for_load_state("networkidle")
    expect(page.locator("main .loading")).to_have_count(0)


def open_details(page: Page, section: str) -> None:
    """What a section shows only on demand, opened, so its texts are checked too."""
    if section == "automation":
        page.evaluate("""() => {
          document.querySelectorAll("main article button[aria-expanded='false']").forEach((b) => b.click());
          document.querySelectorAll("main details").forEach((d) => { d.open = true; });
        }""")
        expect(page.locator("main table [data-reason='grant_missing']")).to_have_count(1)
    elif section == "capabilities":
        page.locator("main li[data-capability] button").first.click()
        expect(page.get_by_test_id("capability-editor")).to_be_visible()
    elif section == "hosted":
        page.locator("main [id$='-add-try']").first.click()
        expect(page.get_by_test_id("try-it")).to_be_visible()
    settle(page)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_section_with_data_reads_in_one_language_and_passes_axe(
    page: Page, hosted_stack: StackClient, hosted: HostedServer, lang: str
) -> None:
    user = new_user(f"one-{lang}")
    seeded = seed(hosted_stack, user, hosted, zh=lang == "zh")
    conversation = seeded.agent["defaultConversationId"]
    sign_in(page, user)
    if lang == "en":
        page.get_by_role("button", name="English").click()
        expect(page.locator("html")).to_have_attribute("lang", "en")
    words = _ZH if lang == "zh" else _EN
    user_content = [*words.values(), "Mika", "Nora", "test_flow", "weekly_review", user, "add", "echo", "a", "b"]
    findings: dict[str, list[str]] = {}
    for section in SECTIONS:
        page.goto(f"/skills/#/{section}")
        settle(page)
        open_details(page, section)
        screenshot(page, f"lang-{lang}-{section}")
        foreign = foreign_texts(page_texts(page), lang, user_content)
        violations = axe_violations(page)
        names = switch_names(page)
        duplicates = sorted({n for n in names if names.count(n) > 1})
        # Ids are not the detector's business, but a conversation id is never shown, not even as code.
        shown_id = [f"conversation id shown: {conversation}"] if conversation in page.locator("body").inner_text() else []
        if foreign or violations or duplicates or "" in names or shown_id:
            findings[section] = [*foreign, describe(violations), *(f"switch name twice: {n}" for n in duplicates),
                                 *shown_id]
    assert findings == {}, findings


def test_the_agent_s_notices_follow_the_conversation_s_language(
    page: Page, hosted_stack: StackClient, hosted: HostedServer
) -> None:
    """Seen on the page: in a Chinese conversation the grant notice names the skill in Chinese; in an English one
    the goal check-in reminder's message is English."""
    zh_user, en_user = new_user("notice-zh"), new_user("notice-en")
    seed(hosted_stack, zh_user, hosted, zh=True)
    seed(hosted_stack, en_user, hosted, zh=False)
    sign_in(page, zh_user, section="agents")
    log = page.get_by_test_id("chat-log")
    expect(log).to_contain_text("使用“记忆检索”（memory:read）之前需要你的授权。")
    expect(log).not_to_contain_text("Memory recall")
    expect(log).to_contain_text("我们约定的目标复盘时间到了。")
    page.evaluate("sessionStorage.clear()")
    sign_in(page, en_user, section="agents")
    expect(page.get_by_test_id("chat-log")).to_contain_text("It is the time we agreed on to check in on your goal.")
    expect(page.get_by_test_id("chat-log")).to_contain_text("What you noted then: “running”")
