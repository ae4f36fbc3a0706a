"""Installed code tools on the MCP face, with the official MCP client over Streamable HTTP (as an agent host
connects): the code tool of an installed skill is listed as a tool of that user only, with the server's own
description and the package's input schema stripped of its texts; called, it runs in McpFunction through the
same service as a chat turn (the sandbox, the audit with codes), a hostile module's outcome its own error code;
another user neither sees it nor can call it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.code_package_support import HOSTILE_EVALS, install, publish
from tests.sandbox_support import wasm

from .conftest import StackClient
from .test_mcp_http import EXPECTED_TOOLS, Host, run

pytestmark = pytest.mark.stack


def test_an_installed_code_tool_is_a_tool_of_the_agent_host(stack: StackClient, tmp_path: Path) -> None:
    import uuid

    clean, hostile = f"streak-{uuid.uuid4().hex[:8]}", f"a-trap-{uuid.uuid4().hex[:8]}"  # the hostile sorts first
    publish(stack, tmp_path, clean)
    publish(stack, tmp_path, hostile, wasm=wasm("two_faced"), evals=HOSTILE_EVALS)
    host, stranger = Host(stack), Host(stack)
    install(stack, host, clean)
    agent = host.agent()

    async def flow() -> tuple[Any, ...]:
        async with host.session() as client:
            listed = await client.list_tools()
            scored = await client.call_tool("code_streak_score", {
                "agentId": agent["agentId"], "arguments": {"days": [1, 1, 0, 1, 1, 1]}})
            invalid = await client.call_tool("code_streak_score", {
                "agentId": agent["agentId"], "arguments": {"days": "many"}})
            not_mine = await client.call_tool("code_streak_score", {
                "agentId": "01NOTMINE", "arguments": {"days": []}})
        async with stranger.session() as client:
            theirs = await client.list_tools()
            refused = await client.call_tool("code_streak_score", {
                "agentId": agent["agentId"], "arguments": {"days": []}})
        return listed, scored, invalid, not_mine, theirs, refused

    listed, scored, invalid, not_mine, theirs, refused = run(flow)
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == EXPECTED_TOOLS | {"code_streak_score"}
    tool = tools["code_streak_score"]
    assert tool.description.startswith(f"Runs the code tool streak-score of your installed skill {clean} 1.0.0")
    assert tool.input_schema["required"] == ["agentId", "arguments"]
    assert tool.input_schema["properties"]["arguments"]["required"] == ["days"]
    assert scored.is_error is False
    assert scored.structured_content == {"skillId": clean, "version": "1.0.0", "toolId": "streak-score",
                                         "output": {"current": 3, "longest": 3, "done": 5, "days": 6}}
    assert invalid.is_error and invalid.structured_content["error"]["code"] == "validation_error"
    assert not_mine.is_error and not_mine.structured_content["error"]["code"] == "agent_not_found"
    assert {t.name for t in theirs.tools} == EXPECTED_TOOLS
    assert refused.is_error and refused.structured_content["error"]["code"] == "unknown_tool"

    # The hostile module, installed now: its fuel runs out in McpFunction, a clean call after it works.
    install(stack, host, hostile)

    async def hostile_flow() -> tuple[Any, ...]:
        async with host.session() as client:
            names = [t.name for t in (await client.list_tools()).tools]
            spun = await client.call_tool("code_streak_score", {
                "agentId": agent["agentId"], "arguments": {"days": [1, 1, 0, 1]}})
            return names, spun

    names, spun = run(hostile_flow)
    # Two installed skills with a tool of one name: one tool, the first skill's in skill id order.
    assert names.count("code_streak_score") == 1
    assert spun.is_error and spun.structured_content["error"]["code"] == "sandbox_fuel_exhausted"
    events = [(e["skillId"], e["metadata"].get("errorCode")) for e in host.audit()
              if e["action"] == "tool.execute" and e["decision"] == "failed"]
    assert events == [(hostile, "sandbox_fuel_exhausted"), (clean, "invalid_input")]
