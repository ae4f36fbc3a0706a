"""template.yaml's PagePathsFunction (the distribution's viewer-request function), run in node: the root
redirects to the page and folders serve their index. In this lane because it starts a node process; the rest of
the page template's rules are tests/harness/unit/test_page_template.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from skillcore_local.template import load_template
from tests.harness.unit.test_page_template import Template, props


@pytest.fixture
def template() -> Template:
    return load_template()


def run_paths_function(template: Template, uris: list[str]) -> list[Any]:
    """The distribution's viewer-request function, run in node on a request for each uri."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (`make node` needs it too)")
    code = props(template, "PagePathsFunction")["FunctionCode"]
    calls = "JSON.stringify(" + json.dumps(uris) + ".map((uri) => handler({request: {uri}})))"
    script = code + "\nconsole.log(" + calls + ");"
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True, timeout=30)  # noqa: S603
    return json.loads(done.stdout)


def test_the_root_redirects_to_the_page_and_folders_serve_their_index(template: Template) -> None:
    redirect = {
        "statusCode": 302,
        "statusDescription": "Found",
        "headers": {"location": {"value": "/skills/"}},
    }
    results = run_paths_function(
        template, ["/", "/skills", "/skills/", "/skills/app.js", "/skills/sections/"]
    )
    assert results == [
        redirect,
        redirect,
        {"uri": "/skills/index.html"},
        {"uri": "/skills/app.js"},
        {"uri": "/skills/sections/index.html"},
    ]
    config = props(template, "PagePathsFunction")["FunctionConfig"]
    assert config["Runtime"] == "cloudfront-js-2.0"
