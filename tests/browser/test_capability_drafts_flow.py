"""Conversational creation a person can finish (issue 24 point 5), in Chromium on the local stack with the
offline drafter, in both languages: the steps answered once in a multi-line box (its syntax explained there), the
steps kept as written and each one the drafter asks about shown with its own text, answered by picking a built-in
capability or dropping it; no internal path beside a question; a readable display name; the draft left and found
again among the open drafts, resumed and confirmed."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageApi, screenshot
from tests.local_stack import StackClient

WORDS = {
    "zh": {"talk": "通过对话创建", "describe": "描述", "start": "开始", "answer": "回答", "again": "根据回答重新生成",
           "how": "这一步怎么做", "confirm": "确认创建草稿", "open": "进行中的对话草稿", "resume": "继续",
           "section": "#/capabilities", "elsewhere": "#/skills", "step": "步骤 {n}：", "syntax": "步骤写法：每行一步",
           "noGaps": "没有待回答的问题：可以确认创建。", "title": "每周一规划这一周",
           "description": "\n".join(["名称：weekly_plan", "触发词：周计划", "目标：每周一规划这一周",
                                     "完成条件：三件重点都写下了"]),
           "steps": "1. 回顾上周\n2. 列出本周三件重点\n3. 发给我看", "first": "回顾上周", "second": "列出本周三件重点"},
    "en": {"talk": "Create by conversation", "describe": "Description", "start": "Start", "answer": "Answer",
           "again": "Draft again with the answers", "how": "How this step is done",
           "confirm": "Confirm and create the draft", "open": "Drafts in progress", "resume": "Resume",
           "section": "#/capabilities", "elsewhere": "#/skills", "step": "Step {n}:",
           "syntax": "How to write steps: one per line", "noGaps": "No open question: the proposal can be confirmed.",
           "title": "Plan the week on Mondays",
           "description": "\n".join(["name: weekly_plan", "when to use: weekly plan", "goal: Plan the week on Mondays",
                                     "done when: Three priorities are written down"]),
           "steps": "review last week\nlist three priorities\nsend them to me", "first": "review last week",
           "second": "list three priorities"},
}


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_draft_with_natural_steps_a_dropped_step_left_and_resumed(page: Page, stack: StackClient, signed_in: Any,
                                                                    language: str) -> None:
    w = WORDS[language]
    signed_in(section="capabilities", prefix="drafts")
    if language == "en":
        page.get_by_role("button", name="English").click()
    page.get_by_role("button", name=w["talk"]).click()
    flow = page.get_by_test_id("draft-flow")
    expect(flow).to_contain_text(w["syntax"])  # explained where the description is asked for
    flow.get_by_label(w["describe"], exact=True).fill(w["description"])
    with page.expect_response(lambda r: r.url.endswith("/rpc/user-capability-drafts")) as got:
        flow.get_by_role("button", name=w["start"]).click()
    (gap,) = got.value.json()["gaps"]
    assert gap["path"] == "/workflow/steps"

    # the steps are asked in a multi-line box, with the syntax beside it, and no internal path anywhere
    item = flow.locator(f'li[data-gap="{gap["gapId"]}"]')
    box = item.get_by_label(w["answer"], exact=True)
    assert box.evaluate("e => e.tagName") == "TEXTAREA"
    expect(box).to_have_accessible_description(re.compile(w["syntax"]))
    box.fill(w["steps"])
    expect(flow).not_to_contain_text("/workflow")
    with page.expect_response(lambda r: r.url.endswith("/generate")) as got:
        flow.get_by_role("button", name=w["again"]).click()
    draft = got.value.json()
    # each step is kept as written: the drafter asks about each by its own text, never for the list again
    assert [g["instruction"] for g in draft["gaps"]] == [w["first"], w["second"], draft["gaps"][2]["instruction"]]
    assert all(g["path"].startswith("/workflow/steps/") for g in draft["gaps"])
    steps = flow.get_by_test_id("gap-step")
    expect(steps).to_have_count(3)
    expect(steps.nth(0)).to_have_text(f"{w['step'].format(n=1)} {w['first']}")
    expect(flow).not_to_contain_text("/workflow")
    screenshot(page, f"drafts-steps-{language}")

    gaps = flow.locator("li[data-gap]")
    gaps.nth(0).get_by_label(w["how"]).select_option("skill:memory-recall")
    gaps.nth(1).get_by_label(w["how"]).select_option("skill:goal-setting")
    gaps.nth(2).get_by_label(w["how"]).select_option("drop")
    with page.expect_request(lambda r: r.url.endswith("/generate")) as sent:
        flow.get_by_role("button", name=w["again"]).click()
    answers = sent.value.post_data_json["answers"]
    assert answers == [{"gapId": draft["gaps"][0]["gapId"], "text": "memory-recall"},
                       {"gapId": draft["gaps"][1]["gapId"], "text": "goal-setting"},
                       {"gapId": draft["gaps"][2]["gapId"], "drop": True}]
    expect(flow.get_by_text(w["noGaps"])).to_be_visible()
    proposal = flow.get_by_test_id("proposal")
    expect(proposal.get_by_test_id("proposal-steps").locator("li")).to_have_count(2)
    expect(proposal).to_contain_text(w["title"])  # the display name is readable, not weekly_plan

    # leaving the section loses nothing: the draft is among the open ones, and resumes where it was
    page.goto(f"/skills/{w['elsewhere']}")
    expect(page.locator("main [data-skill]").first).to_be_visible()
    page.goto(f"/skills/{w['section']}")
    opened = page.get_by_test_id("open-drafts")
    expect(opened.get_by_role("heading", name=w["open"])).to_be_visible()
    row = opened.locator(f'li[data-draft="{draft["draftId"]}"]')
    expect(row).to_contain_text(w["title"])
    screenshot(page, f"drafts-open-{language}")
    row.get_by_role("button", name=re.compile(w["resume"])).click()
    flow = page.get_by_test_id("draft-flow")
    expect(flow.get_by_test_id("proposal")).to_contain_text(w["title"])
    with page.expect_response(lambda r: r.url.endswith("/confirm")) as confirmed:
        flow.get_by_role("button", name=w["confirm"]).click()
    assert confirmed.value.status == 201
    assert confirmed.value.json()["displayName"] == w["title"]
    api = PageApi(page, stack)
    assert api.ok("GET", "/rpc/user-capability-drafts?status=open")["items"] == []
