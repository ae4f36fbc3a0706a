"""Hostile PATCH bodies for automation jobs (moto, the real RPC handler).

Whatever the body, the answer is 200 or a 4xx envelope, never 500; and whatever was accepted, the job still
reads: its get and list routes answer 200 and the scan runs it. Property-based: hypothesis builds bodies
from every field's edge values (null, wrong types, bounds, unknown keys).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import invoke, load_event, load_function

FIELDS = ("status", "title", "localTime", "weekday", "timezone", "config")
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
VALUES = {
    "status": st.sampled_from(["active", "paused", "running", "", None]),
    "title": st.sampled_from(["ok", "", "  ", "x" * 80, "x" * 81, None, 3]),
    "localTime": st.sampled_from(["07:15", "24:00", "7:15", "07:15\n", None, 715]),
    "weekday": st.sampled_from([1, 7, 0, 8, None, True, "3", 3.0]),
    "timezone": st.sampled_from(["Europe/London", "Mars/Base", "", None, 1]),
    "config": st.sampled_from([
        {"prompt": "p", "tools": ["memory_write"]}, {"prompt": "p", "tools": ["nope"]}, {"prompt": "", "tools": []},
        {"prompt": "p"}, {"prompt": "p", "tools": [], "extra": 1}, None, "config", [],
    ]),
}
BODIES = st.fixed_dictionaries({}, optional={name: VALUES[name] | ANY_JSON for name in FIELDS}) | st.dictionaries(
    st.text(max_size=8), ANY_JSON, max_size=3)


@pytest.fixture
def world(aws):
    rpc = load_function("RpcFunction")
    status, _ = invoke(rpc, load_event("rpc_put_me.json", body={"timezone": "Asia/Shanghai"}))
    assert status == 200
    _, page = invoke(rpc, load_event("rpc_list_automation_jobs.json"))
    (job,) = page["items"]
    return rpc, {"JOB_ID": job["jobId"]}


def patch(rpc, path, body):
    return invoke(rpc, load_event("rpc_patch_automation_job.json", path_ids=path, body=body))


@pytest.mark.parametrize("field", FIELDS)
def test_null_in_any_field_is_a_validation_error_naming_it(world, field):
    rpc, path = world
    status, body = patch(rpc, path, {field: None})
    assert status == 422 and body["error"]["code"] == "validation_error"
    assert [e["path"] for e in body["error"]["details"]["errors"]] == [field]
    status, job = invoke(rpc, load_event("rpc_get_automation_job.json", path_ids=path))
    assert status == 200 and job["title"] == "每日记忆整理"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES)
def test_no_patch_body_answers_500_or_leaves_an_unreadable_job(world, body):
    rpc, path = world
    status, answer = patch(rpc, path, body)
    assert status in (200, 400, 404, 409, 422), (status, answer)
    if status != 200:
        assert set(answer) == {"error"} and answer["error"]["code"] != "internal"
    status, got = invoke(rpc, load_event("rpc_get_automation_job.json", path_ids=path))
    assert status == 200 and isinstance(got["title"], str) and got["title"].strip()
    status, page = invoke(rpc, load_event("rpc_list_automation_jobs.json"))
    assert status == 200 and [j["jobId"] for j in page["items"]] == [path["JOB_ID"]]
    assert json.dumps(got)  # a plain JSON document
