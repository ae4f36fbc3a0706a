"""Items that no longer read (written straight to the table, as a bad restore or an old version would) among
other users' due work, over real HTTP: the scan runs everyone else's jobs, counts and logs the bad items,
takes them out of the due index; the owner's list routes skip them, a get answers 500 `internal` with
nothing of the item in it, and the owner can still delete the job."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from skillcore_local.ddb_local import DynamoDBLocal, client
from skillcore_local.stack import LocalStack

from .conftest import JWT_SECRET, Caller, StackClient


class User(Caller):
    prefix = "corrupt"

    def setup(self, text: str) -> tuple[dict, dict]:
        self.ok("PUT", "/rpc/me", {"timezone": "Asia/Shanghai"})
        agent = self.agent()
        for skill, code in (("memory-extraction", "memory:write"), ("goal-check-in-reminder", "proactive_message:write")):
            self.ok("PATCH", "/rpc/skills/permissions",
                    {"skillId": skill, "permissionCode": code, "scope": {"type": "user"}, "granted": True})
        self.ok("POST", f"/rpc/conversations/{agent['defaultConversationId']}/messages",
                {"clientMessageId": "m1", "text": text})
        (job,) = self.ok("GET", "/rpc/automation-jobs")["items"]
        return agent, job

    def reminder(self, agent: dict, run_at: datetime) -> dict:
        return self.ok("POST", "/rpc/skills/background-jobs", {
            "skillId": "goal-check-in-reminder", "agentId": agent["agentId"], "runAt": run_at.isoformat()}, status=201)


def scan(stack, at: datetime) -> dict:
    status, summary = stack.call("POST", "/_local/scan", {"time": at.strftime("%Y-%m-%dT%H:%M:%SZ")})
    assert status == 200, summary
    return summary


@pytest.fixture
def stack(_dynamodb: DynamoDBLocal, _dummy_credentials: None) -> Iterator[StackClient]:
    """A stack of its own (own tables): the test counts exactly what one scan a day ahead meets, and on the
    shared stack that scan would also run every earlier test's daily jobs and reminders."""
    local = LocalStack(port=0, ddb_endpoint=_dynamodb.endpoint, data_dir=None, scan_interval=0,
                       jwt_secret=JWT_SECRET, table_prefix="corrupt-")
    local.start()
    try:
        yield StackClient(local)
    finally:
        local.stop()


def test_corrupt_items_never_stop_the_scan_for_the_others(stack):
    ddb = client(stack.env["SKILLS_DYNAMODB_ENDPOINT"])
    jobs_table, automation_table = stack.env["SKILLS_TABLE_JOBS"], stack.env["SKILLS_TABLE_AUTOMATION_JOBS"]
    now = datetime.now(UTC)
    healthy, broken = User(stack), User(stack)
    agent, auto_job = healthy.setup("我喜欢爬山")
    bad_agent, bad_auto = broken.setup("我喜欢游泳")
    good_reminders = [healthy.reminder(agent, now + timedelta(minutes=2)) for _ in range(2)]
    unreadable_entry = broken.reminder(bad_agent, now + timedelta(minutes=2))
    unreadable_after_claim = broken.reminder(bad_agent, now + timedelta(minutes=2))

    # What the issue saw ({"title": null} stored), and two background items: one whose index entry does not
    # read, one that the claim updates and whose new image does not read.
    ddb.update_item(TableName=automation_table, Key={"pk": {"S": bad_auto["jobId"]}}, UpdateExpression="REMOVE title")
    ddb.update_item(TableName=jobs_table, Key={"pk": {"S": unreadable_entry["jobId"]}},
                    UpdateExpression="SET revision = :s", ExpressionAttributeValues={":s": {"S": "one"}})
    ddb.update_item(TableName=jobs_table, Key={"pk": {"S": unreadable_after_claim["jobId"]}},
                    UpdateExpression="REMOVE userId")

    summary = scan(stack, now + timedelta(days=1, hours=1))  # every job above is due
    assert summary["errors"] == 3, summary

    # Everyone else's work ran.
    statuses = {j["jobId"]: j["status"] for j in healthy.ok("GET", "/rpc/skills/background-jobs")["items"]}
    assert [statuses[j["jobId"]] for j in good_reminders] == ["succeeded", "succeeded"]
    after = healthy.ok("GET", f"/rpc/automation-jobs/{auto_job['jobId']}")
    assert after["lastRunStatus"] == "succeeded"
    memories = healthy.ok("GET", f"/rpc/agents/{agent['agentId']}/memories")["items"]
    assert [m["content"] for m in memories] == ["我喜欢爬山"]

    # The bad items left the due and lease indexes, kept everything else, and no later scan meets them.
    for table, job_id in ((automation_table, bad_auto["jobId"]), (jobs_table, unreadable_entry["jobId"]),
                          (jobs_table, unreadable_after_claim["jobId"])):
        item = ddb.get_item(TableName=table, Key={"pk": {"S": job_id}}, ConsistentRead=True)["Item"]
        assert "unreadableAt" in item and not {"dueShard", "dueAt", "leaseShard", "leaseAt"} & set(item)
    assert scan(stack, now + timedelta(days=1, hours=2))["errors"] == 0

    # The owner's lists skip what cannot be read; a get of it is a 500 that says nothing about the item.
    assert broken.ok("GET", "/rpc/automation-jobs")["items"] == []
    assert broken.ok("GET", "/rpc/skills/background-jobs")["items"] == []
    status, body = broken.call("GET", f"/rpc/automation-jobs/{bad_auto['jobId']}")
    assert status == 500 and body["error"]["code"] == "internal"
    assert "title" not in body["error"]["message"] and "Key" not in body["error"]["message"]
    # Only its owner can delete it (anyone else is told it does not exist), and then it is gone.
    assert healthy.call("DELETE", f"/rpc/automation-jobs/{bad_auto['jobId']}")[0] == 404
    assert broken.call("DELETE", f"/rpc/automation-jobs/{bad_auto['jobId']}")[0] == 204
    assert broken.call("GET", f"/rpc/automation-jobs/{bad_auto['jobId']}")[0] == 404
