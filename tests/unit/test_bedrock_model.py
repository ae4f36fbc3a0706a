"""BedrockModel against a real bedrock-runtime client whose transport is botocore's Stubber.

The Stubber checks the keyword arguments against `expected_params`, the client validates them against the
service model before the stub answers, and every stubbed response is validated against Converse's output
shape, so these tests hold the adapter to the real wire format.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import (
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from botocore.stub import Stubber

from skillcore.model.bedrock import BedrockModel
from skillcore.model.factory import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, TOTAL_MAX_ATTEMPTS, make_model
from skillcore.model.port import (
    BlockKind,
    ChatMessage,
    ModelError,
    ModelRequest,
    SystemBlock,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    render_system_text,
)
from skillcore.settings import Settings

MODEL_ID = "anthropic.claude-3-5-haiku-20241022-v1:0"
SYSTEM = (
    SystemBlock(BlockKind.PERSONA, "You are Ada, the user's companion.", source="agent"),
    SystemBlock(BlockKind.MEMORY, "What you remember about the user:", facts=("likes green tea",)),
)
NOTES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}
NOTES_TOOL = ToolSpec("recall_notes", "Finds the user's notes.", NOTES_SCHEMA)
NOTES_TOOL_CONFIG = {
    "tools": [
        {
            "toolSpec": {
                "name": "recall_notes",
                "description": "Finds the user's notes.",
                "inputSchema": {"json": NOTES_SCHEMA},
            }
        }
    ]
}


def user(text: str = "", results: tuple[ToolResult, ...] = ()) -> ChatMessage:
    return ChatMessage(role="user", text=text, tool_results=results)


def assistant(text: str = "", calls: tuple[ToolCall, ...] = ()) -> ChatMessage:
    return ChatMessage(role="assistant", text=text, tool_calls=calls)


def converse_response(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    input_tokens: int = 120,
    output_tokens: int = 9,
) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason,
        "usage": {
            "inputTokens": input_tokens,
            "outputTokens": output_tokens,
            "totalTokens": input_tokens + output_tokens,
        },
        "metrics": {"latencyMs": 812},
    }


def expect_converse(
    stubber: Stubber,
    model: BedrockModel,
    request: ModelRequest,
    reply: dict[str, Any],
    params: dict[str, Any],
) -> None:
    """Queues `reply` for a converse call with exactly `params`.

    The params are compared directly first: a mismatch inside the call reaches the test only as
    ModelError("unavailable") (the adapter keeps no provider message), so this is where the diff shows.
    """
    assert model.converse_params(request) == params
    stubber.add_response("converse", reply, expected_params=params)


@pytest.fixture
def client() -> Any:
    # Static credentials: creating the client must not walk the credential chain (or reach for IMDS).
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@pytest.fixture
def stubber(client: Any) -> Iterator[Stubber]:
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


@pytest.fixture
def model(client: Any) -> BedrockModel:
    return BedrockModel(client, model_id=MODEL_ID, max_tokens=512)


def test_client_knows_converse(client: Any) -> None:
    assert "Converse" in client.meta.service_model.operation_names


def test_plain_turn_sends_system_and_history(model: BedrockModel, stubber: Stubber) -> None:
    request = ModelRequest(
        system=SYSTEM,
        messages=(user("Hi Ada"), assistant("Hello! How was your day?"), user("What do I like to drink?")),
    )
    expect_converse(
        stubber,
        model,
        request,
        converse_response([{"text": "You like green tea."}]),
        params={
            "modelId": MODEL_ID,
            "system": [{"text": render_system_text(SYSTEM)}],
            "messages": [
                {"role": "user", "content": [{"text": "Hi Ada"}]},
                {"role": "assistant", "content": [{"text": "Hello! How was your day?"}]},
                {"role": "user", "content": [{"text": "What do I like to drink?"}]},
            ],
            "inferenceConfig": {"maxTokens": 512},
        },
    )

    response = model.converse(request)

    assert response.text == "You like green tea."
    assert response.tool_calls == ()
    assert response.stop_reason == "end_turn"
    assert (response.input_tokens, response.output_tokens) == (120, 9)
    assert response.extra == {"latency_ms": 812}


def test_system_text_carries_the_facts_as_data(model: BedrockModel) -> None:
    params = model.converse_params(ModelRequest(system=SYSTEM, messages=(user("hi"),)))

    [system] = params["system"]
    assert "You are Ada" in system["text"]
    assert "<data>\n- likes green tea\n</data>" in system["text"]


def test_no_system_blocks_sends_no_system_field(model: BedrockModel, stubber: Stubber) -> None:
    request = ModelRequest(system=(), messages=(user("hello"),), max_tokens=64)
    expect_converse(
        stubber,
        model,
        request,
        converse_response([{"text": "Hi."}]),
        params={
            "modelId": MODEL_ID,
            "messages": [{"role": "user", "content": [{"text": "hello"}]}],
            "inferenceConfig": {"maxTokens": 64},
        },
    )

    assert model.converse(request).text == "Hi."


def test_tool_use_round_trip(model: BedrockModel, stubber: Stubber) -> None:
    calls = (
        ToolCall("tooluse_1", "recall_notes", {"query": "Rome"}),
        ToolCall("tooluse_2", "recall_notes", {"query": "Roma"}),
    )
    results = (
        ToolResult("tooluse_1", {"notes": ["Colosseum at 9am"]}),
        ToolResult("tooluse_2", {"error": "store unavailable"}, is_error=True),
    )
    request = ModelRequest(
        system=SYSTEM,
        messages=(
            user("What did I note about Rome?"),
            assistant("Let me look.", calls),
            user(results=results),
        ),
        tools=(NOTES_TOOL,),
    )
    expect_converse(
        stubber,
        model,
        request,
        converse_response([{"text": "You noted the Colosseum at 9am."}]),
        params={
            "modelId": MODEL_ID,
            "system": [{"text": render_system_text(SYSTEM)}],
            "messages": [
                {"role": "user", "content": [{"text": "What did I note about Rome?"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"text": "Let me look."},
                        {
                            "toolUse": {
                                "toolUseId": "tooluse_1",
                                "name": "recall_notes",
                                "input": {"query": "Rome"},
                            }
                        },
                        {
                            "toolUse": {
                                "toolUseId": "tooluse_2",
                                "name": "recall_notes",
                                "input": {"query": "Roma"},
                            }
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_1",
                                "content": [{"json": {"notes": ["Colosseum at 9am"]}}],
                                "status": "success",
                            }
                        },
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_2",
                                "content": [{"json": {"error": "store unavailable"}}],
                                "status": "error",
                            }
                        },
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 512},
            "toolConfig": NOTES_TOOL_CONFIG,
        },
    )

    response = model.converse(request)

    assert response.text == "You noted the Colosseum at 9am."
    assert response.tool_calls == ()


def test_tool_use_response_is_parsed(model: BedrockModel, stubber: Stubber) -> None:
    request = ModelRequest(system=(), messages=(user("What did I note about Rome?"),), tools=(NOTES_TOOL,))
    expect_converse(
        stubber,
        model,
        request,
        converse_response(
            [
                {"text": "Let me check your notes."},
                {"toolUse": {"toolUseId": "tooluse_abc", "name": "recall_notes", "input": {"query": "Rome"}}},
            ],
            stop_reason="tool_use",
            input_tokens=300,
            output_tokens=41,
        ),
        params={
            "modelId": MODEL_ID,
            "messages": [{"role": "user", "content": [{"text": "What did I note about Rome?"}]}],
            "inferenceConfig": {"maxTokens": 512},
            "toolConfig": NOTES_TOOL_CONFIG,
        },
    )

    response = model.converse(request)

    assert response.stop_reason == "tool_use"
    assert response.tool_calls == (ToolCall("tooluse_abc", "recall_notes", {"query": "Rome"}),)
    assert response.text == "Let me check your notes."
    assert (response.input_tokens, response.output_tokens) == (300, 41)


def test_text_blocks_are_joined_and_other_blocks_ignored(model: BedrockModel, stubber: Stubber) -> None:
    stubber.add_response(
        "converse",
        converse_response(
            [
                {"reasoningContent": {"reasoningText": {"text": "The user asked about tea."}}},
                {"text": "You like "},
                {"text": "green tea."},
            ],
            stop_reason="max_tokens",
        ),
    )

    response = model.converse(ModelRequest(system=(), messages=(user("tea?"),)))

    assert response.text == "You like green tea."
    assert response.stop_reason == "max_tokens"


def test_consecutive_roles_are_merged_and_a_leading_assistant_is_dropped(
    model: BedrockModel, stubber: Stubber
) -> None:
    request = ModelRequest(
        system=(),
        messages=(
            assistant("(a reply whose question fell out of the history window)"),
            user("first"),
            user("second"),
            assistant("third"),
            user("   "),  # blank: no block, and its neighbours merge across it
            assistant("fourth"),
            user("fifth"),
        ),
    )
    expect_converse(
        stubber,
        model,
        request,
        converse_response([{"text": "ok"}]),
        params={
            "modelId": MODEL_ID,
            "messages": [
                {"role": "user", "content": [{"text": "first"}, {"text": "second"}]},
                {"role": "assistant", "content": [{"text": "third"}, {"text": "fourth"}]},
                {"role": "user", "content": [{"text": "fifth"}]},
            ],
            "inferenceConfig": {"maxTokens": 512},
        },
    )

    assert model.converse(request).text == "ok"


def test_merged_user_message_puts_tool_results_before_text(model: BedrockModel, stubber: Stubber) -> None:
    call = ToolCall("tooluse_1", "recall_notes", {"query": "Rome"})
    request = ModelRequest(
        system=(),
        messages=(
            user("Rome notes?"),
            assistant(calls=(call,)),
            user("Only the ones from May, please."),
            user(results=(ToolResult("tooluse_1", {"notes": []}),)),
        ),
        tools=(NOTES_TOOL,),
    )
    expect_converse(
        stubber,
        model,
        request,
        converse_response([{"text": "None from May."}]),
        params={
            "modelId": MODEL_ID,
            "messages": [
                {"role": "user", "content": [{"text": "Rome notes?"}]},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "toolUse": {
                                "toolUseId": "tooluse_1",
                                "name": "recall_notes",
                                "input": {"query": "Rome"},
                            }
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_1",
                                "content": [{"json": {"notes": []}}],
                                "status": "success",
                            }
                        },
                        {"text": "Only the ones from May, please."},
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 512},
            "toolConfig": NOTES_TOOL_CONFIG,
        },
    )

    assert model.converse(request).text == "None from May."


def test_window_opening_with_orphaned_tool_results_starts_at_the_next_user_message(
    model: BedrockModel, stubber: Stubber
) -> None:
    request = ModelRequest(
        system=(),
        messages=(
            user(results=(ToolResult("tooluse_gone", {"notes": ["x"]}),)),
            assistant("You noted x."),
            user("Thanks. And tomorrow?"),
        ),
    )
    expect_converse(
        stubber,
        model,
        request,
        converse_response([{"text": "Nothing for tomorrow."}]),
        params={
            "modelId": MODEL_ID,
            "messages": [{"role": "user", "content": [{"text": "Thanks. And tomorrow?"}]}],
            "inferenceConfig": {"maxTokens": 512},
        },
    )

    assert model.converse(request).text == "Nothing for tomorrow."


def test_tool_history_without_offered_tools_still_sends_a_tool_config(
    model: BedrockModel, stubber: Stubber
) -> None:
    call = ToolCall("tooluse_1", "recall_notes", {"query": "Rome"})
    request = ModelRequest(
        system=(),
        messages=(
            user("Rome notes?"),
            assistant(calls=(call,)),
            user(results=(ToolResult("tooluse_1", {"notes": ["Colosseum"]}),)),
        ),
    )
    expect_converse(
        stubber,
        model,
        request,
        converse_response([{"text": "The Colosseum."}]),
        params={
            "modelId": MODEL_ID,
            "messages": [
                {"role": "user", "content": [{"text": "Rome notes?"}]},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "toolUse": {
                                "toolUseId": "tooluse_1",
                                "name": "recall_notes",
                                "input": {"query": "Rome"},
                            }
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_1",
                                "content": [{"json": {"notes": ["Colosseum"]}}],
                                "status": "success",
                            }
                        }
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 512},
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": "recall_notes",
                            "description": "Not available in this turn. Do not call it.",
                            "inputSchema": {"json": {"type": "object"}},
                        }
                    }
                ]
            },
        },
    )

    assert model.converse(request).text == "The Colosseum."


def test_tool_without_description_omits_the_field(model: BedrockModel) -> None:
    params = model.converse_params(
        ModelRequest(system=(), messages=(user("hi"),), tools=(ToolSpec("ping", "", {"type": "object"}),))
    )

    assert params["toolConfig"] == {
        "tools": [{"toolSpec": {"name": "ping", "inputSchema": {"json": {"type": "object"}}}}]
    }


@pytest.mark.parametrize(
    "messages",
    [(), (assistant("only an assistant"),), (user("  "),)],
    ids=["empty", "assistant-only", "blank-user"],
)
def test_nothing_to_send_is_a_model_error_without_a_call(
    model: BedrockModel, stubber: Stubber, messages: tuple[ChatMessage, ...]
) -> None:
    # No response is queued: a call would surface as "unavailable" (the Stubber's error), not this code.
    with pytest.raises(ModelError) as caught:
        model.converse(ModelRequest(system=SYSTEM, messages=messages))

    assert str(caught.value) == "invalid_request"


SECRET = "my passport number is X1234567"


@pytest.mark.parametrize(
    ("aws_code", "status", "code"),
    [
        ("ThrottlingException", 429, "throttled"),
        ("ValidationException", 400, "invalid_request"),
        ("AccessDeniedException", 403, "access_denied"),
        ("ModelTimeoutException", 408, "timeout"),
        ("ServiceUnavailableException", 503, "unavailable"),
        ("ModelErrorException", 424, "model_error"),
        ("ResourceNotFoundException", 404, "not_found"),
        ("SomethingNewException", 400, "unknown"),
    ],
)
def test_service_errors_become_model_errors_without_the_message(
    model: BedrockModel, stubber: Stubber, aws_code: str, status: int, code: str
) -> None:
    stubber.add_client_error(
        "converse",
        service_error_code=aws_code,
        service_message=f"Malformed input request: {SECRET}",
        http_status_code=status,
    )

    with pytest.raises(ModelError) as caught:
        model.converse(ModelRequest(system=SYSTEM, messages=(user(SECRET),)))

    error = caught.value
    assert error.args == (code,)
    assert error.__cause__ is None and error.__suppress_context__
    notes = " ".join(getattr(error, "__notes__", []))
    assert aws_code in notes and f"status={status}" in notes
    assert SECRET not in repr(error) + notes


class RaisingClient:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def converse(self, **kwargs: Any) -> dict[str, Any]:
        raise self.error


ENDPOINT = "https://bedrock-runtime.us-east-1.amazonaws.com/model/x/converse"


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ReadTimeoutError(endpoint_url=ENDPOINT), "timeout"),
        (ConnectTimeoutError(endpoint_url=ENDPOINT), "timeout"),
        (EndpointConnectionError(endpoint_url=ENDPOINT), "unavailable"),
        (NoCredentialsError(), "access_denied"),
    ],
    ids=["read-timeout", "connect-timeout", "no-endpoint", "no-credentials"],
)
def test_transport_errors_become_model_errors(error: Exception, code: str) -> None:
    model = BedrockModel(RaisingClient(error), model_id=MODEL_ID, max_tokens=100)

    with pytest.raises(ModelError) as caught:
        model.converse(ModelRequest(system=(), messages=(user("hi"),)))

    assert caught.value.args == (code,)
    assert caught.value.__cause__ is None


def test_a_request_the_service_model_rejects_is_invalid_request(model: BedrockModel) -> None:
    # maxTokens has a minimum of 1 in the service model; the client refuses 0 before sending anything.
    with pytest.raises(ModelError) as caught:
        model.converse(ModelRequest(system=(), messages=(user("hi"),), max_tokens=0))

    assert caught.value.args == ("invalid_request",)


# -- factory ---------------------------------------------------------------------------------------------


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # boto3.client resolves credentials when created; environment credentials end that search at once.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def test_make_model_bedrock_builds_a_configured_client(aws_env: None) -> None:
    settings = Settings.from_env(
        {
            "AWS_REGION": "us-west-2",
            "SKILLS_MODEL": "bedrock",
            "SKILLS_BEDROCK_REGION": "eu-central-1",
            "SKILLS_BEDROCK_MODEL_ID": "amazon.nova-lite-v1:0",
            "SKILLS_BEDROCK_MAX_TOKENS": "300",
        }
    )

    model = make_model(settings)

    assert isinstance(model, BedrockModel)
    assert (model.model_id, model.max_tokens) == ("amazon.nova-lite-v1:0", 300)
    meta = model.client.meta  # type: ignore[attr-defined]
    assert meta.service_model.service_name == "bedrock-runtime"
    assert meta.region_name == "eu-central-1"
    assert (meta.config.connect_timeout, meta.config.read_timeout) == (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)
    assert meta.config.retries == {"mode": "standard", "total_max_attempts": TOTAL_MAX_ATTEMPTS}


def test_make_model_bedrock_falls_back_to_the_function_region(aws_env: None) -> None:
    settings = Settings.from_env({"AWS_REGION": "ap-southeast-2", "SKILLS_MODEL": "bedrock"})

    model = make_model(settings, read_timeout=120.0)

    assert isinstance(model, BedrockModel)
    assert model.client.meta.region_name == "ap-southeast-2"  # type: ignore[attr-defined]
    assert model.client.meta.config.read_timeout == 120.0  # type: ignore[attr-defined]


def test_make_model_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    class FakeOffline:
        def __init__(self, tool_planner=None):
            self.tool_planner = tool_planner

    module = types.ModuleType("skillcore.model.offline")
    module.OfflineModel = FakeOffline  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "skillcore.model.offline", module)

    model = make_model(Settings.from_env({"SKILLS_MODEL": "offline"}))
    assert isinstance(model, FakeOffline) and model.tool_planner is None
    planner = object()
    assert make_model(Settings.from_env({"SKILLS_MODEL": "offline"}), tool_planner=planner).tool_planner is planner


# -- forced tool choice (the capability draft generator) -------------------------------------------

def test_a_forced_tool_choice_is_sent_as_tool_config_tool_choice(model: BedrockModel, stubber: Stubber) -> None:
    request = ModelRequest(system=SYSTEM, messages=(user("draft it"),), tools=(NOTES_TOOL,),
                           tool_choice=ToolChoice.tool("recall_notes"))
    params = {
        "modelId": MODEL_ID, "messages": [{"role": "user", "content": [{"text": "draft it"}]}],
        "inferenceConfig": {"maxTokens": 512}, "system": [{"text": render_system_text(SYSTEM)}],
        "toolConfig": {**NOTES_TOOL_CONFIG, "toolChoice": {"tool": {"name": "recall_notes"}}},
    }
    reply = converse_response([{"toolUse": {"toolUseId": "t1", "name": "recall_notes", "input": {"query": "x"}}}],
                              stop_reason="tool_use")
    expect_converse(stubber, model, request, reply, params)
    response = model.converse(request)
    assert response.tool_calls == (ToolCall(call_id="t1", name="recall_notes", input={"query": "x"}),)


@pytest.mark.parametrize(("choice", "wire"), [(ToolChoice("any"), {"any": {}}), (ToolChoice("auto"), {"auto": {}})])
def test_any_and_auto_tool_choices(model: BedrockModel, choice: ToolChoice, wire: dict[str, Any]) -> None:
    request = ModelRequest(system=(), messages=(user("hi"),), tools=(NOTES_TOOL,), tool_choice=choice)
    assert model.converse_params(request)["toolConfig"]["toolChoice"] == wire


def test_a_forced_tool_that_is_not_offered_is_refused_before_any_call(model: BedrockModel, stubber: Stubber) -> None:
    for request in (
        ModelRequest(system=(), messages=(user("hi"),), tools=(NOTES_TOOL,), tool_choice=ToolChoice.tool("other")),
        ModelRequest(system=(), messages=(user("hi"),), tool_choice=ToolChoice("any")),
    ):
        with pytest.raises(ModelError, match="invalid_request"):
            model.converse(request)


def test_the_draft_generators_request_is_valid_for_the_converse_service_model(
    model: BedrockModel, stubber: Stubber
) -> None:
    """The whole drafter request, schema and all, passes botocore's parameter validation (the Stubber
    validates expected calls against the service model) and its forced tool answer is the draft."""
    from skillcore.capabilities import drafter

    inputs = drafter.DraftInputs(description="name: morning_review", answers=(), bindings=(),
                                 registered=frozenset({"memory-recall"}))
    request = drafter.model_request(inputs)
    params = model.converse_params(request)
    assert params["toolConfig"]["toolChoice"] == {"tool": {"name": drafter.PROPOSE_TOOL}}
    assert "never invent a tool binding" in params["system"][0]["text"].lower()
    proposal = {"gaps": [{"path": "/workflow/steps", "kind": "missing_info", "question": "What are the steps?"}]}
    stubber.add_response("converse", converse_response(
        [{"toolUse": {"toolUseId": "t1", "name": drafter.PROPOSE_TOOL, "input": proposal}}], stop_reason="tool_use"),
        expected_params=params)
    generated = drafter.generate(model, inputs)
    assert generated.proposal is None
    assert [(g.path, g.question) for g in generated.gaps] == [("/workflow/steps", "What are the steps?")]
