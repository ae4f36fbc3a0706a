"""The Skills page's code tools (代码工具 / Code tools), against the local stack: the example package published and
installed for a user who called its tool from chat turns; the section shows the tool's limits (fuel, memory,
time, output, host calls), its host functions, that the service precompiled it, and its recent outcomes (codes,
counts, times), in Chinese and in English, in one language and with no axe-core violation. Screenshots:
test-artifacts/page/code-tools-<lang>.png."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import new_user, screenshot, sign_in
from tests.browser.page_checks import axe_violations, describe, foreign_texts, page_texts
from tests.code_package_support import install, publish
from tests.local_stack import StackClient

LABELS = {
    "zh": {"title": "代码工具", "fuel": "燃料（指令）", "memory": "内存", "time": "时间上限", "output": "输出",
           "hostCalls": "宿主调用", "precompiled": "发布时已预编译", "caption": "最近 2 次调用的结果"},
    "en": {"title": "Code tools", "fuel": "Fuel (instructions)", "memory": "Memory", "time": "Time limit",
           "output": "Output", "hostCalls": "Host calls", "precompiled": "Precompiled when published",
           "caption": "Outcomes of the last 2 calls"},
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_installed_code_tool_shows_its_limits_and_outcomes(
        page: Page, stack: StackClient, tmp_path: Path, lang: str) -> None:
    skill = f"streak-{uuid.uuid4().hex[:8]}"
    publish(stack, tmp_path, skill)
    user = new_user(f"code-{lang}")
    install(stack, user, skill)
    token = stack.token(user)

    def ok(method: str, path: str, body: Any = None) -> Any:
        status, answer = stack.call(method, path, body, token=token)
        assert status in (200, 201), answer
        return answer

    ok("PUT", "/rpc/me", {"timezone": "Asia/Shanghai", "displayName": "Li"})
    conversation = ok("POST", "/rpc/agents", {"name": "Mika"})["defaultConversationId"]
    for text in ('/streak-score {"days": [1, 1, 0, 1]}', '/streak-score {"days": "many"}'):
        ok("POST", f"/rpc/conversations/{conversation}/messages", {"clientMessageId": uuid.uuid4().hex, "text": text})

    sign_in(page, user, section="skills")
    if lang == "en":
        page.get_by_role("button", name="English").click()
        expect(page.locator("html")).to_have_attribute("lang", "en")
    words = LABELS[lang]
    section = page.get_by_test_id("code-tools")
    expect(section.get_by_role("heading", name=words["title"], level=2)).to_be_visible()
    card = section.locator(f'article[data-skill="{skill}"][data-code-tool="streak-score"]')
    expect(card.get_by_role("heading", level=3)).to_contain_text(f"streak-score {skill}")
    limits = card.get_by_test_id("limits")
    expect(limits.locator('dd[data-limit="fuel"]')).to_have_text("5,000,000")
    expect(limits.locator('dd[data-limit="memory"]')).to_have_text("1 MiB")
    expect(limits.locator('dd[data-limit="time"]')).to_have_text("200 ms")
    expect(limits.locator('dd[data-limit="output"]')).to_have_text("256 B")
    expect(limits.locator('dd[data-limit="hostCalls"]')).to_have_text("0")
    for key in ("fuel", "memory", "time", "output", "hostCalls", "precompiled"):
        expect(limits).to_contain_text(words[key])
    outcomes = card.get_by_test_id("outcomes")
    expect(outcomes.locator("caption")).to_have_text(words["caption"])
    expect(outcomes.locator('tr[data-outcome="succeeded"] td').nth(1)).to_have_text("1")
    expect(outcomes.locator('tr[data-outcome="invalid_input"] td').nth(1)).to_have_text("1")
    expect(card.get_by_test_id("recent").locator("li")).to_have_count(2)
    expect(card.get_by_test_id("recent").locator("li").first).to_contain_text("invalid_input")
    expect(page.locator("main .loading")).to_have_count(0)
    screenshot(page, f"code-tools-{lang}")

    foreign = foreign_texts(page_texts(page, "[data-testid='code-tools']"), lang, [user, skill, "Mika", "Li"])
    assert foreign == []
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_operator_sees_a_releases_code_tools_and_their_check(
        page: Page, stack: StackClient, tmp_path: Path, lang: str) -> None:
    skill = f"streak-{uuid.uuid4().hex[:8]}"
    release = publish(stack, tmp_path, skill, approve=False)
    sign_in(page, new_user("operator"), section="operators", admin=True)
    if lang == "en":
        page.get_by_role("button", name="English").click()
        expect(page.locator("html")).to_have_attribute("lang", "en")
    item = page.locator(f'li[data-release="{release["releaseId"]}"]')
    tools = item.get_by_test_id("release-code-tools")
    expect(tools.locator('li[data-code-tool="streak-score"]')).to_contain_text(
        "fuel 5000000 · memory 1048576 B · 200 ms · output 256 B · host calls 0")
    expect(item.get_by_test_id("report").locator('li[data-check="code_tools"]')).to_have_attribute(
        "data-passed", "true")
    expect(item.get_by_test_id("report").locator('li[data-check="code_tools"]')).to_contain_text(
        "代码工具（模块与评测）" if lang == "zh" else "Code tools (modules and evals)")
    expect(page.locator("main .loading")).to_have_count(0)
    screenshot(page, f"code-tools-review-{lang}")
    publisher_texts = [release["displayName"], release["description"]]  # quoted data, the publisher's language
    foreign = foreign_texts(page_texts(page, f'li[data-release="{release["releaseId"]}"]'), lang,
                            [skill, *publisher_texts])
    assert foreign == []
    violations = axe_violations(page)
    assert violations == [], describe(violations)
