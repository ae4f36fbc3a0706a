"""The page's limits come from the API: the profile the page loads (`GET /rpc/me`) answers `limits`, and the
fields' maxlength, the counters and the quotas show those numbers, never a copy kept in the page. The second
test changes the numbers on the way to the page (the same request, answered with other limits) and sees the
page follow them, which no constant in the page could do."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import PageApi
from tests.stack.conftest import StackClient

PROFILE_URL = re.compile(r"/rpc/me$")


def test_the_fields_carry_the_limits_the_profile_answers(page: Page, stack: StackClient, signed_in: Any) -> None:
    signed_in(section="hosted", prefix="limits")
    limits = PageApi(page, stack).ok("GET", "/rpc/me")["limits"]
    assert limits["chatMessage"] == 4000 and limits["hostedEndpoints"] == 10, limits
    expect(page.locator("#hosted-displayName")).to_have_attribute("maxlength", str(limits["endpointDisplayName"]))
    expect(page.locator("#hosted-url")).to_have_attribute("maxlength", str(limits["endpointUrl"]))
    expect(page.locator("#hosted-authToken")).to_have_attribute("maxlength", str(limits["endpointToken"]))
    expect(page.get_by_test_id("quota")).to_have_text(f"已登记 0 / {limits['hostedEndpoints']} 个端点")

    page.goto("/skills/#/agents")
    expect(page.locator("#agent-name")).to_have_attribute("maxlength", str(limits["agentName"]))
    expect(page.locator("#agent-persona")).to_have_attribute("maxlength", str(limits["agentPersona"]))
    expect(page.locator("#agent-name-count")).to_have_text(f"0/{limits['agentName']} 字")


def test_the_page_follows_the_limits_the_api_answers(page: Page, stack: StackClient, signed_in: Any) -> None:
    served = {"agentName": 7, "chatMessage": 12, "hostedEndpoints": 3, "endpointDisplayName": 9}

    def smaller_limits(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        body["limits"].update(served)
        route.fulfill(response=response, json=body)

    user = signed_in(section="skills", prefix="limits")
    api = PageApi(page, stack)
    api.ok("PUT", "/rpc/me", {"timezone": "Asia/Shanghai"})
    agent = api.ok("POST", "/rpc/agents", {"name": "Mika"}, status=201)
    page.route(PROFILE_URL, smaller_limits)
    page.goto(f"/skills/#/agents?agent={agent['agentId']}")
    page.reload()
    expect(page.get_by_test_id("user")).to_have_text(user)

    # The agent's name: the maxlength and the counter say 7, and typing stops there.
    name = page.locator("#agent-name")
    expect(name).to_have_attribute("maxlength", "7")
    name.press_sequentially("abcdefghij")
    expect(name).to_have_value("abcdefg")
    expect(page.locator("#agent-name-count")).to_have_text("7/7 字")

    # The chat box: 12 characters.
    box = page.locator("#chat-input")
    expect(box).to_have_attribute("maxlength", "12")
    expect(page.locator("#chat-count")).to_contain_text("/12")

    # Hosted workflows: the quota and a field's maxlength.
    page.goto("/skills/#/hosted")
    expect(page.get_by_test_id("quota")).to_have_text("已登记 0 / 3 个端点")
    expect(page.locator("#hosted-displayName")).to_have_attribute("maxlength", "9")
