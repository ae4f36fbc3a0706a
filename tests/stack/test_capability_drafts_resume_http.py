"""Conversational creation a person can finish, over real HTTP (issue 24 point 5; the local gateway, RpcFunction,
DynamoDB Local, the offline drafter): open drafts listed (`GET /rpc/user-capability-drafts`, the API's envelope
and paging, newest first, `status` filtered, owner from the token) and resumed (`GET .../{draftId}`, another
user's is 404); a natural list of steps answered once; a step dropped; a readable display name."""

from __future__ import annotations

from typing import Any

from .conftest import Caller, StackClient

BASE = "/rpc/user-capability-drafts"
DESCRIPTION = "\n".join(["名称：weekly_plan", "触发词：周计划", "目标：每周一规划这一周", "完成条件：三件重点都写下了"])


def start(user: Caller, description: str = DESCRIPTION) -> dict[str, Any]:
    return user.ok("POST", BASE, {"description": description}, status=201)


def test_open_drafts_are_listed_newest_first_paged_and_only_the_owners(stack: StackClient) -> None:
    alice = Caller(stack, "resume")
    first, second, third = start(alice), start(alice), start(alice)
    page = alice.ok("GET", f"{BASE}?status=open&limit=2")
    assert [d["draftId"] for d in page["items"]] == [third["draftId"], second["draftId"]]
    assert page["nextCursor"]
    rest = alice.ok("GET", f"{BASE}?status=open&limit=2&cursor={page['nextCursor']}")
    assert [d["draftId"] for d in rest["items"]] == [first["draftId"]] and rest["nextCursor"] is None
    listed = page["items"][0]
    assert listed["description"] == DESCRIPTION and listed["status"] == "open" and listed["gaps"]
    assert listed["createdAt"] and listed["updatedAt"]
    # resumed as it was
    assert alice.ok("GET", f"{BASE}/{first['draftId']}") == {**first, "updatedAt": first["updatedAt"]}

    bob = Caller(stack, "resume")
    assert bob.ok("GET", BASE) == {"items": [], "nextCursor": None}
    status, hidden = bob.call("GET", f"{BASE}/{first['draftId']}")
    assert status == 404 and hidden["error"]["code"] == "not_found"
    status, bad = alice.call("GET", f"{BASE}?status=nonsense")
    assert status == 422 and bad["error"]["code"] == "validation_error"


def test_a_natural_list_of_steps_a_dropped_step_and_a_confirmed_draft(stack: StackClient) -> None:
    alice = Caller(stack, "resume")
    draft = start(alice)
    (steps_gap,) = draft["gaps"]
    assert steps_gap["path"] == "/workflow/steps" and "每行一步" in steps_gap["question"]
    draft = alice.ok("POST", f"{BASE}/{draft['draftId']}/generate", {"answers": [
        {"gapId": steps_gap["gapId"], "text": "1. memory-recall: 回顾上周\n2. 用日历排三件事\n3. goal-setting: 定下本周目标"}]})
    # the list is the steps: only the step with neither a capability nor a tool is asked about, with its text
    (step_gap,) = draft["gaps"]
    assert step_gap["path"] == "/workflow/steps/1" and step_gap["instruction"] == "用日历排三件事"
    assert [s["instruction"] for s in draft["proposal"]["workflow"]["steps"]] == ["回顾上周", "定下本周目标"]
    assert draft["proposal"]["displayName"] == "每周一规划这一周"  # readable, not weekly_plan

    # dropping is only for a step's gap; dropping it leaves nothing to ask
    status, refused = alice.call("POST", f"{BASE}/{draft['draftId']}/generate",
                                 {"answers": [{"gapId": step_gap["gapId"], "drop": True, "text": "x"}]})
    assert status == 422 and refused["error"]["code"] == "validation_error"
    draft = alice.ok("POST", f"{BASE}/{draft['draftId']}/generate",
                     {"answers": [{"gapId": step_gap["gapId"], "drop": True}]})
    assert draft["gaps"] == [] and draft["revision"] == 3
    assert len(draft["proposal"]["workflow"]["steps"]) == 2

    listed = alice.ok("GET", f"{BASE}?status=open")["items"]
    assert [d["draftId"] for d in listed] == [draft["draftId"]] and listed[0]["revision"] == 3
    capability = alice.ok("POST", f"{BASE}/{draft['draftId']}/confirm", {"revision": 3}, status=201)
    assert capability["displayName"] == "每周一规划这一周"
    assert alice.ok("GET", f"{BASE}?status=open")["items"] == []
    assert [d["draftId"] for d in alice.ok("GET", f"{BASE}?status=confirmed")["items"]] == [draft["draftId"]]


def test_a_drop_answer_to_a_gap_that_is_not_about_a_step_is_refused(stack: StackClient) -> None:
    alice = Caller(stack, "resume")
    draft = start(alice, "每周一规划这一周")
    name_gap = next(g for g in draft["gaps"] if g["path"] == "/name")
    status, refused = alice.call("POST", f"{BASE}/{draft['draftId']}/generate",
                                 {"answers": [{"gapId": name_gap["gapId"], "drop": True}]})
    assert status == 422 and refused["error"]["details"]["errors"][0]["path"] == "answers/0/drop"
    assert alice.ok("GET", f"{BASE}/{draft['draftId']}")["revision"] == 1  # nothing stored
