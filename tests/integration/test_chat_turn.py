"""The chat turn through ChatTurnFunction with events/chat_post_message.json, and its effects via RpcFunction."""

from __future__ import annotations

import pytest

from tests.support import invoke, load_event, load_function


@pytest.fixture
def fns(aws):
    return load_function("RpcFunction"), load_function("ChatTurnFunction")


def new_agent(rpc, user="user-alice", name="Mika"):
    status, agent = invoke(rpc, load_event("rpc_create_agent.json", user=user, body={"name": name}))
    assert status == 201
    return agent


def say(chat, conv, text, cid, user="user-alice", **extra):
    event = load_event(
        "chat_post_message.json", user=user, path_ids={"CONVERSATION_ID": conv},
        body={"clientMessageId": cid, "text": text, **extra},
    )
    return invoke(chat, event)


def history(rpc, conv, user="user-alice"):
    status, page = invoke(rpc, load_event("rpc_list_messages.json", user=user, path_ids={"CONVERSATION_ID": conv}))
    assert status == 200
    return page["items"]


def test_plain_turn_writes_messages_and_metadata(fns):
    rpc, chat = fns
    agent = new_agent(rpc)
    conv = agent["defaultConversationId"]
    status, body = say(chat, conv, "Hello there", "c1")
    assert status == 200, body
    assert body["userMessage"]["text"] == "Hello there" and body["userMessage"]["role"] == "user"
    assert body["reply"]["role"] == "assistant" and body["reply"]["agentId"] == agent["agentId"]
    assert body["reply"]["text"] == "I hear you: “Hello there”."
    assert body["run"]["kind"] == "plain" and body["run"]["outcome"] == "succeeded"
    assert [m["messageId"] for m in history(rpc, conv)] == [body["userMessage"]["messageId"], body["reply"]["messageId"]]
    _, c = invoke(rpc, load_event("rpc_list_conversations.json"))
    summary = c["items"][0]
    assert summary["messageCount"] == 2
    assert summary["lastMessagePreview"] == body["reply"]["text"][:80]
    assert summary["lastMessageAt"] == body["reply"]["createdAt"]
    _, agents = invoke(rpc, load_event("rpc_list_agents.json"))
    assert agents["items"][0]["lastReplyAt"] == body["reply"]["createdAt"]


def test_duplicate_client_message_id_replays_and_conflicts(fns):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    first = say(chat, conv, "/goal", "same")
    again = say(chat, conv, "/goal", "same")
    assert first == again
    assert len(history(rpc, conv)) == 2
    status, body = say(chat, conv, "something else", "same")
    assert status == 409 and body["error"]["code"] == "client_message_conflict"
    # the workflow did not advance on the replay: the next message is taken as the goal
    _, step = say(chat, conv, "Run a marathon", "next")
    # (a bare `/goal` in a new conversation shows no language: the session started in the default, Chinese)
    assert "Run a marathon" in step["reply"]["text"] and "你希望什么时候完成" in step["reply"]["text"]


def test_goal_setting_workflow_end_to_end(fns):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    _, r1 = say(chat, conv, "I want to set a goal", "g1")
    assert r1["run"] == r1["run"] | {"kind": "workflow", "skillId": "goal-setting", "skillVersion": "1.0.0"}
    _, r2 = say(chat, conv, "Read 12 books", "g2")
    _, r3 = say(chat, conv, "2027-12-31", "g3")
    assert "Read 12 books" in r3["reply"]["text"] and "2027-12-31" in r3["reply"]["text"]
    _, r4 = say(chat, conv, "yes", "g4")
    assert "Goal: “Read 12 books”" in r4["reply"]["text"] and "Deadline: “2027-12-31”" in r4["reply"]["text"]
    _, r5 = say(chat, conv, "thanks!", "g5")
    assert r5["run"]["kind"] == "plain"
    _, runs = invoke(rpc, load_event("rpc_list_runs.json"))
    assert [r["kind"] for r in runs["items"]] == ["plain", "workflow", "workflow", "workflow", "workflow"]
    assert all(r["conversationId"] == conv and r["at"] for r in runs["items"])


def test_goal_setting_in_chinese_and_cancel(fns):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    _, r1 = say(chat, conv, "帮我定个目标", "z1")
    assert r1["run"]["kind"] == "workflow" and "目标" in r1["reply"]["text"]
    _, r2 = say(chat, conv, "/cancel", "z2")
    assert r2["run"]["kind"] == "workflow" and "已取消" in r2["reply"]["text"]
    _, r3 = say(chat, conv, "学会游泳", "z3")
    assert r3["run"]["kind"] == "plain"


def test_disabled_workflow_is_never_triggered(fns):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    status, item = invoke(rpc, load_event("rpc_patch_skill.json", body={"enabled": False}))
    assert status == 200 and item["enabled"] is False and item["skillId"] == "goal-setting"
    _, r = say(chat, conv, "/goal", "d1")
    assert r["run"]["kind"] == "plain"
    invoke(rpc, load_event("rpc_patch_skill.json", body={"enabled": True}))
    _, r = say(chat, conv, "/goal", "d2")
    assert r["run"]["kind"] == "workflow"


def test_disabling_mid_session_ends_the_workflow(fns):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    say(chat, conv, "/goal", "m1")
    invoke(rpc, load_event("rpc_patch_skill.json", body={"enabled": False}))
    _, r = say(chat, conv, "Learn to swim", "m2")
    assert r["run"]["kind"] == "plain"


def test_prompt_skill_reaches_the_system_prompt(fns):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    _, r = say(chat, conv, "Can you help me plan my day?", "p1")
    assert r["run"] == r["run"] | {"kind": "prompt", "skillId": "daily-plan", "outcome": "succeeded"}
    assert r["reply"]["text"].endswith("[skills: daily-plan]")


def test_group_chat_answering_agent(fns):
    rpc, chat = fns
    a, b = new_agent(rpc, name="A"), new_agent(rpc, name="B")
    _, group = invoke(rpc, load_event("rpc_create_group.json", body={"kind": "group", "agentIds": [a["agentId"], b["agentId"]]}))
    conv = group["conversationId"]
    _, r = say(chat, conv, "hi all", "x1")
    assert r["reply"]["agentId"] == a["agentId"]
    _, r = say(chat, conv, "hi B", "x2", agentId=b["agentId"])
    assert r["reply"]["agentId"] == b["agentId"]
    status, err = say(chat, conv, "hi C", "x3", agentId="nobody")
    assert status == 404 and err["error"]["code"] == "agent_not_found"


def test_someone_elses_conversation_is_404(fns):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    status, body = say(chat, conv, "let me in", "e1", user="user-mallory")
    assert status == 404 and body["error"]["code"] == "not_found"
    assert history(rpc, conv) == []


@pytest.mark.parametrize(
    "body",
    [
        {"clientMessageId": "bad id!", "text": "x"},
        {"clientMessageId": "ok", "text": ""},
        {"clientMessageId": "ok", "text": "x" * 4001},
        {"clientMessageId": "ok", "text": "x", "conversationId": "other"},
        {"text": "x"},
    ],
)
def test_invalid_messages_are_422(fns, body):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    status, payload = invoke(chat, load_event("chat_post_message.json", path_ids={"CONVERSATION_ID": conv}, body=body))
    assert status == 422 and payload["error"]["code"] == "validation_error"


def test_history_pages_oldest_first(fns):
    rpc, chat = fns
    conv = new_agent(rpc)["defaultConversationId"]
    for i in range(3):
        say(chat, conv, f"message {i}", f"h{i}")
    texts, cursor = [], None
    while True:
        query = {"limit": "4"} | ({"cursor": cursor} if cursor else {})
        _, page = invoke(rpc, load_event("rpc_list_messages.json", path_ids={"CONVERSATION_ID": conv}, query=query))
        texts += [m["text"] for m in page["items"] if m["role"] == "user"]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert texts == ["message 0", "message 1", "message 2"]
