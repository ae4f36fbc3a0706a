"""The Bedrock implementation of the model port, through the Bedrock Runtime Converse API.

Converse has one request shape for every Bedrock chat model, so changing `bedrock_model_id` needs no code.
It rejects (ValidationException) a conversation that does not start with a user message, roles that do
not alternate, blank text blocks, and toolUse/toolResult blocks without a toolConfig; `converse_messages`
and `tool_config` shape every request so that a windowed history never trips those rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    NoCredentialsError,
    ParamValidationError,
    ReadTimeoutError,
)

from skillcore.model.port import (
    ChatMessage,
    ModelError,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    render_system_text,
)

Block = dict[str, Any]
WireMessage = dict[str, Any]

# Bedrock error code -> the short code a ModelError carries. Unknown codes become "unknown".
ERROR_CODES: Mapping[str, str] = {
    "ThrottlingException": "throttled",
    "ServiceQuotaExceededException": "throttled",
    "ModelTimeoutException": "timeout",
    "ServiceUnavailableException": "unavailable",
    "InternalServerException": "unavailable",
    "ModelNotReadyException": "unavailable",
    "ValidationException": "invalid_request",
    "AccessDeniedException": "access_denied",
    "UnrecognizedClientException": "access_denied",
    "ExpiredTokenException": "access_denied",
    "ResourceNotFoundException": "not_found",
    "ModelErrorException": "model_error",
}

# Declared for tools the history used but this request does not offer (see `tool_config`).
_UNOFFERED_TOOL_DESCRIPTION = "Not available in this turn. Do not call it."


class ConverseClient(Protocol):
    """The part of a boto3 `bedrock-runtime` client this module uses."""

    def converse(self, **kwargs: Any) -> Mapping[str, Any]: ...


class BedrockModel:
    def __init__(self, client: ConverseClient, *, model_id: str, max_tokens: int) -> None:
        self.client = client
        self.model_id = model_id
        self.max_tokens = max_tokens

    def converse(self, request: ModelRequest) -> ModelResponse:
        params = self.converse_params(request)
        try:
            raw = self.client.converse(**params)
        except (ClientError, BotoCoreError) as exc:
            raise model_error(exc) from None
        return parse_response(raw)

    def converse_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of `client.converse` for `request`."""
        messages = converse_messages(request.messages)
        if not messages:
            # Nothing a user said survives (empty or assistant-only window): Converse would refuse it.
            raise ModelError("invalid_request")
        max_tokens = self.max_tokens if request.max_tokens is None else request.max_tokens
        params: dict[str, Any] = {
            "modelId": self.model_id,
            "messages": messages,
            "inferenceConfig": {"maxTokens": max_tokens},
        }
        system = render_system_text(request.system)
        if system:  # a system text block must not be empty
            params["system"] = [{"text": system}]
        tools = tool_config(request.tools, messages)
        if request.tool_choice is not None:
            if not request.tools:
                raise ModelError("invalid_request")  # a choice among no tools has no Converse form
            tools = {**(tools or {}), "toolChoice": tool_choice(request.tool_choice, request.tools)}
        if tools is not None:
            params["toolConfig"] = tools
        return params


def converse_messages(messages: Sequence[ChatMessage]) -> list[WireMessage]:
    """Converse messages: alternating roles, starting with a user message, no empty content.

    The history handed in is a window of the conversation, so it can open with an assistant reply whose
    user question was cut off, or with tool results whose toolUse was cut off. Such openings are dropped:
    Converse refuses them, and without their counterpart they carry little the model could use.
    Consecutive messages of one role (a turn that failed to get an answer, a notice after a tool result)
    are merged into one message, because Converse refuses two in a row.
    """
    wire: list[WireMessage] = []
    for message in messages:
        content = _content(message)
        if not wire:
            if message.role == "assistant":
                continue
            content = [block for block in content if "toolResult" not in block]
        if not content:
            continue
        if wire and wire[-1]["role"] == message.role:
            wire[-1]["content"] = _ordered(message.role, [*wire[-1]["content"], *content])
        else:
            wire.append({"role": message.role, "content": content})
    return wire


def _content(message: ChatMessage) -> list[Block]:
    blocks: list[Block] = []
    if message.text.strip():  # a blank text block is a ValidationException
        blocks.append({"text": message.text})
    # Tool calls belong to assistant messages and tool results to user messages; the other way round has
    # no Converse form.
    if message.role == "assistant":
        blocks.extend(_tool_use(call) for call in message.tool_calls)
    else:
        blocks.extend(_tool_result(result) for result in message.tool_results)
    return _ordered(message.role, blocks)


def _ordered(role: Literal["user", "assistant"], blocks: list[Block]) -> list[Block]:
    """Claude wants a user message's toolResult blocks before its text, and an assistant's text before
    its toolUse blocks (the order it produces them in). The sort is stable, so each kind keeps its order."""
    if role == "user":
        return sorted(blocks, key=lambda block: "toolResult" not in block)
    return sorted(blocks, key=lambda block: "toolUse" in block)


def _tool_use(call: ToolCall) -> Block:
    return {"toolUse": {"toolUseId": call.call_id, "name": call.name, "input": call.input}}


def _tool_result(result: ToolResult) -> Block:
    return {
        "toolResult": {
            "toolUseId": result.call_id,
            # json keeps the result structured data rather than text in the user's voice.
            "content": [{"json": result.content}],
            "status": "error" if result.is_error else "success",
        }
    }


def tool_config(tools: Sequence[ToolSpec], messages: Iterable[WireMessage]) -> dict[str, Any] | None:
    """The toolConfig: the offered tools; else, when the history holds tool blocks, those tools declared
    as unavailable, because Converse refuses toolUse/toolResult blocks in a request without a toolConfig
    (e.g. a final answer asked for without tools after a tool round). A call the model still makes to one
    of those comes back as a ToolCall like any other: the executor runs only the tools it offered."""
    if tools:
        return {"tools": [{"toolSpec": _tool_spec(tool)} for tool in tools]}
    used = sorted(
        {
            block["toolUse"]["name"]
            for message in messages
            for block in message["content"]
            if "toolUse" in block
        }
    )
    if not used:
        return None
    return {
        "tools": [
            {
                "toolSpec": {
                    "name": name,
                    "description": _UNOFFERED_TOOL_DESCRIPTION,
                    "inputSchema": {"json": {"type": "object"}},
                }
            }
            for name in used
        ]
    }


def tool_choice(choice: ToolChoice, tools: Sequence[ToolSpec]) -> Block:
    """Converse `toolConfig.toolChoice`: `{"auto": {}}`, `{"any": {}}` or `{"tool": {"name"}}`. A forced tool
    must be one of the offered ones (Converse would refuse it with a ValidationException that quotes it)."""
    if choice.mode == "tool":
        if choice.name not in {tool.name for tool in tools}:
            raise ModelError("invalid_request")
        return {"tool": {"name": choice.name}}
    if choice.mode == "any":
        return {"any": {}}
    return {"auto": {}}


def _tool_spec(tool: ToolSpec) -> Block:
    spec: Block = {"name": tool.name, "inputSchema": {"json": tool.input_schema}}
    if tool.description:  # the field must be non-empty when present
        spec["description"] = tool.description
    return spec


def parse_response(raw: Mapping[str, Any]) -> ModelResponse:
    message = raw.get("output", {}).get("message", {})
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.get("content", []):
        if "text" in block:
            texts.append(block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            tool_input = use.get("input")
            calls.append(
                ToolCall(
                    call_id=use["toolUseId"],
                    name=use["name"],
                    # The port's tool input is an object; a non-object is no valid input for any tool schema.
                    input=tool_input if isinstance(tool_input, dict) else {},
                )
            )
        # Other blocks (reasoningContent, citationsContent, ...) are not part of the answer text.
    usage = raw.get("usage", {})
    extra: dict[str, Any] = {}
    if "latencyMs" in raw.get("metrics", {}):
        extra["latency_ms"] = raw["metrics"]["latencyMs"]
    return ModelResponse(
        # Several text blocks are pieces of one answer (Converse splits text around citations).
        text="".join(texts).strip(),
        tool_calls=tuple(calls),
        stop_reason=raw.get("stopReason", "end_turn"),
        input_tokens=int(usage.get("inputTokens", 0)),
        output_tokens=int(usage.get("outputTokens", 0)),
        extra=extra,
    )


def model_error(exc: ClientError | BotoCoreError) -> ModelError:
    """A ModelError whose message is only a short code.

    Provider messages can quote the request (a ValidationException names the offending content), and
    errors end up in logs, so neither the message nor the original exception is kept (callers raise
    `from None`). A note keeps what is safe for diagnosis: the AWS error code, status and request id.
    """
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        meta = exc.response.get("ResponseMetadata", {})
        aws_code = str(error.get("Code", ""))
        err = ModelError(ERROR_CODES.get(aws_code, "unknown"))
        err.add_note(
            f"bedrock {aws_code or 'error'} status={meta.get('HTTPStatusCode', '?')} "
            f"request_id={meta.get('RequestId', '?')}"
        )
        return err
    if isinstance(exc, (ReadTimeoutError, ConnectTimeoutError)):
        code = "timeout"
    elif isinstance(exc, ParamValidationError):  # the request broke the service model's constraints
        code = "invalid_request"
    elif isinstance(exc, NoCredentialsError):
        code = "access_denied"
    else:  # EndpointConnectionError, ConnectionClosedError and other transport failures
        code = "unavailable"
    err = ModelError(code)
    err.add_note(f"bedrock {type(exc).__name__}")
    return err
