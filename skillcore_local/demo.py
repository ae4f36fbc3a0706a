"""`make demo` (or `make dev DEMO=1`): the local stack with a test MCP server beside it, ready to register on the page.

The server is the hosted endpoint tests' (tests/hosted_server.py: the official MCP SDK over HTTPS, tools `echo`
and `add`, a certificate for `api.mcp.test` from a CA of its own made at start with trustme). It listens on a
loopback address other than 127.0.0.1 and on a port a normal user may bind (`SKILLS_DEMO_MCP_PORT`, default any
free one): the URL a person pastes still says port 443, as the URL policy requires, and the local-only
`SKILLS_LOCAL_HOSTED_CONNECT_PORT` makes the egress connect to that port on that address alone. The other settings
it applies before the stack starts are the ones docs/hosted-workflows.md names: `SKILLS_HOSTED_ALLOWED_DOMAINS`
(`mcp.test`), `SKILLS_LOCAL_HOSTED_RESOLVE`, `SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES` and
`SKILLS_LOCAL_HOSTED_CA_BUNDLE` (the CA under `$SKILLS_LOCAL_DATA_DIR/demo-mcp/`, made anew on each start).
Nothing here is deployed. A list the developer already set (allowed domains, resolve, allowed addresses) keeps
its entries, the demo's are added; the CA bundle and the connect port are the demo's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from skillcore_local import stack

if TYPE_CHECKING:
    from tests.hosted_server import HostedServer

PORT_VARIABLE = "SKILLS_DEMO_MCP_PORT"


def start_server(directory: Path, port: int = 0) -> HostedServer:
    """The test MCP server on a loopback address, `port` 0 = any free one; its CA and certificate in `directory`."""
    from tests.hosted_server import HostedServer

    directory.mkdir(parents=True, exist_ok=True)
    return HostedServer(directory, port=port).start()


LISTS = ("SKILLS_HOSTED_ALLOWED_DOMAINS", "SKILLS_LOCAL_HOSTED_RESOLVE", "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES")


def demo_env(server: HostedServer, base: Mapping[str, str]) -> dict[str, str]:
    """The settings that let the stack reach `server`, the lists of `base` (the developer's environment) kept."""
    env = server.settings_env()
    for name in LISTS:
        if base.get(name, "").strip():
            env[name] = base[name].strip() + "," + env[name]
    return env


def banner(server: HostedServer) -> list[str]:
    return [
        "demo: a test MCP server over TLS (its own CA), tools echo and add",
        f"  paste     {server.url()}    (Hosted workflows section, endpoint URL; any name, no token)",
        f"  serving   {server.address}:{server.port}; the stack connects there for api.mcp.test (local only)",
        f"  CA        {server.ca_file}",
        "",
    ]


def _port(env: Mapping[str, str]) -> int:
    raw = env.get(PORT_VARIABLE, "").strip()
    try:
        port = int(raw) if raw else 0
    except ValueError:
        raise SystemExit(f"{PORT_VARIABLE} must be a port number, got {raw!r}") from None
    if not 0 <= port < 65536:
        raise SystemExit(f"{PORT_VARIABLE} must be in 0..65535, got {raw!r}")
    return port


def main() -> int:
    data_dir = Path(os.environ.get("SKILLS_LOCAL_DATA_DIR") or ".local")
    try:
        server = start_server(data_dir / "demo-mcp", _port(os.environ))
    except (OSError, RuntimeError) as error:
        print(f"the demo MCP server did not start: {error}", file=sys.stderr)
        return 1
    try:
        os.environ.update(demo_env(server, os.environ))
        return stack.main(extra_banner=lambda _stack: banner(server))
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
