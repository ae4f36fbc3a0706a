"""The MCP client side of a hosted endpoint: the official SDK's client (`mcp.Client` over
`streamable_http_client`) handed the egress module's httpx2 client, so every byte goes through the checked,
pinned transport (client.py). It lives here because it opens the connection (tests/unit/test_egress_boundary.py).

What comes back is plain data (dicts), already bounded by the transport's 1 MiB cap and 30 s deadline; the
snapshot rules (hosted/snapshot.py) are applied by the caller. Every failure is one of errors.py's types:
the SDK wraps what the transport raised (exception groups, causes), `find_egress_error` finds it, and any
other failure of the exchange is an `UpstreamError("protocol")`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import anyio

from skillcore.egress.client import EgressLimits, limits_of, open_client
from skillcore.egress.errors import EgressError, UpstreamError, UpstreamTimeout, find_egress_error
from skillcore.egress.settings import EgressSettings
from skillcore.egress.transport import Deadline

# The URL is a secret (a Dify URL carries its key in the path) and must never reach a log: httpx2 logs every
# request's URL at INFO and the SDK's client logs messages at DEBUG, so both stay at WARNING whatever the
# function's log level (tests/integration/test_hosted_endpoints.py checks the captured logs).
for _name in ("httpx2", "httpcore2", "mcp.client"):
    logging.getLogger(_name).setLevel(logging.WARNING)

# Pages of tools/list read at most: a server that pages for ever is cut (the snapshot's cap is 64 tools).
MAX_LIST_PAGES = 8


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _failure(error: BaseException) -> EgressError:
    found = find_egress_error(error)
    if found is not None:
        return found
    if isinstance(error, TimeoutError):
        return UpstreamTimeout()
    return UpstreamError("protocol", "the endpoint's MCP answer is not valid")


async def _list_tools(url: str, token: str | None, settings: EgressSettings, limits: EgressLimits | None,
                      max_tools: int) -> list[dict[str, Any]]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    tools: list[dict[str, Any]] = []
    async with open_client(url, settings, limits=limits) as http:
        http.headers.update(_headers(token))
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            cursor: str | None = None
            for _ in range(MAX_LIST_PAGES):
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                tools += [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in page.tools]
                cursor = page.next_cursor
                if not cursor or len(tools) > max_tools:
                    break
    return tools


async def send_tools_call(client: Any, name: str, arguments: dict[str, Any]) -> Any:
    """tools/call alone on an open `mcp.Client`, through its session's `send_request`, not `Client.call_tool`. The
    SDK's call_tool, on a fresh session, first lists the endpoint's tools again (a round trip per call) and checks
    the answer against the output schema of that live list: a list the snapshot never saw, whose `pattern` could
    stall the check (the snapshot refuses patterns for that reason, hosted/snapshot.py) and which a rug pull
    controls. The answer is data to the proxy either way, bounded by the transport and by call_answer.answer_of."""
    from mcp import types

    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    return await client.session.send_request(request, types.CallToolResult)


async def _call_tool(url: str, token: str | None, settings: EgressSettings, limits: EgressLimits | None,
                     name: str, arguments: dict[str, Any], ready: Future[bool] | None) -> dict[str, Any] | None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    limits = limits_of(settings, limits)
    deadline = Deadline(limits.deadline_seconds)  # the call's one deadline: the client's, and the wait for the go
    async with open_client(url, settings, limits=limits, deadline=deadline) as http:
        http.headers.update(_headers(token))
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            if ready is not None:
                # the session is open (initialize answered): tools/call waits for the caller's go, within the
                # call's deadline, and is never sent without it
                try:
                    with anyio.fail_after(deadline.remaining()):
                        go = await asyncio.shield(asyncio.wrap_future(ready))  # a timeout never cancels the go
                except TimeoutError:
                    raise UpstreamTimeout() from None  # typed here: the SDK's task group wraps what leaves it
                if not go:
                    return None
            result = await send_tools_call(client, name, arguments)
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _run(flow: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """`anyio.run(flow, *args)`, on a thread of its own when this thread already runs an event loop (McpFunction's
    tools are synchronous services called from the SDK server's loop): the caller waits either way."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(flow, *args)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="egress") as pool:
        return pool.submit(anyio.run, flow, *args).result()


def list_tools(url: str, token: str | None, settings: EgressSettings, *, limits: EgressLimits | None = None,
               max_tools: int = 64) -> list[dict[str, Any]]:
    """tools/list of the endpoint (every page, up to a little over `max_tools`). Raises an EgressError."""
    try:
        return _run(_list_tools, url, token, settings, limits, max_tools)
    except Exception as error:  # noqa: BLE001  (every failure becomes a typed egress outcome)
        raise _failure(error) from None


def call_tool(url: str, token: str | None, settings: EgressSettings, name: str, arguments: dict[str, Any], *,
              limits: EgressLimits | None = None, ready: Future[bool] | None = None) -> dict[str, Any] | None:
    """tools/call on the endpoint: the CallToolResult as JSON data. Raises an EgressError.

    `ready`, when given, is the caller's go, still being decided while the connection, the TLS handshake and
    initialize run (the proxy's claim of the call record, hosted/calls.py): tools/call is sent only once it
    resolved True; False closes the session having sent nothing of the call, and returns None."""
    try:
        return _run(_call_tool, url, token, settings, limits, name, arguments, ready)
    except Exception as error:  # noqa: BLE001
        raise _failure(error) from None
