"""A real MCP server for the hosted endpoint tests (issue 12 point 7): built with the official SDK (MCPServer,
Streamable HTTP, stateless, JSON answers), served by uvicorn over HTTPS with a certificate for `api.mcp.test`
made at test time (trustme), on a random loopback address other than 127.0.0.1, port 443 (the port the URL
policy requires; binding it needs root, as here and in CI) or, with `port=0`, any free port, which a normal user
may bind (`make demo`: skillcore_local/demo.py). `settings_env()` is what lets skillcore reach it: the local-only
resolve / allow / CA (and connect port) settings of docs/contract.md "The local stack".

Besides `/mcp` (echo, add) it serves `/behaviours/mcp`, a second server whose tools misbehave on purpose for
the call tests: `slow` (answers after SLOW_SECONDS), `huge` (an answer over 1 MiB), `tool_error` (a result with
isError), and `redirect_me` / `fail_500`, whose tools/call the HTTP layer answers with a 307 or a 500 (listed
normally, so they are in the snapshot). `HostedServer.calls` counts the tools/call requests received, by tool.
"""

from __future__ import annotations

import json
import random
import socket
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import trustme

NAME = "api.mcp.test"
DOMAIN = "mcp.test"
# Every MCPServer build_app() made, last one last: HostedServer keeps its own to change its tools at run time.
BUILT: list[Any] = []


def build_app() -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

    server = MCPServer("hosted-test", log_level="WARNING")  # its INFO lines (a session per call) are noise
    BUILT.append(server)

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server.streamable_http_app(
        stateless_http=True, json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))


SLOW_SECONDS = 8.0
HUGE_BYTES = 1024 * 1024 + 4096


def build_behaviours_app() -> Any:
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

    server = MCPServer("hosted-behaviours", log_level="WARNING")

    @server.tool()
    async def slow(text: str) -> str:
        """Answer after a long wait."""
        await anyio.sleep(SLOW_SECONDS)
        return text

    @server.tool()
    def huge() -> str:
        """Answer more than a mebibyte."""
        return "x" * HUGE_BYTES

    @server.tool()
    def tool_error(text: str) -> str:
        """Fail as a tool (a result with isError)."""
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError(f"the tool failed on {text}")

    @server.tool()
    def redirect_me() -> str:
        """Its call is answered with a redirect."""
        return "never"

    @server.tool()
    def fail_500() -> str:
        """Its call is answered with a 500."""
        return "never"

    return server.streamable_http_app(
        stateless_http=True, json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))


class CallCounter:
    """ASGI middleware: counts tools/call requests by tool name and every JSON-RPC message by method, and answers
    the HTTP-level behaviours."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.calls: Counter[str] = Counter()
        self.methods: Counter[str] = Counter()
        self.lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        name = None
        method = request.get("method") if isinstance(request, dict) else None
        if isinstance(method, str):
            if method == "tools/call":
                name = str((request.get("params") or {}).get("name"))
            with self.lock:
                self.methods[method] += 1
                if name is not None:
                    self.calls[name] += 1
        if name in ("redirect_me", "fail_500"):
            status, headers = (307, [(b"location", f"https://{NAME}/mcp".encode())]) if name == "redirect_me" \
                else (500, [(b"content-type", b"text/plain")])
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": b"" if status == 307 else b"internal error"})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def build_root_app() -> CallCounter:
    """`/mcp` (build_app) and `/behaviours/mcp` (build_behaviours_app), both lifespans run, calls counted."""
    import contextlib

    from starlette.applications import Starlette
    from starlette.routing import Mount

    main, behaviours = build_app(), build_behaviours_app()

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> Any:
        async with main.router.lifespan_context(main), behaviours.router.lifespan_context(behaviours):
            yield

    return CallCounter(Starlette(routes=[Mount("/behaviours", app=behaviours), Mount("/", app=main)],
                                 lifespan=lifespan))


def _free_address() -> str:
    return free_address_and_port(443)[0]


def free_address_and_port(port: int = 443) -> tuple[str, int]:
    """A loopback address other than 127.0.0.1 with `port` free there (0: any free port, chosen by the system)."""
    rng = random.Random()
    for _ in range(50):
        address = f"127.{rng.randrange(0, 256)}.{rng.randrange(0, 256)}.{rng.randrange(2, 255)}"
        if address == "127.0.0.1":
            continue
        probe = socket.socket()
        try:
            probe.bind((address, port))
            chosen = probe.getsockname()[1]
        except OSError:
            continue
        finally:
            probe.close()
        return address, chosen
    raise RuntimeError(f"no loopback address with port {port or 'any'} free")


def url(path: str = "/mcp") -> str:
    return f"https://{NAME}{path}"


def settings_env(address: str, ca_file: Path, port: int = 443) -> dict[str, str]:
    """What lets skillcore reach the server at `address` (on `port`: the URL still says 443, and
    SKILLS_LOCAL_HOSTED_CONNECT_PORT maps it), trusting `ca_file`, and nothing else internal."""
    env = {
        "SKILLS_HOSTED_ALLOWED_DOMAINS": DOMAIN,
        "SKILLS_LOCAL_HOSTED_RESOLVE": f"{NAME}={address},internal.{DOMAIN}=127.0.0.1",
        "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES": address,
        "SKILLS_LOCAL_HOSTED_CA_BUNDLE": str(ca_file),
    }
    if port != 443:
        env["SKILLS_LOCAL_HOSTED_CONNECT_PORT"] = str(port)
    return env


class HostedServer:
    """`port` 443 (the default) needs root; any other (0: a free one) works for a normal user, with
    SKILLS_LOCAL_HOSTED_CONNECT_PORT in `settings_env()` (`make demo` runs it so)."""

    def __init__(self, directory: Path, port: int = 443) -> None:
        import uvicorn

        self.ca = trustme.CA()
        self.directory = directory
        self.cert_file = directory / "server.pem"
        self.ca_file = directory / "ca.pem"
        self.ca.issue_cert(NAME).private_key_and_cert_chain_pem.write_to_path(str(self.cert_file))
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.address, self.port = free_address_and_port(port)
        self.app = build_root_app()
        config = uvicorn.Config(self.app, host=self.address, port=self.port, ssl_certfile=str(self.cert_file),
                                ssl_keyfile=str(self.cert_file), log_level="warning", lifespan="on")
        self.mcp = BUILT[-1]
        self._original_tools = self._copy_tools()
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> HostedServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test MCP server did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def calls(self) -> Counter[str]:
        """tools/call requests received so far, by tool name."""
        with self.app.lock:
            return Counter(self.app.calls)

    @property
    def methods(self) -> Counter[str]:
        """JSON-RPC messages received so far (requests and notifications), by method."""
        with self.app.lock:
            return Counter(self.app.methods)

    def url(self, path: str = "/mcp") -> str:
        return url(path)

    def settings_env(self) -> dict[str, str]:
        return settings_env(self.address, self.ca_file, self.port)

    # -- the tool list at run time (drift tests). tools/list answers whatever is here at the time of the request.

    def _tools(self) -> dict[str, Any]:
        return self.mcp._tool_manager._tools

    def _copy_tools(self) -> dict[str, Any]:
        return {name: tool.model_copy(deep=True) for name, tool in self._tools().items()}

    def add_tool(self, name: str, description: str, input_schema: dict[str, Any]) -> None:
        """A tool listed with exactly this schema (a call answers "ok")."""
        def handler() -> str:
            return "ok"

        tool = self.mcp._tool_manager.add_tool(handler, name=name, description=description)
        tool.parameters = input_schema

    def remove_tool(self, name: str) -> None:
        self.mcp.remove_tool(name)

    def set_description(self, name: str, description: str) -> None:
        self._tools()[name].description = description

    def set_schema(self, name: str, input_schema: dict[str, Any]) -> None:
        self._tools()[name].parameters = input_schema

    def reset_tools(self) -> None:
        """Back to the tools the server started with."""
        tools = self._tools()
        tools.clear()
        tools.update({name: tool.model_copy(deep=True) for name, tool in self._original_tools.items()})


def serve(directory: Path) -> None:
    """The server in a process of its own, until its standard input closes: `make bench` measures the proxy
    against an endpoint that shares no interpreter (and no GIL) with it, as a remote one would. Prints the
    address once serving; the CA is `directory/ca.pem`."""
    server = HostedServer(directory).start()
    print(server.address, flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
