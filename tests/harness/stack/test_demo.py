"""`make demo`: the local stack with a test MCP server over TLS beside it (skillcore_local/demo.py), started as a
person would start it, in a process of its own, without the privilege of binding a port below 1024 (a root
test run drops it with setpriv), and a hosted endpoint registered against the demo's server over the local stack,
its tool called after the person's approval. Also the pieces of the banner and the root paths `make dev` serves."""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

from skillcore_local.jwt_local import issue_token
from skillcore_local.ports import free_port
from skillcore_local.template import ROOT

pytestmark = pytest.mark.stack

SECRET = "demo-test-secret-of-at-least-32-bytes-long"
START_SECONDS = 120  # DynamoDB Local's JVM and the first imports, on a loaded machine


@dataclass
class Demo:
    process: subprocess.Popen[str]
    banner: str
    url: str  # the local API
    paste: str  # the URL the banner says to paste
    serving: tuple[str, int]  # the demo MCP server's address and port

    def request(self, method: str, path: str, body: Any = None, token: str | None = None
                ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(self.url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            connection.request(method, path, None if body is None else json.dumps(body), headers)
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def ok(self, method: str, path: str, body: Any = None, *, token: str, status: int = 200) -> Any:
        got, _headers, raw = self.request(method, path, body, token)
        assert got == status, (method, path, got, raw[:500])
        return json.loads(raw) if raw else None


def _without_privileged_ports() -> list[str]:
    """The command prefix that takes away binding ports below 1024 when the tests run as root (a normal user
    never has it)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root without setpriv: cannot show that the demo needs no privileged port")
    return [setpriv, "--bounding-set=-net_bind_service"]


def _read_lines(stream: Any, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    data_dir = tmp_path_factory.mktemp("demo-data")
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'skillcore'}",
        "SKILLS_LOCAL_PORT": str(free_port()),
        "SKILLS_LOCAL_DDB_PORT": str(free_port()),
        "SKILLS_LOCAL_DATA_DIR": str(data_dir),
        "SKILLS_LOCAL_SCAN_INTERVAL": "0",
        "SKILLS_LOCAL_JWT_SECRET": SECRET,
        "PYTHONUNBUFFERED": "1",
    }
    for name in ("SKILLS_HOSTED_ALLOWED_DOMAINS", "SKILLS_LOCAL_HOSTED_RESOLVE", "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES",
                 "SKILLS_LOCAL_HOSTED_CA_BUNDLE", "SKILLS_LOCAL_HOSTED_CONNECT_PORT", "SKILLS_DEMO_MCP_PORT"):
        env.pop(name, None)
    process = subprocess.Popen([*_without_privileged_ports(), sys.executable, "-m", "skillcore_local.demo"],
                               cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + START_SECONDS
    try:
        while not any(line.startswith("  CA ") for line in seen):
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail("the demo did not print its banner in time:\n" + "".join(seen))
            if line is None:
                pytest.fail(f"the demo ended ({process.wait()}):\n" + "".join(seen))
            seen.append(line)
        banner = "".join(seen)
        api = re.search(r"^  API\s+(\S+)", banner, re.M)
        paste = re.search(r"^  paste\s+(\S+)", banner, re.M)
        serving = re.search(r"^  serving\s+([\d.]+):(\d+);", banner, re.M)
        assert api and paste and serving, banner
        yield Demo(process, banner, api.group(1), paste.group(1), (serving.group(1), int(serving.group(2))))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def test_the_banner_names_the_page_the_docs_the_api_and_the_url_to_paste(demo: Demo) -> None:
    assert re.search(rf"^  page\s+{re.escape(demo.url)}/skills/\s", demo.banner, re.M), demo.banner
    assert re.search(rf"^  docs\s+{re.escape(demo.url)}/docs\s", demo.banner, re.M), demo.banner
    assert demo.paste == "https://api.mcp.test/mcp"
    address, port = demo.serving
    assert address.startswith("127.") and address != "127.0.0.1"
    assert port >= 1024, "the demo server must not need a privileged port"


def test_root_redirects_to_the_page_and_the_favicon_is_served(demo: Demo) -> None:
    status, headers, _ = demo.request("GET", "/")
    assert (status, headers.get("location")) == (302, "/skills/")
    status, headers, body = demo.request("GET", "/favicon.ico")
    assert status == 200 and headers["content-type"] == "image/svg+xml"
    assert body == (ROOT / "web" / "favicon.svg").read_bytes()
    status, _headers, _ = demo.request("HEAD", "/favicon.ico")
    assert status == 200
    status, _headers, _ = demo.request("POST", "/")
    assert status == 405


def test_a_hosted_endpoint_registers_against_the_demo_server_and_its_tool_answers(demo: Demo) -> None:
    token = issue_token(f"demo-{uuid.uuid4().hex[:8]}", secret=SECRET)
    profile = demo.ok("PUT", "/rpc/me", {"initialTimezone": "Europe/Paris"}, token=token)
    assert profile["timezone"] == "Europe/Paris"
    demo.ok("PATCH", "/rpc/skills/permissions", {
        "skillId": "hosted-workflows", "permissionCode": "hosted_workflow:invoke", "scope": {"type": "user"},
        "granted": True}, token=token)
    endpoint = demo.ok("POST", "/rpc/hosted-endpoints", {"name": "demo_flow", "displayName": "Demo",
                                                         "url": demo.paste}, token=token, status=201)
    assert endpoint["host"] == "api.mcp.test"
    tools = {tool["name"]: tool for tool in endpoint["snapshot"]["tools"]}
    assert set(tools) == {"echo", "add"}
    endpoint = demo.ok("PATCH", f"/rpc/hosted-endpoints/{endpoint['endpointId']}", {
        "expectedVersion": endpoint["version"], "tools": [{"name": "add", "enabled": True}]}, token=token)
    call = {"toolName": "add", "arguments": {"a": 2, "b": 3}, "clientCallId": "demo-call-1"}
    path = f"/rpc/hosted-endpoints/{endpoint['endpointId']}/calls"
    status, _headers, raw = demo.request("POST", path, call, token)
    asked = json.loads(raw)
    assert (status, asked["error"]["code"]) == (409, "approval_required"), asked
    approval_id = asked["error"]["details"]["approvalId"]
    demo.ok("POST", f"/rpc/approvals/{approval_id}", {"decision": "approve"}, token=token)
    answer = demo.ok("POST", path, {**call, "approvalId": approval_id}, token=token)
    assert answer["content"] in (5, "5"), answer


def test_ctrl_c_stops_the_stack_and_the_demo_server(demo: Demo) -> None:
    """Last in the module: it ends the demo the fixture started."""
    address, port = demo.serving
    demo.process.send_signal(signal.SIGINT)
    assert demo.process.wait(60) == 0
    with pytest.raises(OSError):
        http.client.HTTPConnection(address, port, timeout=2).connect()
    with pytest.raises(OSError):
        demo.request("GET", "/rpc/health")


@pytest.mark.parametrize("target", [["demo"], ["dev", "DEMO=1"]])
def test_make_demo_and_make_dev_demo_run_the_demo(target: list[str]) -> None:
    dry = subprocess.run(["make", "-n", "--no-print-directory", *target], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=True)
    assert dry.stdout.strip().splitlines()[-1].endswith("-m skillcore_local.demo"), dry.stdout
    plain = subprocess.run(["make", "-n", "--no-print-directory", "dev"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60, check=True)
    assert plain.stdout.strip().splitlines()[-1].endswith("-m skillcore_local.stack"), plain.stdout
