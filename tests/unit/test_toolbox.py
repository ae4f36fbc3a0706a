"""The MCP face's tool registry (skillcore/api/toolbox.py), without the SDK: registration rules, the input
schema a host reads, and how a call answers: the body, or the API error envelope with the HTTP codes."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import UNSET, UnsetType
from pydantic import Field

from skillcore.api import errors as e
from skillcore.api.app import Caller
from skillcore.api.toolbox import Toolbox
from skillcore.api.views import Body
from skillcore.errors import AgentNotFound, ConcurrentUpdate, PermissionRequired
from skillcore.shapes import Id, Strict

CALLER = Caller("user-1", admin=False)


class EchoArguments(Strict):
    agent_id: Id
    count: int = Field(default=1, ge=1, le=3)


class Echo(Body, frozen=True, kw_only=True):
    user_id: str
    agent_id: str
    count: int
    extra: str | UnsetType = UNSET


def box_with(handler: Any, errors: tuple[e.Documented, ...] = ()) -> Toolbox:
    box = Toolbox()
    box.tool("echo", arguments=EchoArguments, errors=errors)(handler)
    return box


def echo(caller: Caller, arguments: EchoArguments) -> Echo:
    """Echo the caller and the arguments back."""
    return Echo(user_id=caller.user_id, agent_id=arguments.agent_id, count=arguments.count)


def test_a_tool_is_its_docstring_and_its_arguments_schema() -> None:
    (tool,) = box_with(echo).tools
    assert tool.name == "echo" and tool.description == "Echo the caller and the arguments back."
    schema = tool.input_schema()
    assert schema["type"] == "object" and schema["required"] == ["agentId"]
    assert set(schema["properties"]) == {"agentId", "count"} and schema["additionalProperties"] is False


def test_names_must_be_snake_case_unique_and_documented() -> None:
    box = box_with(echo)
    with pytest.raises(ValueError, match="twice"):
        box.tool("echo", arguments=EchoArguments)(echo)
    with pytest.raises(ValueError, match="snake_case"):
        box.tool("Echo-Tool", arguments=EchoArguments)

    def undocumented(caller: Caller, arguments: EchoArguments) -> Echo:
        return echo(caller, arguments)

    with pytest.raises(ValueError, match="docstring"):
        box.tool("quiet", arguments=EchoArguments)(undocumented)


def test_a_call_answers_the_camel_case_body_and_the_caller_comes_from_the_token() -> None:
    answer = box_with(echo).call(CALLER, "echo", {"agentId": "a1", "count": 2})
    assert answer.is_error is False
    assert answer.body == {"userId": "user-1", "agentId": "a1", "count": 2}  # UNSET fields are absent


@pytest.mark.parametrize("arguments", [{"agentId": "a1", "userId": "user-2"}, {"count": 2}, {"agentId": "a 1"},
                                       {"agentId": "a1", "count": 9}, None])
def test_arguments_are_validated_like_a_route_body(arguments: dict[str, Any] | None) -> None:
    answer = box_with(echo).call(CALLER, "echo", arguments)
    assert answer.is_error is True
    error = answer.body["error"]
    assert error["code"] == "validation_error" and error["details"]["errors"]
    assert all(set(item) == {"path", "message", "type"} for item in error["details"]["errors"])


@pytest.mark.parametrize(("raised", "code"), [
    (AgentNotFound(), "agent_not_found"),
    (PermissionRequired("needs a grant", {"skillId": "s", "permissionCode": None, "missingPermissions": []}),
     "permission_required"),
    (ConcurrentUpdate("busy"), "concurrent_update"),
])
def test_domain_errors_are_the_http_envelope(raised: Exception, code: str) -> None:
    def failing(caller: Caller, arguments: EchoArguments) -> Echo:
        """Fails."""
        raise raised

    answer = box_with(failing, errors=(e.AgentNotFound,)).call(CALLER, "echo", {"agentId": "a1"})
    assert answer.is_error is True
    assert answer.body["error"]["code"] == code
    assert set(answer.body["error"]) == {"code", "message", "details"}


def test_an_unexpected_error_is_internal_and_leaks_nothing() -> None:
    def broken(caller: Caller, arguments: EchoArguments) -> Echo:
        """Breaks."""
        raise KeyError("secret table name")

    answer = box_with(broken).call(CALLER, "echo", {"agentId": "a1"})
    assert answer.is_error and answer.body == {"error": {"code": "internal", "message": "internal error", "details": {}}}


def test_an_unknown_tool_and_a_handler_that_returns_no_body() -> None:
    assert box_with(echo).call(CALLER, "nope", {}).body["error"]["code"] == "unknown_tool"

    def bare(caller: Caller, arguments: EchoArguments) -> Any:
        """Returns a list."""
        return [1]

    assert box_with(bare).call(CALLER, "echo", {"agentId": "a1"}).body["error"]["code"] == "internal"


def test_the_real_tools_are_registered_with_their_documented_errors() -> None:
    from skillcore.api import tools_core
    from skillcore.api.routes_skills import SkillDeps
    from skillcore.skills.builtin import SKILLS

    box = Toolbox()
    tools_core.register(box, SkillDeps(db=None, skills=SKILLS, clock=lambda: None))  # type: ignore[arg-type]
    by_name = {t.name: t for t in box.tools}
    assert set(by_name) == {"memory_recall", "schedule_goal_check_in"}
    assert e.PermissionRequired in by_name["memory_recall"].errors
    assert e.RunAtOutOfRange in by_name["schedule_goal_check_in"].errors
    assert by_name["schedule_goal_check_in"].input_schema()["required"] == ["agentId", "runAt"]
