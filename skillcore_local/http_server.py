"""The local gateway's HTTP server: reads requests (Content-Length or chunked, up to API Gateway's payload
limit), hands them to the gateway's dispatch, writes the answers, and answers http.server's own errors in the
API's envelope."""

from __future__ import annotations

import sys
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urlsplit

from skillcore_local.responses import HttpResponse, error_response, log_failure


class Dispatcher(Protocol):
    """What the server hands each request to (the gateway), and whether it logs each one."""

    access_log: bool

    def dispatch(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes, source_ip: str,
                 protocol: str) -> tuple[HttpResponse, str]: ...


MAX_REQUEST_BYTES = (
    10 * 1024 * 1024
)  # API Gateway's payload limit; the handler enforces the API's 64 KiB itself


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True  # a hung handler must not keep the process alive at exit
    allow_reuse_address = True
    # socketserver's default backlog is 5: a burst of concurrent clients (the stack's race tests fire 60 at
    # once) would see connections reset, which API Gateway never does.
    request_queue_size = 128

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], gateway: Dispatcher
    ) -> None:
        self.gateway = gateway
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client dropping a kept-alive connection is routine, not worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
            return
        super().handle_error(request, client_address)


_ERROR_CODES: dict[int, str] = {
    HTTPStatus.BAD_REQUEST: "bad_request",
    HTTPStatus.REQUEST_URI_TOO_LONG: "uri_too_long",
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "header_fields_too_large",
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "http_version_not_supported",
}


class _PayloadTooLarge(Exception):
    pass


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm on, a kept-alive client's delayed ACK
    # would hold the second one back ~40 ms per request.
    disable_nagle_algorithm = True
    server: LocalServer

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0:
            raise ValueError("negative Content-Length")
        if length > MAX_REQUEST_BYTES:
            raise _PayloadTooLarge
        return self.rfile.read(length)

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            size = int(self.rfile.readline(1024).split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(1024).strip():  # trailers
                    pass
                return b"".join(chunks)
            total += size
            if total > MAX_REQUEST_BYTES:
                raise _PayloadTooLarge
            chunks.append(self.rfile.read(size))
            self.rfile.readline(1024)

    def _handle(self) -> None:
        started = time.monotonic()
        gateway = self.server.gateway
        label = "-"
        try:
            body = self._read_body()
        except _PayloadTooLarge:
            self.close_connection = True  # the rest of the body is never read
            response = error_response(
                413, "payload_too_large", f"request body exceeds {MAX_REQUEST_BYTES} bytes"
            )
        except ValueError:
            self.close_connection = True
            response = error_response(400, "bad_request", "malformed request body framing")
        else:
            try:
                response, label = gateway.dispatch(
                    self.command,
                    self.path,
                    list(self.headers.items()),
                    body,
                    self.client_address[0],
                    self.request_version,
                )
            except Exception as error:  # noqa: BLE001 - the gateway's own bug: answer it rather than drop the line
                log_failure(f"the gateway, for {self.command} {urlsplit(self.path).path}", error)
                response, label = error_response(500, "internal", "the local gateway failed"), "-"
        if gateway.access_log:  # before sending: once the client has its answer, nobody may be listening
            elapsed = (time.monotonic() - started) * 1000
            print(
                f"{self.command} {self.path} -> {response.status} {label} {elapsed:.0f} ms",
                file=sys.stderr,
                flush=True,
            )
        self._send(response)

    def _send(self, response: HttpResponse) -> None:
        self.send_response_only(response.status)
        self.send_header("date", self.date_time_string())
        for name, value in response.headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(response.body)))
        if self.close_connection:
            self.send_header("connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def __getattr__(self, name: str) -> Any:
        # http.server looks up `do_<METHOD>` and answers an HTML 501 when there is none. Every method goes to
        # _handle instead, so the router answers unknown ones (TRACE, PROPFIND, ...) in the envelope: 405 with
        # Allow on a known path, 404 elsewhere.
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """What http.server answers itself (a malformed request line, a URI over 64 KiB, too many headers), in
        the envelope instead of its HTML page."""
        status = HTTPStatus(code)
        self.close_connection = True
        if len((self.requestline or "").split()) != 2:
            # Only a two-word request line is HTTP/0.9, which has no status line; a line that failed to parse
            # is still a client expecting one (http.server would leave it out).
            self.request_version = "HTTP/1.1"
        response = error_response(
            code, _ERROR_CODES.get(code, status.phrase.lower().replace(" ", "_")), message or status.phrase
        )
        if self.server.gateway.access_log:
            print(f"{self.requestline or '-'} -> {code} (http.server)", file=sys.stderr, flush=True)
        self._send(response)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's signature
        pass  # _handle writes one line per request itself
