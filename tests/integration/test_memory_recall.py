"""memory-recall, memory-context, permissions, memories and audit through the handlers (moto)."""

from __future__ import annotations

import boto3
import pytest

from skillcore import faults
from tests.support import invoke, load_event, load_function


@pytest.fixture
def fns(aws):
    faults.clear()
    yield load_function("RpcFunction"), load_function("ChatTurnFunction")
    faults.clear()


def new_agent(rpc, name="Mika", user="user-alice"):
    status, agent = invoke(rpc, load_event("rpc_create_agent.json", user=user, body={"name": name}))
    assert status == 201
    return agent


def remember(rpc, agent, content, title="note", importance=3, user="user-alice"):
    status, memory = invoke(rpc, load_event(
        "rpc_create_memory.json", user=user, path_ids={"AGENT_ID": agent["agentId"]},
        body={"title": title, "content": content, "importance": importance},
    ))
    assert status == 201, memory
    return memory


def grant(rpc, skill="memory-recall", granted=True, scope=None, user="user-alice"):
    body = {"skillId": skill, "permissionCode": "memory:read", "scope": scope or {"type": "user"}, "granted": granted}
    return invoke(rpc, load_event("rpc_patch_permission.json", user=user, body=body))


def say(chat, conv, text, cid, user="user-alice"):
    status, body = invoke(chat, load_event(
        "chat_post_message.json", user=user, path_ids={"CONVERSATION_ID": conv},
        body={"clientMessageId": cid, "text": text},
    ))
    assert status == 200, body
    return body


def audit(rpc, user="user-alice"):
    _, page = invoke(rpc, load_event("rpc_list_audit_events.json", user=user))
    return page["items"]


def test_catalog_lists_memory_skills_with_permissions(fns):
    rpc, _ = fns
    _, page = invoke(rpc, load_event("rpc_list_skills.json"))
    by_id = {i["skillId"]: i for i in page["items"]}
    assert {"memory-recall", "memory-context", "goal-setting", "daily-plan"} <= set(by_id)
    recall = by_id["memory-recall"]
    assert recall["kind"] == "tool" and recall["enabled"] is True
    assert recall["permissions"] == [{"code": "memory:read", "riskLevel": "L1", "approvalMode": "persistent", "granted": False}]
    grant(rpc)
    _, page = invoke(rpc, load_event("rpc_list_skills.json"))
    assert {i["skillId"]: i for i in page["items"]}["memory-recall"]["permissions"][0]["granted"] is True


def test_recall_without_grant_is_denied_and_reads_nothing(fns):
    rpc, chat = fns
    agent = new_agent(rpc)
    remember(rpc, agent, "我喜欢爬山")
    body = say(chat, agent["defaultConversationId"], "你还记得我喜欢什么吗", "r1")
    assert body["run"]["kind"] == "tool" and body["run"]["outcome"] == "denied"
    assert body["run"]["skillId"] == "memory-recall"
    assert "Skills 页面" in body["reply"]["text"] and "爬山" not in body["reply"]["text"]  # in the user's language
    events = audit(rpc)
    assert [(e["action"], e["decision"]) for e in events] == [("tool.execute", "denied")]
    assert events[0]["reason"] == "grant_missing" and events[0]["metadata"]["missingPermissions"] == ["memory:read"]


def test_recall_with_grant_uses_only_this_agents_memories(fns):
    rpc, chat = fns
    mika, other = new_agent(rpc, "Mika"), new_agent(rpc, "Other")
    remember(rpc, mika, "我喜欢爬山", importance=4)
    remember(rpc, mika, "我养了一只猫")
    remember(rpc, other, "我喜欢游泳")
    assert grant(rpc)[0] == 200
    body = say(chat, mika["defaultConversationId"], "你还记得我喜欢什么吗", "r2")
    assert body["run"] == body["run"] | {"kind": "tool", "outcome": "succeeded", "memoriesUsed": 1}
    assert body["reply"]["text"] == "我记得这些：\n我喜欢爬山"
    events = audit(rpc)
    assert [(e["action"], e["decision"]) for e in events[:2]] == [("tool.execute", "succeeded"), ("tool.execute", "allowed")]
    assert events[0]["metadata"]["results"] == 1 and len(events[0]["metadata"]["inputSha256"]) == 64


def test_explicit_command_and_no_match(fns):
    rpc, chat = fns
    agent = new_agent(rpc)
    remember(rpc, agent, "My sister is called Ana")
    grant(rpc)
    body = say(chat, agent["defaultConversationId"], "/memory-recall sister", "c1")
    assert body["run"]["kind"] == "tool" and body["reply"]["text"].endswith("My sister is called Ana")
    body = say(chat, agent["defaultConversationId"], "/memory-recall favourite colour", "c2")
    assert body["run"]["outcome"] == "succeeded" and body["run"]["memoriesUsed"] == 0
    assert body["reply"]["text"] == "I can't recall that exactly."
    _, runs = invoke(rpc, load_event("rpc_list_runs.json"))
    assert runs["items"][0]["kind"] == "tool" and runs["items"][0]["skillId"] == "memory-recall"


def test_disabled_recall_does_not_run_the_tool(fns):
    rpc, chat = fns
    agent = new_agent(rpc)
    grant(rpc)
    status, item = invoke(rpc, load_event(
        "rpc_patch_skill.json", path_ids={"goal-setting": "memory-recall"}, body={"enabled": False}
    ))
    assert status == 200 and item["skillId"] == "memory-recall" and item["enabled"] is False
    body = say(chat, agent["defaultConversationId"], "do you remember my sister?", "d1")
    assert body["run"]["kind"] != "tool"
    assert all(e["action"] != "tool.execute" for e in audit(rpc))


def test_recall_never_runs_in_group_chats(fns):
    rpc, chat = fns
    a, b = new_agent(rpc, "A"), new_agent(rpc, "B")
    grant(rpc)
    _, group = invoke(rpc, load_event("rpc_create_group.json", body={"kind": "group", "agentIds": [a["agentId"], b["agentId"]]}))
    body = say(chat, group["conversationId"], "你还记得我喜欢什么吗", "g1")
    assert body["run"]["kind"] == "plain"


def test_agent_scope_grant_and_revoke(fns):
    rpc, chat = fns
    mika, other = new_agent(rpc, "Mika"), new_agent(rpc, "Other")
    remember(rpc, mika, "I like tea")
    remember(rpc, other, "I like tea too")
    status, g = grant(rpc, scope={"type": "agent", "agentId": mika["agentId"]})
    assert status == 200 and g["scope"] == {"type": "agent", "agentId": mika["agentId"]} and g["status"] == "active"
    assert say(chat, mika["defaultConversationId"], "do you remember what I like?", "a1")["run"]["outcome"] == "succeeded"
    assert say(chat, other["defaultConversationId"], "do you remember what I like?", "a2")["run"]["outcome"] == "denied"
    status, g = grant(rpc, granted=False, scope={"type": "agent", "agentId": mika["agentId"]})
    assert g["status"] == "revoked" and g["revokedAt"]
    assert say(chat, mika["defaultConversationId"], "do you remember what I like?", "a3")["run"]["outcome"] == "denied"
    actions = [e["action"] for e in audit(rpc) if e["action"].startswith("permission")]
    assert actions == ["permission.revoke", "permission.grant"]


def test_tool_timeout_is_failed_and_invents_nothing(fns):
    rpc, chat = fns
    agent = new_agent(rpc)
    remember(rpc, agent, "我喜欢爬山")
    grant(rpc)
    faults.arm("tool.handler", 1, "timeout")
    body = say(chat, agent["defaultConversationId"], "你还记得我喜欢什么吗", "t1")
    assert body["run"]["outcome"] == "failed" and "爬山" not in body["reply"]["text"]
    assert body["reply"]["text"] == "我想不起确切的内容了。"
    execute = audit(rpc)[0]
    assert execute["action"] == "tool.execute" and execute["decision"] == "failed" and execute["metadata"]["errorCode"] == "timeout"


def test_memory_context_injects_only_with_grant(fns):
    rpc, chat = fns
    agent = new_agent(rpc)
    remember(rpc, agent, "I like tea")
    body = say(chat, agent["defaultConversationId"], "good morning", "m1")
    assert "memoriesUsed" not in body["run"] and "[memories" not in body["reply"]["text"]
    grant(rpc, skill="memory-context")
    body = say(chat, agent["defaultConversationId"], "good evening", "m2")
    assert body["run"]["memoriesUsed"] == 1 and body["reply"]["text"].endswith("[memories: 1]")


def test_a_forgotten_memory_is_never_recalled(fns):
    """The Memories API's own rules run on the store fakes (tests/unit/test_rpc_on_fakes.py); here, the recall."""
    rpc, chat = fns
    agent = new_agent(rpc)
    remember(rpc, agent, "I like tea")
    gone = remember(rpc, agent, "I like coffee")
    status, forgotten = invoke(rpc, load_event("rpc_forget_memory.json", path_ids={"AGENT_ID": agent["agentId"], "MEMORY_ID": gone["memoryId"]}))
    assert status == 200 and forgotten["status"] == "forgotten"
    grant(rpc)
    body = say(chat, agent["defaultConversationId"], "do you remember what I like?", "f1")
    assert "coffee" not in body["reply"]["text"] and "tea" in body["reply"]["text"]


def test_data_minimisation_canaries(fns, capsys):
    rpc, chat = fns
    agent = new_agent(rpc)
    remember(rpc, agent, "CANARY-MEMORY-7f3a likes tea")
    grant(rpc)
    grant(rpc, skill="memory-context")
    say(chat, agent["defaultConversationId"], "do you remember tea CANARY-MESSAGE-91bc?", "k1")
    say(chat, agent["defaultConversationId"], "/memory-recall CANARY-MESSAGE-91bc", "k2")
    say(chat, agent["defaultConversationId"], "hello CANARY-MESSAGE-91bc", "k3")
    client = boto3.client("dynamodb", region_name="us-east-1")
    import os

    for env in ("SKILLS_TABLE_AUDIT", "SKILLS_TABLE_TOOL_EXECUTIONS", "SKILLS_TABLE_RUNS"):
        items = client.scan(TableName=os.environ[env])["Items"]
        assert items, env
        dump = repr(items)
        assert "CANARY" not in dump, env
    logs = capsys.readouterr()
    assert "CANARY" not in logs.out + logs.err
