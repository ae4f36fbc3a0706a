"""GET /rpc/skills takes `limit` and `cursor` like every list: pages of the catalog, bad values are 422."""

from __future__ import annotations

import pytest

from tests.support import invoke, load_event, load_function


@pytest.fixture
def rpc(aws):
    return load_function("RpcFunction")


def test_paging_the_skills_catalog(rpc):
    status, whole = invoke(rpc, load_event("rpc_list_skills.json"))
    assert status == 200 and whole["nextCursor"] is None and len(whole["items"]) > 2
    seen, cursor = [], None
    while True:
        query = {"limit": "2"} | ({"cursor": cursor} if cursor else {})
        status, page = invoke(rpc, load_event("rpc_list_skills.json", query=query))
        assert status == 200 and len(page["items"]) <= 2
        seen += page["items"]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert seen == whole["items"]


@pytest.mark.parametrize("query", [{"limit": "0"}, {"limit": "101"}, {"limit": "x"}, {"limit": "9" * 5000},
                                   {"cursor": "garbage!"}])
def test_bad_paging_is_422(rpc, query):
    status, payload = invoke(rpc, load_event("rpc_list_skills.json", query=query))
    assert status == 422 and payload["error"]["code"] == "validation_error"
    assert payload["error"]["details"]["errors"][0]["path"] in query


def test_another_lists_cursor_is_not_a_catalog_cursor(rpc):
    for name in ("a1", "a2"):
        assert invoke(rpc, load_event("rpc_create_agent.json", body={"name": name}))[0] == 201
    _, agents = invoke(rpc, load_event("rpc_list_agents.json", query={"limit": "1"}))
    assert agents["nextCursor"]
    status, payload = invoke(rpc, load_event("rpc_list_skills.json", query={"cursor": agents["nextCursor"]}))
    assert status == 422 and payload["error"]["details"]["errors"][0]["path"] == "cursor"
