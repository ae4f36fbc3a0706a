"""The page's modules: one folder per section (its index.js listed in web/sections/index.js, its messages.js),
every module loads in node with its imports resolved (a missing export or a syntax error fails here, not only
in the browser tests), and no field keeps a copy of a server limit (a literal maxlength)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from skillcore_local.page import NODE_MODULES, WEB_ROOT

SECTIONS = WEB_ROOT / "sections"

# The browser globals the modules touch while they load (the messages' language, the chat runs' store).
LOADER = """
const store = () => { const m = new Map(); return { getItem: (k) => m.get(k) ?? null,
  setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k) }; };
globalThis.document = { documentElement: {}, getElementById: () => null };
globalThis.localStorage = store();
globalThis.sessionStorage = store();
globalThis.location = { hash: "", pathname: "/skills/", search: "" };
globalThis.addEventListener = () => {};
const failed = [];
for (const file of JSON.parse(process.argv[1])) {
  try { await import(file); } catch (error) { failed.push(`${file}: ${error.message}`); }
}
console.log(JSON.stringify(failed));
"""


def listed_sections() -> list[str]:
    text = (SECTIONS / "index.js").read_text(encoding="utf-8")
    return re.findall(r'import\("\./([a-z_]+)/index\.js"\)', text)


def test_each_section_is_a_folder_with_its_index_and_messages_listed_in_the_index() -> None:
    folders = sorted(p.name for p in SECTIONS.iterdir() if p.is_dir())
    assert sorted(listed_sections()) == folders
    assert [p.name for p in SECTIONS.glob("*.js")] == ["index.js"], "a section is a folder, not a module"
    for name in folders:
        assert (SECTIONS / name / "index.js").is_file(), name
        assert (SECTIONS / name / "messages.js").is_file(), name
        index = (SECTIONS / name / "index.js").read_text(encoding="utf-8")
        assert 'import "./messages.js";' in index, name
        assert "export default function" in index, name


def test_every_page_module_loads_with_its_imports_resolved() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (`make node` needs it too)")
    if not (NODE_MODULES / "preact").is_dir():
        pytest.fail("the page's npm modules are not installed: run `make node`")
    # app.js is the entry point: it boots the page on load, which needs a browser.
    files = sorted(str(p) for p in WEB_ROOT.rglob("*.js") if p.name != "app.js" or p.parent != WEB_ROOT)
    assert len(files) > 20
    done = subprocess.run(  # noqa: S603
        [node, "--input-type=module", "-e", LOADER, json.dumps(files)],
        capture_output=True, text=True, timeout=60, check=True, cwd=WEB_ROOT.parent,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_no_field_keeps_a_copy_of_a_server_limit() -> None:
    literal = re.compile(r"""maxlength=(?:"\d+"|'\d+'|\d+)""")
    copies = [
        f"{p.relative_to(WEB_ROOT)}: {m.group(0)}"
        for p in WEB_ROOT.rglob("*.js")
        for m in literal.finditer(p.read_text(encoding="utf-8"))
    ]
    assert copies == [], "limits come from the profile (lib/limits.js)"
