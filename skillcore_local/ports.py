"""Local ports: probing them the way the servers will bind them, and saying clearly when one is taken.

Every probe sets SO_REUSEADDR, as the servers do (http.server's HTTPServer, Jetty in DynamoDB Local): without
it, the TIME_WAIT and FIN_WAIT sockets a stopped server leaves behind for about a minute make a free port look
taken, and restarting `make dev` right after Ctrl-C fails. With it, only a socket that is really listening
(another `make dev`, another program) makes the bind fail.
"""

from __future__ import annotations

import errno
import socket

HOST = "127.0.0.1"


class PortInUse(OSError):
    """A port the local stack needs is held by a listening socket; the message says which and how to fix it."""

    def __init__(self, port: int, variable: str, what: str) -> None:
        self.port = port
        self.variable = variable
        example = port + 100 if port + 100 <= 65535 else port - 100
        super().__init__(
            errno.EADDRINUSE,
            f"port {port} ({what}, set by {variable}) is already in use: another `make dev` may be running "
            f"(`ss -ltnp 'sport = :{port}'` shows the process). Stop it, or pick another port: "
            f"{variable}={example} make dev",
        )

    def __str__(self) -> str:
        return str(self.strerror)


def _socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    return sock


def free_port(host: str = HOST) -> int:
    """A port nothing listens on now (the OS's choice)."""
    with _socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int, host: str = HOST) -> bool:
    """True unless a socket is listening on `port` (leftover TIME_WAIT connections do not count)."""
    with _socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def is_address_in_use(error: BaseException) -> bool:
    return isinstance(error, OSError) and error.errno == errno.EADDRINUSE
