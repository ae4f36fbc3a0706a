"""A bare `/memory-recall` (no question) recalls the agent's most important recent memories, within the
tool's caps, through the same PolicyGate and ToolRunner path as a question."""

from __future__ import annotations

from skillcore.memory.retrieval import MAX_RESULTS
from tests.integration.test_memory_recall import audit, fns, grant, new_agent, remember, say

__all__ = ["fns"]  # the fixture, shared with the question tests


def test_a_bare_command_recalls_the_most_important_memories(fns):
    rpc, chat = fns
    agent, other = new_agent(rpc), new_agent(rpc, "Other")
    for i in range(MAX_RESULTS + 2):
        remember(rpc, agent, f"memory {i}", title=f"t{i}", importance=1 + i % 5)
    remember(rpc, other, "another agent's memory", importance=5)
    assert grant(rpc)[0] == 200
    body = say(chat, agent["defaultConversationId"], "/memory-recall", "b1")
    assert body["run"] == body["run"] | {"kind": "tool", "outcome": "succeeded", "memoriesUsed": MAX_RESULTS}
    lines = body["reply"]["text"].split("\n")
    # By importance (5, 4, 3, 3, 2, 2), the more recently updated first among equals; the 1s fall off the cap.
    assert lines[1:] == ["memory 4", "memory 3", "memory 7", "memory 2", "memory 6", "memory 1"]
    assert "another agent's memory" not in body["reply"]["text"]
    events = audit(rpc)
    assert [(e["action"], e["decision"]) for e in events[:2]] == [("tool.execute", "succeeded"), ("tool.execute", "allowed")]
    assert events[0]["metadata"]["results"] == MAX_RESULTS


def test_a_bare_command_without_memories_or_grant(fns):
    rpc, chat = fns
    agent = new_agent(rpc)
    body = say(chat, agent["defaultConversationId"], "/memory-recall", "b1")
    assert body["run"]["outcome"] == "denied" and body["run"]["kind"] == "tool"
    assert grant(rpc)[0] == 200
    body = say(chat, agent["defaultConversationId"], "/memory-recall", "b2")
    assert body["run"] == body["run"] | {"outcome": "succeeded", "memoriesUsed": 0}
