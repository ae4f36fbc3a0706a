"""A hostile MCP server for the egress deadline tests: raw HTTP/1.1 over real TLS (a trustme certificate for
`hostile.mcp.test` and `slowtls.mcp.test`), on a random loopback address other than 127.0.0.1, port 443, one
thread per connection, so that every byte and every pause is the test's choice.

The path names the behaviour and the request that gets it: `/<behaviour>/<method>`, method one of
`initialize`, `list` (tools/list) or `call` (tools/call), or one of them prefixed `armed_`: that one misbehaves
only once the path is in `HostileServer.armed` (an endpoint registers normally, then its call or refresh meets
the behaviour). Every request before the misbehaving one is answered correctly (JSON), so a session reaches
the misbehaving step. Behaviours (BEHAVIOURS):

- `prime_close`: an SSE answer holding one priming event (`id: 1`, `retry: 600000`, empty data), then the
  connection closes; the reconnection GET (`Last-Event-ID`) gets the same again;
- `trickle`: an SSE answer that sends one byte of a comment every TRICKLE_SECONDS, for ever;
- `comments`: an SSE answer of `: ping` comments every 20 ms, for ever;
- `chunked`: a JSON answer in endless chunks, as fast as the client reads;
- `huge_line`: an SSE answer of one `data:` line of HUGE_LINE_BYTES, no newline;
- `slow_tls`: the host name `slowtls.mcp.test` (SNI): the TLS handshake stalls for SLOW_TLS_SECONDS while
  `HostileServer.stall_tls` is true (the default).

`HostileServer.methods` counts the JSON-RPC methods received, so a test can tell whether tools/call was sent.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import trustme

from tests.hosted_server import DOMAIN, _free_address

NAME = "hostile.mcp.test"
SLOW_TLS_NAME = "slowtls.mcp.test"
BEHAVIOURS = ("prime_close", "trickle", "comments", "chunked", "huge_line", "slow_tls")
METHODS = {"initialize": "initialize", "list": "tools/list", "call": "tools/call"}
TRICKLE_SECONDS = 0.5
SLOW_TLS_SECONDS = 60.0
HUGE_LINE_BYTES = 2 * 1024 * 1024
FOREVER_SECONDS = 120.0  # what "for ever" means here: a leaked client cannot keep a server thread longer
TOOLS = [{"name": "echo", "description": "Echo the text back.",
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]


def url(behaviour: str, method: str, tag: str = "") -> str:
    """`tag`, a last path segment the server ignores, makes an `armed_` path a test's own."""
    host = SLOW_TLS_NAME if behaviour == "slow_tls" else NAME
    return f"https://{host}/{behaviour}/{method}" + (f"/{tag}" if tag else "")


def settings_env(address: str, ca_file: Path) -> dict[str, str]:
    return {
        "SKILLS_HOSTED_ALLOWED_DOMAINS": DOMAIN,
        "SKILLS_LOCAL_HOSTED_RESOLVE": f"{NAME}={address},{SLOW_TLS_NAME}={address}",
        "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES": address,
        "SKILLS_LOCAL_HOSTED_CA_BUNDLE": str(ca_file),
    }


class _Closed(Exception):
    pass


class HostileServer:
    def __init__(self, directory: Path) -> None:
        self.ca = trustme.CA()
        cert_file, self.ca_file = directory / "hostile.pem", directory / "hostile-ca.pem"
        self.ca.issue_cert(NAME, SLOW_TLS_NAME).private_key_and_cert_chain_pem.write_to_path(str(cert_file))
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(str(cert_file))
        self.context.sni_callback = self._sni  # type: ignore[assignment]
        self.address = _free_address()
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self._methods: Counter[str] = Counter()
        self.armed: set[str] = set()  # `/<behaviour>/armed_<method>` paths that misbehave from now on
        self.stall_tls = True
        self.connections = 0  # open now, past the TLS handshake
        self.listener = socket.create_server((self.address, 443))
        self.listener.settimeout(0.2)  # accept() wakes up to see `stopping`
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def start(self) -> HostileServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.listener.close()
        self.thread.join(5)

    @property
    def methods(self) -> Counter[str]:
        with self.lock:
            return Counter(self._methods)

    def url(self, behaviour: str, method: str, tag: str = "") -> str:
        return url(behaviour, method, tag)

    def arm(self, behaviour: str, method: str, tag: str = "") -> None:
        """`/<behaviour>/armed_<method>[/<tag>]` misbehaves from now on (and handshakes with `slowtls` stall)."""
        self.armed.add(f"/{behaviour}/armed_{method}" + (f"/{tag}" if tag else ""))
        self.stall_tls = True

    def settings_env(self) -> dict[str, str]:
        return settings_env(self.address, self.ca_file)

    # -- connections

    def _sni(self, _sock: Any, name: str | None, _context: Any) -> None:
        if name == SLOW_TLS_NAME and self.stall_tls:
            self.stopping.wait(SLOW_TLS_SECONDS)  # the handshake waits here (this connection's thread only)

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                raw, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._connection, args=(raw,), daemon=True).start()

    def _connection(self, raw: socket.socket) -> None:
        raw.settimeout(FOREVER_SECONDS)  # accepted sockets inherit the listener's timeout otherwise
        counted = False
        try:
            with self.context.wrap_socket(raw, server_side=True) as tls:
                with self.lock:
                    self.connections += 1
                counted = True
                reader = tls.makefile("rb")
                while not self.stopping.is_set():
                    if not self._exchange(tls, reader):
                        return
        except (OSError, _Closed, ValueError):
            return
        finally:
            raw.close()
            if counted:
                with self.lock:
                    self.connections -= 1

    def _exchange(self, tls: ssl.SSLSocket, reader: Any) -> bool:
        """One request and its answer; False once the connection is to close."""
        request_line = reader.readline(65536)
        if not request_line:
            return False
        verb, path, _ = request_line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (line := reader.readline(65536)) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = reader.read(int(headers.get("content-length", "0") or 0))
        _, behaviour, method = (path.split("/") + ["", ""])[:3]
        if verb == "GET" and headers.get("last-event-id") and behaviour == "prime_close":
            self._misbehave(tls, behaviour)
            return False
        if verb != "POST":
            self._send(tls, 405, b"", "text/plain")
            return True
        message = json.loads(body)
        with self.lock:
            self._methods[message.get("method", "")] += 1
        armed = method.startswith("armed_")
        target = METHODS.get(method.removeprefix("armed_")) if path in self.armed or not armed else None
        if message.get("method") == target:
            self._misbehave(tls, behaviour)
            return False
        if "id" not in message:
            self._send(tls, 202, b"", "text/plain")
            return True
        self._send(tls, 200, json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                         "result": self._result(message)}).encode(), "application/json")
        return True

    def _result(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message.get("method")
        if method == "initialize":
            return {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"}}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            return {"content": [{"type": "text", "text": "ok"}], "isError": False}
        return {}

    @staticmethod
    def _send(tls: ssl.SSLSocket, status: int, body: bytes, content_type: str) -> None:
        tls.sendall(f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
                    .encode() + body)

    def _misbehave(self, tls: ssl.SSLSocket, behaviour: str) -> None:
        until = time.monotonic() + FOREVER_SECONDS

        def write(data: bytes) -> None:
            if self.stopping.is_set() or time.monotonic() > until:
                raise _Closed
            tls.sendall(data)

        def chunk(data: bytes) -> bytes:
            return f"{len(data):x}\r\n".encode() + data + b"\r\n"

        sse = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        if behaviour == "prime_close":
            write(sse + b"Connection: close\r\n\r\nid: 1\nretry: 600000\ndata: \n\n")
        elif behaviour == "trickle":
            write(sse + b"Transfer-Encoding: chunked\r\n\r\n")
            while True:
                write(chunk(b":"))
                time.sleep(TRICKLE_SECONDS)
        elif behaviour == "comments":
            write(sse + b"Transfer-Encoding: chunked\r\n\r\n")
            while True:
                write(chunk(b": ping\n\n"))
                time.sleep(0.02)
        elif behaviour == "chunked":
            write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            write(chunk(b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "'))
            while True:
                write(chunk(b"x" * 16384))
        elif behaviour == "huge_line":
            write(sse + b"Connection: close\r\n\r\ndata: ")
            for _ in range(HUGE_LINE_BYTES // 16384):
                write(b"x" * 16384)
            tls.recv(1)  # the line, never ended, stays open until the client closes the connection
