"""The egress client against a real HTTPS server: a certificate for `api.mcp.test` made at test time (trustme),
served on a loopback address other than 127.0.0.1 (a random one of 127/8, so parallel runs do not collide) on
port 443, the port the production policy requires, reached by name through the local-only settings
(SKILLS_LOCAL_HOSTED_RESOLVE / _ALLOW_ADDRESSES / _CA_BUNDLE, read by EgressSettings.from_env with
SKILLS_LOCAL=1). Port 443 needs the right to bind it (root here and in CI).
"""

from __future__ import annotations

import asyncio
import json
import random
import ssl
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import trustme

from skillcore.egress.client import EgressLimits, open_client
from skillcore.egress.errors import Refused, ResponseTooLarge, UpstreamError, UpstreamTimeout
from skillcore.egress.settings import EgressSettings
from skillcore.egress.transport import MAX_BODY_BYTES, EgressTransport

NAME = "api.mcp.test"
MIB = 1024 * 1024


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext) -> None:
        super().__init__(address, Handler)
        self.requests: list[dict[str, str]] = []
        self.sni: list[str | None] = []
        self.stop = threading.Event()
        context.sni_callback = lambda _sock, name, _ctx: self.sni.append(name)  # type: ignore[assignment]
        self.context = context
        self.errors: list[str] = []

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The TLS handshake runs here, in the connection's own thread and with a timeout (not in accept(),
        # where one stalled handshake would stop the whole server).
        request.settimeout(10)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except OSError as error:
            self.errors.append(repr(error))  # e.g. the client refused the certificate
            return
        super().finish_request(tls, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        self.errors.append(repr(sys.exc_info()[1]))  # a client hanging up mid-answer, on purpose


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {"Content-Type": "application/json"}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.requests.append({"path": self.path, "host": self.headers.get("Host", ""),
                                     "accept-encoding": self.headers.get("Accept-Encoding", "")})
        if self.path == "/ok":
            self._send(200, json.dumps({"host": self.headers.get("Host")}).encode())
        elif self.path == "/redirect":
            self._send(302, b"", {"Location": f"https://{NAME}/ok"})
        elif self.path == "/redirect-internal":
            self._send(307, b"", {"Location": "https://127.0.0.1/latest/meta-data/"})
        elif self.path == "/big-undeclared":  # no Content-Length: the cap must be found while reading
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(64):  # 4 MiB
                    self.wfile.write(chunk)
            except OSError:
                pass  # the client stopped reading and closed
        elif self.path == "/big-declared":
            self.send_response(200)
            self.send_header("Content-Length", str(2 * MIB))
            self.end_headers()
        elif self.path == "/exactly-the-cap":
            self._send(200, b"y" * MAX_BODY_BYTES, {"Content-Type": "application/octet-stream"})
        elif self.path == "/gzip":
            self._send(200, b"\x1f\x8b", {"Content-Encoding": "gzip"})
        elif self.path == "/trickle":  # a byte every 50 ms, for ever
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            while not self.server.stop.is_set():
                try:
                    self.wfile.write(b"z")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.05)
        elif self.path == "/hang":
            self.server.stop.wait(10)
        else:
            self._send(404, b"{}")


def _bind(context: ssl.SSLContext) -> Server:
    rng = random.Random()
    for _ in range(50):
        address = f"127.{rng.randrange(0, 256)}.{rng.randrange(0, 256)}.{rng.randrange(2, 255)}"
        if address == "127.0.0.1":
            continue
        try:
            return Server((address, 443), context)
        except OSError:
            continue
    raise RuntimeError("no loopback address with port 443 free")


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def server(ca: trustme.CA) -> Iterator[Server]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert(NAME).configure_cert(context)
    server = _bind(context)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.stop.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def settings(server: Server, ca: trustme.CA, tmp_path: Path) -> EgressSettings:
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    address = server.server_address[0]
    return EgressSettings.from_env({
        "SKILLS_LOCAL": "1",
        "SKILLS_HOSTED_ALLOWED_DOMAINS": "mcp.test",
        "SKILLS_LOCAL_HOSTED_RESOLVE": f"{NAME}={address},other.mcp.test={address},wrapped.mcp.test=::ffff:{address}",
        "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES": str(address),
        "SKILLS_LOCAL_HOSTED_CA_BUNDLE": str(bundle),
    })


def run(coroutine: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(coroutine())  # type: ignore[arg-type]


def get(url: str, settings: EgressSettings, limits: EgressLimits | None = None) -> tuple[int, bytes, EgressTransport]:
    async def call() -> tuple[int, bytes, EgressTransport]:
        async with open_client(url, settings, limits=limits) as client:
            response = await client.get(url)
            transport = client._transport
            assert isinstance(transport, EgressTransport)
            return response.status_code, response.content, transport
    return run(call)


def test_reached_by_name_at_the_checked_address_with_sni_and_host(server: Server, settings: EgressSettings,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # would fail if the environment's proxy were used
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    server.requests.clear()
    server.sni.clear()
    status, body, transport = get(f"https://{NAME}/ok", settings)
    assert (status, json.loads(body)) == (200, {"host": NAME})
    assert server.sni == [NAME]
    assert server.requests == [{"path": "/ok", "host": NAME, "accept-encoding": "identity"}]
    assert transport.backend.connected == [server.server_address[0]]


def test_a_redirect_is_not_followed(server: Server, settings: EgressSettings) -> None:
    for path, status in (("/redirect", 302), ("/redirect-internal", 307)):
        server.requests.clear()
        with pytest.raises(UpstreamError) as error:
            get(f"https://{NAME}{path}", settings)
        assert error.value.reason == "redirect" and str(status) in str(error.value)
        assert [r["path"] for r in server.requests] == [path]  # the Location was never asked for


def test_the_client_cannot_be_pointed_elsewhere(server: Server, settings: EgressSettings) -> None:
    async def call() -> None:
        async with open_client(f"https://{NAME}/ok", settings) as client:
            await client.get("https://127.0.0.1/")

    with pytest.raises(Refused) as refused:
        run(call)
    assert refused.value.reason == "other_destination"


def test_a_body_over_the_cap_is_cut_while_reading(server: Server, settings: EgressSettings) -> None:
    async def call() -> int:
        async with open_client(f"https://{NAME}/big-undeclared", settings) as client:
            transport = client._transport
            assert isinstance(transport, EgressTransport)
            async with client.stream("GET", f"https://{NAME}/big-undeclared") as response:
                received = 0
                try:
                    async for chunk in response.aiter_raw():
                        received += len(chunk)
                finally:
                    assert received <= MAX_BODY_BYTES
                return received

    with pytest.raises(ResponseTooLarge):
        run(call)


def test_a_declared_length_over_the_cap_is_refused_before_reading(server: Server, settings: EgressSettings) -> None:
    with pytest.raises(ResponseTooLarge):
        get(f"https://{NAME}/big-declared", settings)


def test_a_body_of_exactly_the_cap_is_read(server: Server, settings: EgressSettings) -> None:
    status, body, _ = get(f"https://{NAME}/exactly-the-cap", settings)
    assert (status, len(body)) == (200, MAX_BODY_BYTES)


def test_a_compressed_answer_is_refused(server: Server, settings: EgressSettings) -> None:
    with pytest.raises(UpstreamError) as error:
        get(f"https://{NAME}/gzip", settings)
    assert error.value.reason == "content_encoding"


@pytest.mark.parametrize("path", ["/trickle", "/hang"])
def test_a_slow_server_is_timed_out_at_the_deadline_of_the_whole_call(path: str, server: Server,
                                                                      settings: EgressSettings) -> None:
    started = time.monotonic()
    with pytest.raises(UpstreamTimeout):
        get(f"https://{NAME}{path}", settings, EgressLimits(deadline_seconds=0.6))
    elapsed = time.monotonic() - started
    assert 0.55 <= elapsed < 2.0, elapsed


def test_the_deadline_covers_every_request_of_the_call(server: Server, settings: EgressSettings) -> None:
    async def call() -> None:
        async with open_client(f"https://{NAME}/ok", settings, limits=EgressLimits(deadline_seconds=0.5)) as client:
            assert (await client.get(f"https://{NAME}/ok")).status_code == 200
            await asyncio.sleep(0.6)
            await client.get(f"https://{NAME}/ok")

    with pytest.raises(UpstreamTimeout):
        run(call)


def test_a_certificate_for_another_name_is_refused(server: Server, settings: EgressSettings) -> None:
    with pytest.raises(UpstreamError) as error:
        get("https://other.mcp.test/ok", settings)  # resolves to the server, whose certificate names api.mcp.test
    assert error.value.reason == "tls"


def test_without_the_local_ca_the_certificate_is_not_trusted(server: Server, settings: EgressSettings) -> None:
    untrusting = EgressSettings(allowed_domains=settings.allowed_domains, local_resolve=settings.local_resolve,
                                local_allow_addresses=settings.local_allow_addresses)
    with pytest.raises(UpstreamError) as error:
        get(f"https://{NAME}/ok", untrusting)
    assert error.value.reason == "tls"


def test_the_allowed_address_wrapped_in_ipv6_is_not_the_allowed_address(server: Server, settings: EgressSettings) -> None:
    # ::ffff:127.x.y.z is the allowed address wrapped: it is still loopback and not the listed address.
    with pytest.raises(Refused) as refused:
        get("https://wrapped.mcp.test/ok", settings)
    assert refused.value.reason == "address_loopback"


def test_127_0_0_1_is_refused_even_when_listed(server: Server, settings: EgressSettings) -> None:
    import ipaddress

    # from_env refuses to list it (tests/unit/test_egress_settings.py); a settings object built around that
    # check still does not reach it.
    listed = EgressSettings(
        allowed_domains=("mcp.test",), local_resolve={NAME: ("127.0.0.1",)},
        local_allow_addresses=frozenset({ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address(server.server_address[0])}),
        local_ca_bundle=settings.local_ca_bundle,
    )
    with pytest.raises(Refused) as refused:
        get(f"https://{NAME}/ok", listed)
    assert refused.value.reason == "address_loopback"
    with pytest.raises(ValueError, match="127.0.0.1 is never allowed"):
        EgressSettings.from_env({"SKILLS_LOCAL": "1", "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES": "127.0.0.1"})


def test_an_internal_address_not_listed_is_refused(server: Server, settings: EgressSettings) -> None:
    other = "127.0.0.3" if server.server_address[0] != "127.0.0.3" else "127.0.0.4"
    moved = EgressSettings(allowed_domains=("mcp.test",), local_resolve={NAME: (other,)},
                           local_allow_addresses=settings.local_allow_addresses, local_ca_bundle=settings.local_ca_bundle)
    with pytest.raises(Refused) as refused:
        get(f"https://{NAME}/ok", moved)
    assert refused.value.reason == "address_loopback"
