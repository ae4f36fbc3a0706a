"""The MCP client side of a hosted endpoint: the official SDK's client (`mcp.Client` over
`streamable_http_client`) handed the egress module's httpx2 client, so every byte goes through the checked,
pinned transport (client.py). It lives here because it opens the connection (tests/unit/test_egress_boundary.py).

What comes back is plain data (dicts), already bounded by the transport's 1 MiB cap; the snapshot rules
(hosted/snapshot.py) are applied by the caller.

One deadline bounds the whole exchange (`_Exchange`): resolution, connection, TLS, initialize, tools/list or
tools/call, and the close, all run inside one cancel scope whose deadline is the call's. The SDK has waits of
its own that no read timeout covers (the sleep before it reconnects an event stream, which a server sets
with `retry`; the wait for a request's answer); the scope ends them too, and its cancellation closes the
connections (httpcore closes its pool shielded) before `anyio.run` returns, so nothing is left running. The
transport also drops `retry` fields (transport.RetryFieldFilter) and checks the deadline on every read.

Every failure is one of errors.py's types. The first EgressError the transport raises ends the exchange at
once and is its outcome: the SDK swallows some of them (a broken event stream becomes a JSON-RPC error, or a
reconnection), which would otherwise be reported as `protocol` or stall. Otherwise the SDK wraps what the
transport raised (exception groups, causes) and `find_egress_error` finds it; the scope's deadline is an
`UpstreamTimeout`; any other failure of the exchange is an `UpstreamError("protocol")`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
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


class _Exchange:
    """One exchange's bounds: the cancel scope holding its deadline, and the transport's first failure, which
    cancels the scope unless the exchange already has its answer (a failure while closing is not the call's)."""

    def __init__(self, deadline: Deadline) -> None:
        self.scope = anyio.CancelScope(deadline=anyio.current_time() + deadline.remaining())
        self.failure: EgressError | None = None
        self.answer: Any = None
        self.answered = False

    def done(self, answer: Any) -> None:
        """The exchange's answer: what the close does next cannot change it."""
        self.answer, self.answered = answer, True

    def failed(self, error: EgressError) -> None:
        if self.failure is None and not self.answered:
            self.failure = error
            self.scope.cancel()

    def outcome(self, error: BaseException | None) -> Any:
        if self.answered:
            return self.answer
        if self.failure is not None:
            raise self.failure
        if self.scope.cancel_called or anyio.current_time() >= self.scope.deadline:
            raise UpstreamTimeout()
        raise _failure(error) if error is not None else UpstreamTimeout()


async def _bounded(flow: Callable[[_Exchange, Deadline], Awaitable[None]], deadline: Deadline) -> Any:
    """`flow` inside the exchange's scope: the answer it gave `exchange.done`, else the exchange's failure."""
    exchange = _Exchange(deadline)
    try:
        with exchange.scope:
            await flow(exchange, deadline)
    except Exception as error:  # noqa: BLE001  (every failure becomes a typed egress outcome)
        return exchange.outcome(error)
    return exchange.outcome(None)


def _failure(error: BaseException) -> EgressError:
    found = find_egress_error(error)
    if found is not None:
        return found
    if isinstance(error, TimeoutError):
        return UpstreamTimeout()
    return UpstreamError("protocol", "the endpoint's MCP answer is not valid")


def _load_sdk() -> None:
    """The SDK's client modules, imported before the deadline starts (a cold import is not the endpoint's time)."""
    import mcp  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401


@asynccontextmanager
async def _session(url: str, token: str | None, settings: EgressSettings, limits: EgressLimits,
                   exchange: _Exchange, deadline: Deadline) -> AsyncIterator[Any]:
    """An open `mcp.Client` (initialize answered) over the egress client."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with open_client(url, settings, limits=limits, deadline=deadline, on_failure=exchange.failed) as http:
        http.headers.update(_headers(token))
        transport = streamable_http_client(url, http_client=http, max_sse_event_size=limits.max_body_bytes)
        async with Client(transport, mode="legacy") as client:
            yield client


async def _list_tools(url: str, token: str | None, settings: EgressSettings, limits: EgressLimits | None,
                      max_tools: int) -> list[dict[str, Any]]:
    limits = limits_of(settings, limits)
    _load_sdk()

    async def flow(exchange: _Exchange, deadline: Deadline) -> None:
        tools: list[dict[str, Any]] = []
        async with _session(url, token, settings, limits, exchange, deadline) as client:
            cursor: str | None = None
            for _ in range(MAX_LIST_PAGES):
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                tools += [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in page.tools]
                cursor = page.next_cursor
                if not cursor or len(tools) > max_tools:
                    break
            exchange.done(tools)

    result: list[dict[str, Any]] = await _bounded(flow, Deadline(limits.deadline_seconds))
    return result


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
                     name: str, arguments: dict[str, Any], ready: Future[bool] | None,
                     sent: threading.Event | None) -> dict[str, Any] | None:
    limits = limits_of(settings, limits)
    _load_sdk()

    async def flow(exchange: _Exchange, deadline: Deadline) -> None:
        async with _session(url, token, settings, limits, exchange, deadline) as client:
            if ready is not None:
                # the session is open (initialize answered): tools/call waits for the caller's go, within the
                # call's deadline, and is never sent without it
                try:
                    with anyio.fail_after(deadline.remaining()):
                        go = await asyncio.shield(asyncio.wrap_future(ready))  # a timeout never cancels the go
                except TimeoutError:
                    raise UpstreamTimeout() from None  # typed here: the SDK's task group wraps what leaves it
                if not go:
                    exchange.done(None)
                    return
            if sent is not None:
                sent.set()  # from here on the endpoint may have acted
            result = await send_tools_call(client, name, arguments)
            exchange.done(result.model_dump(mode="json", by_alias=True, exclude_none=True))

    # the call's one deadline: the exchange's, the client's, and the wait for the go
    result: dict[str, Any] | None = await _bounded(flow, Deadline(limits.deadline_seconds))
    return result


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
              limits: EgressLimits | None = None, ready: Future[bool] | None = None,
              sent: threading.Event | None = None) -> dict[str, Any] | None:
    """tools/call on the endpoint: the CallToolResult as JSON data. Raises an EgressError.

    `ready`, when given, is the caller's go, still being decided while the connection, the TLS handshake and
    initialize run (the proxy's claim of the call record, hosted/calls.py): tools/call is sent only once it
    resolved True; False closes the session having sent nothing of the call, and returns None. `sent`, when
    given, is set just before tools/call is sent: a failure with it unset sent nothing of the call."""
    try:
        return _run(_call_tool, url, token, settings, limits, name, arguments, ready, sent)
    except Exception as error:  # noqa: BLE001
        raise _failure(error) from None
