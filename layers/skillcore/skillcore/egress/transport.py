"""The httpx2 transport of an egress call: it sends only to one checked destination.

- Connections go to the addresses `addresses.check` accepted, never to a fresh DNS answer (no rebinding
  window): the network backend ignores the host name it is given except to verify it is the checked one, and
  connects to those addresses in order. TLS still uses the host name for SNI and the certificate check
  (httpcore passes the origin's host as `server_hostname`), and `Host` is set from it.
- A request for any other scheme, host or port is refused (`other_destination`): even a client configured to
  follow redirects cannot leave. A 3xx answer is an `UpstreamError("redirect")`; nothing follows it. This is
  the transport's job, not the client's: the MCP SDK (mcp 2.3 `streamable_http_client`) follows same-origin
  redirects itself and does not consult the client's `follow_redirects`.
- No proxy (the pool is built here, not from the environment), HTTP/1.1, no retries.
- One `Deadline` for the whole call (every request, connection and body read of it): each step gets what
  remains of it, and the step runs under `anyio.fail_after`, so a server that trickles bytes is cut at the
  deadline too.
- The answer body is streamed and counted before decoding; past `max_body` bytes reading stops
  (`ResponseTooLarge`). `Accept-Encoding: identity` is sent and a compressed answer refused, so the cap is
  the size of what the caller gets (no decompression bomb).
- An event stream (`text/event-stream`) reaches the caller without its `retry` fields (`RetryFieldFilter`):
  the MCP SDK sleeps the server's `retry` before it reconnects, outside every read, so a server could
  otherwise park a call for as long as it likes; without the field the SDK waits its own default (1 s).
- Every EgressError the transport raises is handed to `on_failure` first: the MCP SDK swallows some of them
  (a failed event stream becomes a JSON-RPC error, or a reconnection), so its caller learns the real outcome
  there (egress/mcp_session.py ends the exchange on it).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

import anyio
import httpcore2
import httpx2

from skillcore.egress.addresses import IPAddress
from skillcore.egress.errors import EgressError, Refused, ResponseTooLarge, UpstreamError, UpstreamTimeout
from skillcore.egress.url_policy import Destination

DEADLINE_SECONDS = 30.0
MAX_BODY_BYTES = 1024 * 1024
_IDENTITY = (b"", b"identity")


class Deadline:
    """An absolute deadline on a monotonic clock."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.end = clock() + seconds

    def remaining(self) -> float:
        """Seconds left; `UpstreamTimeout` once none are."""
        left = self.end - self._clock()
        if left <= 0:
            raise UpstreamTimeout()
        return left


def _map_error(error: Exception) -> Exception:
    if isinstance(error, TimeoutError | httpcore2.TimeoutException):
        return UpstreamTimeout()
    if isinstance(error, httpcore2.ConnectError):
        chain: BaseException | None = error
        while chain is not None:
            if isinstance(chain, ssl.SSLError):
                return UpstreamError("tls", "the TLS handshake with the endpoint failed")
            chain = chain.__cause__ or chain.__context__
        return UpstreamError("connect", "the endpoint could not be reached")
    return UpstreamError("protocol", "the endpoint's answer is not valid HTTP")


_HTTPCORE_ERRORS = (httpcore2.TimeoutException, httpcore2.NetworkError, httpcore2.ProtocolError,
                    httpcore2.UnsupportedProtocol, TimeoutError)


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Connects the checked host name to its checked addresses only. `connect_ports` (local stack only:
    settings.SKILLS_LOCAL_HOSTED_CONNECT_PORT) names the addresses connected to on another port than the URL's."""

    def __init__(self, host: str, port: int, addresses: Sequence[IPAddress],
                 connect_ports: Mapping[IPAddress, int] | None = None) -> None:
        self.host = host
        self.port = port
        self.addresses = tuple(addresses)
        self.connect_ports = dict(connect_ports or {})
        self._inner = httpcore2.AnyIOBackend()
        self.connected: list[str] = []  # the addresses connected to, in order (tests read it)

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore2.AsyncNetworkStream:
        if host.lower() != self.host or port != self.port:
            raise Refused("other_destination")
        failure: Exception | None = None
        for address in self.addresses:
            try:
                stream = await self._inner.connect_tcp(str(address), self.connect_ports.get(address, port),
                                                       timeout=timeout)
            except httpcore2.ConnectError as error:
                failure = error
                continue
            self.connected.append(str(address))
            return stream
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore2.AsyncNetworkStream:
        raise Refused("other_destination")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


OnFailure = Callable[[EgressError], None]


def _ignore(_error: EgressError) -> None:
    pass


_RETRY = b"retry:"


def _line_end(data: bytes, start: int) -> int:
    """The index of the first CR or LF at or after `start`, else len(data)."""
    ends = [i for i in (data.find(b"\r", start), data.find(b"\n", start)) if i >= 0]
    return min(ends) if ends else len(data)


class RetryFieldFilter:
    """An event stream's bytes without its `retry` field lines (line ends CR, LF or CRLF, as in the SSE
    standard). Every other byte passes unchanged and at once, except the first few of a line that may still
    turn out to be `retry:`."""

    def __init__(self) -> None:
        self._head = b""  # the current line's first bytes, held while it may be a retry field
        self._mode = "start"  # "start": deciding; "pass": not a retry field; "drop": a retry field
        self._skip_lf = False  # a dropped line ended with CR at the end of a chunk: an LF next is its own

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        i, n = 0, len(data)
        if self._skip_lf and n:
            self._skip_lf = False
            i = 1 if data[:1] == b"\n" else 0
        while i < n:
            end = _line_end(data, i)
            segment = data[i:end]
            if self._mode == "start":
                head = self._head + segment
                self._head = b""
                if head.startswith(_RETRY) or (end < n and head == _RETRY[:-1]):
                    self._mode = "drop"
                elif end == n and _RETRY.startswith(head):
                    self._head = head  # undecided until more of the line comes
                else:
                    self._mode = "pass"
                    out.append(head)
            elif self._mode == "pass":
                out.append(segment)
            if end == n:
                break
            width = 2 if data[end:end + 2] == b"\r\n" else 1
            if self._mode != "drop":
                out.append(data[end:end + width])
            elif width == 1 and end + 1 == n and data[end:end + 1] == b"\r":
                self._skip_lf = True
            self._mode = "start"
            i = end + width
        return b"".join(out)

    def flush(self) -> bytes:
        """What is held at the end of the stream (an unfinished line that is not a retry field)."""
        head, self._head = self._head, b""
        return head


class CappedStream(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, deadline: Deadline, max_body: int, *, event_stream: bool = False,
                 on_failure: OnFailure = _ignore) -> None:
        self._stream = stream
        self._deadline = deadline
        self._max_body = max_body
        self._filter = RetryFieldFilter() if event_stream else None
        self._on_failure = on_failure
        self.received = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._stream.__aiter__()
        while True:
            try:
                try:
                    with anyio.fail_after(self._deadline.remaining()):
                        chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    break
                except _HTTPCORE_ERRORS as error:
                    raise _map_error(error) from None
                self.received += len(chunk)
                if self.received > self._max_body:
                    raise ResponseTooLarge(self._max_body)
            except EgressError as error:
                self._on_failure(error)
                await self.aclose()
                raise
            if self._filter is not None:
                chunk = self._filter.feed(chunk)
            if chunk:
                yield chunk
        if self._filter is not None and (rest := self._filter.flush()):
            yield rest

    async def aclose(self) -> None:
        await self._stream.aclose()


class EgressTransport(httpx2.AsyncBaseTransport):
    def __init__(self, destination: Destination, addresses: Sequence[IPAddress], *, ssl_context: ssl.SSLContext,
                 deadline: Deadline, max_body: int = MAX_BODY_BYTES, on_failure: OnFailure | None = None,
                 connect_ports: Mapping[IPAddress, int] | None = None) -> None:
        self.destination = destination
        self.deadline = deadline
        self.max_body = max_body
        self.on_failure = on_failure or _ignore
        self.backend = PinnedBackend(destination.host, destination.port, addresses, connect_ports)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context, max_connections=4, http1=True, http2=False, retries=0,
            network_backend=self.backend,
        )
        port = b"" if destination.port == 443 else f":{destination.port}".encode()
        self._host_header = destination.host.encode("ascii") + port

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._handle(request)
        except EgressError as error:
            self.on_failure(error)
            raise

    async def _handle(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if (url.scheme != "https" or url.raw_host.lower() != self.destination.host.encode("ascii")
                or (url.port or 443) != self.destination.port):
            raise Refused("other_destination")
        left = self.deadline.remaining()
        headers = [(b"Host", self._host_header)]
        headers += [(k, v) for k, v in request.headers.raw if k.lower() not in (b"host", b"accept-encoding")]
        headers.append((b"Accept-Encoding", b"identity"))
        core_request = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(scheme=b"https", host=self.destination.host.encode("ascii"),
                              port=self.destination.port, target=url.raw_path),
            headers=headers,
            content=request.stream,  # an AsyncByteStream, as in httpx2's own transport
            extensions={"timeout": {"connect": left, "read": left, "write": left, "pool": left}},
        )
        try:
            with anyio.fail_after(left):
                response = await self._pool.handle_async_request(core_request)
        except _HTTPCORE_ERRORS as error:
            raise _map_error(error) from None
        failure: Exception | None = None
        if 300 <= response.status < 400:
            failure = UpstreamError("redirect", f"the endpoint answered {response.status}; redirects are not followed")
        elif dict((k.lower(), v.strip().lower()) for k, v in response.headers).get(b"content-encoding", b"") not in _IDENTITY:
            failure = UpstreamError("content_encoding", "the endpoint answered compressed content")
        elif _content_length(response.headers) > self.max_body:
            failure = ResponseTooLarge(self.max_body)
        if failure is not None:
            await response.aclose()
            raise failure
        content_type = next((v for k, v in response.headers if k.lower() == b"content-type"), b"")
        event_stream = content_type.partition(b";")[0].strip().lower() == b"text/event-stream"
        return httpx2.Response(
            status_code=response.status,
            headers=response.headers,
            stream=CappedStream(response.stream, self.deadline, self.max_body, event_stream=event_stream,
                                on_failure=self.on_failure),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def _content_length(headers: Sequence[tuple[bytes, bytes]]) -> int:
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0  # h11 refuses a malformed length itself
    return 0
