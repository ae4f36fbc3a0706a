"""Section mcp: McpFunction's cold import against a bare stateless MCP server made with the same SDK.

Measured like section 1 (scripts/bench_cold.py): a fresh `python -I` per sample, the handler environment as
deployed, the code directory and the layer on sys.path as Lambda puts them, import-to-ready of `app.py`,
one warm-up per module, and the verdict the median over rounds of McpFunction / the bare server measured
just before it. The bare server is what any Lambda MCP server with this SDK imports: Powertools' Logger,
boto3 and a DynamoDB client (section 1's bare handler), the SDK's low-level server with one tool, its
Streamable HTTP session manager, Starlette and Mangum. So the ratio is what skillcore adds over the SDK (its
settings, stores, skills registry, the services and the tools' models); the SDK's own import, most of this
function's init, is shown by the SDK-only server and the section 1 bare handler beside it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from scripts.bench_cold import BARE_HANDLER, by_package, handler_env, handler_file, parse_importtime, sample
from scripts.bench_common import Report, median

SECTION = "mcp cold import"
TARGET_RATIO = 1.3

SDK_SERVER = '''"""A bare stateless MCP server on Lambda: the SDK's low-level server, one tool, JSON responses."""
import asyncio
import contextlib

import mcp.types as types
from mangum import Mangum
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Route


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="echo", description="Echo.", input_schema={
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})])


async def call_tool(ctx, params):
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server("bare", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


def lambda_handler(event, context):
    manager = StreamableHTTPSessionManager(server, stateless=True, json_response=True)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with manager.run():
            yield

    app = Starlette(routes=[Route("/mcp", StreamableHTTPASGIApp(manager))], lifespan=lifespan)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return Mangum(app, lifespan="on")(event, context)
    finally:
        asyncio.set_event_loop(None)
        loop.close()
'''

# Section 1's bare handler (Logger, boto3, a DynamoDB client) plus the SDK server: the verdict's baseline.
BARE_SERVER = BARE_HANDLER + "\n" + SDK_SERVER.split('"""', 2)[2]


def run(report: Report, *, quick: bool) -> dict[str, Any]:
    runs = 5 if quick else 11
    report.heading(f"MCP. Cold import of McpFunction against a bare stateless MCP server (median of {runs})")
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        env = handler_env(tmp)
        targets: dict[str, tuple[Path, Path]] = {}
        for name, source in (("bare handler", BARE_HANDLER), ("SDK-only server", SDK_SERVER),
                             ("bare MCP server", BARE_SERVER)):
            folder = Path(tmp) / name.replace(" ", "-")
            folder.mkdir()
            (folder / "app.py").write_text(source, encoding="utf-8")
            targets[name] = (folder, folder / "app.py")
        targets["McpFunction"] = handler_file("McpFunction")
        for code_dir, path in targets.values():  # warm-up: bytecode caches
            sample(code_dir, path, env)
        samples: dict[str, list[float]] = {name: [] for name in targets}
        modules: dict[str, int] = {}
        ratios: list[float] = []
        for round_number in range(runs):
            order = list(targets) if round_number % 2 == 0 else list(reversed(targets))
            for name in order:
                code_dir, path = targets[name]
                millis, _cpu, modules[name], _ = sample(code_dir, path, env)
                samples[name].append(millis)
            ratios.append(samples["McpFunction"][-1] / samples["bare MCP server"][-1])
        logs = {name: parse_importtime(sample(*targets[name], env, importtime=True)[3])
                for name in ("bare MCP server", "McpFunction")}

    ratio = median(ratios)
    bare = median(samples["bare MCP server"])
    rows = [(name, f"{median(values):.0f}", f"{min(values):.0f}", f"{max(values):.0f}", modules[name],
             f"{median(values) / bare:.2f}") for name, values in samples.items()]
    report.table(["module", "median ms", "min ms", "max ms", "modules", "median / bare MCP server"], rows)
    extra = {pkg: ms - by_package(logs["bare MCP server"]).get(pkg, 0.0)
             for pkg, ms in by_package(logs["McpFunction"]).items()}
    big = sorted(((p, v) for p, v in extra.items() if v > 3), key=lambda kv: -kv[1])[:10]
    report.line("  McpFunction's self ms by top-level package over the bare MCP server (-X importtime, > 3 ms): "
                + (", ".join(f"{p} +{v:.0f}" for p, v in big) or "nothing above 3 ms"))
    sdk = median(samples["SDK-only server"])
    report.line(f"  the SDK-only server alone takes {sdk:.0f} ms, {sdk / median(samples['bare handler']):.1f} times"
                " section 1's bare handler: the SDK's import is most of this function's init")
    report.verdict(SECTION, "McpFunction import / bare MCP server (paired median)", f"{ratio:.2f}",
                   f"<= {TARGET_RATIO}", ratio <= TARGET_RATIO)
    return {"samples": samples, "ratio": ratio}


if __name__ == "__main__":  # pragma: no cover - python -m scripts.bench_mcp prints this section alone
    from scripts.bench_common import ensure_import_paths

    ensure_import_paths()
    output = Report()
    run(output, quick=True)
    output.summary()
