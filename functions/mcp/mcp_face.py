"""The MCP SDK side of McpFunction: a low-level MCP server over the Toolbox, served per invocation.

Streamable HTTP, stateless, JSON responses (no SSE, no session id): every POST /mcp stands alone, which is
what a Lambda behind API Gateway can serve. The SDK's session manager can run only once per instance, and
Mangum runs the ASGI lifespan (startup, the request, shutdown) inside each invocation, so the manager and
the small Starlette app around it are built per invocation; the server itself (tools, handlers) once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import mcp.types as types
from mangum import Mangum
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Route

from skillcore.api.app import Caller
from skillcore.api.toolbox import ToolAnswer, Toolbox

PATH = "/mcp"


def caller_of(ctx: Any) -> Caller:
    """The token's `sub`, groups and kind (a person's or an agent host's), from the API Gateway event Mangum put in the ASGI scope: the JWT
    authorizer verified them; nothing in the tool arguments can name another user."""
    request = getattr(ctx, "request", None)
    event = request.scope.get("aws.event") if request is not None else None
    if not isinstance(event, dict):
        raise RuntimeError("no API Gateway event in the request scope")
    return Caller.of(event)


def result(answer: ToolAnswer) -> types.CallToolResult:
    text = json.dumps(answer.body, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=answer.body, is_error=answer.is_error)


def build_server(toolbox: Toolbox, *, name: str, version: str, instructions: str | None = None) -> Server[Any]:
    listed = [types.Tool(name=t.name, description=t.description, input_schema=t.input_schema())
              for t in toolbox.tools]

    async def list_tools(ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if toolbox.dynamic is None:
            return types.ListToolsResult(tools=listed)
        # The caller's own tools too (an installed skill's code tools), listed for the token's user only.
        own = [types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
               for t in toolbox.dynamic.listed(caller_of(ctx))]
        return types.ListToolsResult(tools=[*listed, *own])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # The services are synchronous (boto3); one invocation serves one request, so they run inline.
        return result(toolbox.call(caller_of(ctx), params.name, params.arguments))

    return Server(name, version=version, instructions=instructions, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def asgi_app(server: Server[Any]) -> Starlette:
    """A new session manager and app: one invocation's worth (see the module docstring)."""
    manager = StreamableHTTPSessionManager(server, stateless=True, json_response=True)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route(PATH, StreamableHTTPASGIApp(manager))], lifespan=lifespan)


def serve(server: Server[Any], event: dict[str, Any], context: Any) -> dict[str, Any]:
    # Mangum runs the lifespan and the request on the thread's current event loop. A loop of the
    # invocation's own, closed afterwards, leaves nothing behind (the local gateway serves on many threads)
    # and does not lean on asyncio creating one implicitly (deprecated).
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return Mangum(asgi_app(server), lifespan="on")(event, context)
    finally:
        asyncio.set_event_loop(None)
        loop.close()
