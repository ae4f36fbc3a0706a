"""Only skillcore/egress/ opens connections to hosts a user names (issue 12, docs/contract.md "Hosted external
workflows"): no other module of the product (the layer and functions/) imports a socket, TLS or HTTP client
library, or calls a connect/resolve function by name.

Known places outside this rule, and why they are not user hosts: boto3/botocore talk to AWS endpoints from
the region (db/, model/bedrock.py; test_import_boundaries.py keeps them there); skillcore_local/ is the local
stack (it serves HTTP, and is not deployed); scripts/ and tests/ are clients of the local stack.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "skillcore" / "skillcore"
EGRESS = LAYER / "egress"
NETWORK_MODULES = {
    "socket", "ssl", "http.client", "urllib.request", "urllib3", "httpx", "httpx2", "httpcore", "httpcore2",
    "requests", "aiohttp", "websockets", "mcp.client", "asyncio.streams", "anyio.streams",
}
NETWORK_CALLS = {"open_connection", "create_connection", "connect_tcp", "getaddrinfo", "urlopen",
                 "gethostbyname", "socketpair"}


def _network(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in NETWORK_MODULES)


def network_uses(source: str) -> list[tuple[int, str]]:
    """(line, what) of every import of a network module and every call of a network function, at any depth."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if _network(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _network(node.module):
                found.append((node.lineno, node.module))
            else:  # `from http import client`, `from mcp import client`
                found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                          if _network(f"{node.module}.{a.name}")]
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in NETWORK_CALLS:
                found.append((node.lineno, f"{name}()"))
    return found


def product_modules() -> list[Path]:
    return sorted(LAYER.rglob("*.py")) + sorted((ROOT / "functions").rglob("*.py"))


def test_the_finder_sees_every_form() -> None:
    source = (
        "import json\nimport socket\nfrom http import client\nfrom urllib.parse import urlsplit\n"
        "import urllib.request as r\ndef f():\n    import httpx2\n    from mcp.client.streamable_http import x\n"
        "    asyncio.open_connection('h', 1)\n    loop.getaddrinfo('h', 1)\nfrom mcp import types\nfrom . import ssl\n"
    )
    assert network_uses(source) == [
        (2, "socket"), (3, "http.client"), (5, "urllib.request"), (7, "httpx2"), (8, "mcp.client.streamable_http"),
        (9, "open_connection()"), (10, "getaddrinfo()"),
    ]


def test_no_module_outside_egress_opens_connections() -> None:
    modules = product_modules()
    assert len(modules) > 50, f"the layer was not found at {LAYER}"
    offenders = []
    for path in modules:
        if path.is_relative_to(EGRESS):
            continue
        offenders += [f"{path.relative_to(ROOT)}:{line} {what}" for line, what in network_uses(path.read_text("utf-8"))]
    assert offenders == [], "network access outside skillcore/egress/:\n" + "\n".join(offenders)


def test_egress_is_where_the_connections_are() -> None:
    # The rule is real only if the allowed place does use them.
    uses = {what for path in EGRESS.glob("*.py") for _, what in network_uses(path.read_text("utf-8"))}
    assert {"httpx2", "httpcore2", "ssl", "socket", "getaddrinfo()"} <= uses
