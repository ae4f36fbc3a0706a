"""The README and docs/ stay true to the repository they describe.

- README.md is short (at most 250 lines): the rest is in docs/;
- every backticked Python symbol (`skillcore.…`, `skillcore_local.…`, `scripts.…`, and `python -m` modules)
  imports, every backticked repository path exists (a `*` must match something; a `<placeholder>` needs the
  folder before it), and every `make X` is a Makefile target;
- nothing sends a reader outside the repository: no `../` in the text (docs/ is flat, and README.md is at the
  root; code examples may import `../lib/…`), no document a clone does not have;
- every relative Markdown link resolves, anchors included.

Each test lists every bad reference it found, with its file and line. Pure: files and imports only.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "skillcore"
README_MAX_LINES = 250

# Folders and files at the repository's root that a backticked path may start with.
ROOT_DIRS = ("layers/", "functions/", "web/", "tests/", "scripts/", "skillcore_local/", "skillcore_pack/", "events/", "docs/",
             ".ci/")
ROOT_FILES = {
    "Makefile", "template.yaml", "package.json", "package-lock.json", "openapi.json", "pyproject.toml",
    "requirements-dev.txt", "samconfig.toml", "schemathesis.toml", "README.md", ".gitignore",
}
# `skillcore/…` is short for the layer's package, as `import skillcore` reads it.
LAYER_SHORT = "skillcore/"
PY_ROOTS = ("skillcore", "skillcore_local", "skillcore_pack", "scripts")

FENCE = re.compile(r"^(```|~~~)")
SPAN = re.compile(r"`([^`\n]+)`")
_ROOTS = "|".join(PY_ROOTS)
# Names that read like a dotted symbol but are not one: a skill package's manifest file (docs/packages.md).
NOT_SYMBOLS = {"skillcore.json"}
DOTTED = re.compile(rf"^((?:{_ROOTS})(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?$")
PYTHON_M = re.compile(rf"python3? -m ((?:{_ROOTS})(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
MAKE = re.compile(r"(?:^|[\s;(&|`])make (?:-s )?([a-z][a-z0-9_-]*)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
OUTSIDE = [
    (re.compile(r"\bshared/"), "a shared folder outside the repository"),
    (re.compile(r"API\.md"), "API.md (docs/contract.md is the contract)"),
    (re.compile(r"DESIGN\.md"), "DESIGN.md (docs/architecture.md is the design)"),
    (re.compile(r"\bseeds\b|\bseed \d{3}\b", re.IGNORECASE), "the design seeds"),
]


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def lines_of(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, inside a fenced code block)."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        yield number, line, fenced


def spans(path: Path) -> Iterator[tuple[int, str]]:
    """Backticked text outside fenced blocks."""
    for number, line, fenced in lines_of(path):
        if not fenced:
            for found in SPAN.finditer(line):
                yield number, found.group(1).strip()


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", text, re.MULTILINE)}


def resolves(dotted: str) -> bool:
    """The longest importable module prefix, then attributes for the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def repo_path(text: str) -> str | None:
    """The repository path a backticked span names, or None when it names none."""
    if " " in text or "://" in text or text.startswith("/"):
        return None
    text = text.split("#", 1)[0].rstrip(",.;:")
    if text.startswith(LAYER_SHORT):
        return "layers/skillcore/" + text
    if text.startswith(ROOT_DIRS) or text in ROOT_FILES:
        return text
    return None


def path_exists(path: str) -> bool:
    placeholder = re.search(r"<[^>]*>|\{[^}]*\}|…|\.\.\.", path)
    if placeholder:  # `events/<name>.json`: the folder before the placeholder must exist
        head = path[: placeholder.start()]
        return (ROOT / head[: head.rfind("/") + 1]).is_dir()
    if "*" in path:
        return any(ROOT.glob(path.rstrip("/")))
    return (ROOT / path.rstrip("/")).exists()


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    kept = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line, fenced in lines_of(path):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading and not fenced:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_the_readme_is_short() -> None:
    count = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert count <= README_MAX_LINES, f"README.md has {count} lines, at most {README_MAX_LINES}: move sections to docs/"


def test_every_named_symbol_path_and_make_target_exists() -> None:
    targets = make_targets()
    bad: list[str] = []
    for doc in documents():
        for number, text in spans(doc):
            where = f"{rel(doc)}:{number}"
            dotted = DOTTED.match(text) if text not in NOT_SYMBOLS else None
            if dotted and not resolves(dotted.group(1)):
                bad.append(f"{where}: `{text}` does not resolve")
            for module in PYTHON_M.findall(text):
                if not resolves(module):
                    bad.append(f"{where}: `python -m {module}`: no such module")
            path = repo_path(text)
            if path is not None and not path_exists(path):
                bad.append(f"{where}: `{text}`: no such path")
        for number, line, fenced in lines_of(doc):
            scanned = [line] if fenced else [s.group(1) for s in SPAN.finditer(line)]
            for chunk in scanned:
                for target in MAKE.findall(chunk):
                    if target not in targets:
                        bad.append(f"{rel(doc)}:{number}: `make {target}`: no such Makefile target")
                if fenced:
                    for module in PYTHON_M.findall(chunk):
                        if not resolves(module):
                            bad.append(f"{rel(doc)}:{number}: `python -m {module}`: no such module")
    assert not bad, f"{len(bad)} reference(s) to nothing:\n" + "\n".join(bad)


def test_nothing_points_outside_the_repository() -> None:
    bad: list[str] = []
    for doc in documents():
        for number, line, fenced in lines_of(doc):
            where = f"{rel(doc)}:{number}"
            for pattern, what in OUTSIDE:
                if pattern.search(line):
                    bad.append(f"{where}: points to {what}: {line.strip()[:120]}")
            for up in [] if fenced else re.finditer(r"(?<!\.)(?:\.\./)+[^\s)`\"']*", line):
                bad.append(f"{where}: `{up.group(0)}` climbs out of its folder")
    assert not bad, f"{len(bad)} pointer(s) outside the repository:\n" + "\n".join(bad)


def test_every_relative_link_resolves() -> None:
    bad: list[str] = []
    for doc in documents():
        for number, line, fenced in lines_of(doc):
            if fenced:
                continue
            for link in LINK.finditer(line):
                target = link.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                path = (doc.parent / file_part).resolve() if file_part else doc
                where = f"{rel(doc)}:{number}: ({target})"
                if not path.is_relative_to(ROOT) or not path.exists():
                    bad.append(f"{where}: no such file")
                elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                    bad.append(f"{where}: no heading with that anchor in {rel(path)}")
    assert not bad, f"{len(bad)} broken link(s):\n" + "\n".join(bad)


def test_the_checks_catch_what_they_are_for() -> None:
    """The helpers themselves: a test of references that could not fail would prove nothing."""
    assert resolves("skillcore.errors.DomainError") and not resolves("skillcore.errors.NoSuchThing")
    assert not resolves("skillcore.no_such_module")
    assert repo_path("skillcore/errors.py") == "layers/skillcore/skillcore/errors.py"
    assert repo_path("functions/rpc/app.py") == "functions/rpc/app.py" and repo_path("db/") is None
    assert path_exists("layers/skillcore/skillcore/api/routes_*.py") and not path_exists("web/no_such_*.js")
    assert path_exists("events/<name>.json") and not path_exists("nowhere/<name>.json")
    assert "test" in make_targets() and "dev" in make_targets()
    assert MAKE.findall("TOKEN=$(make -s token USER=alice)") == ["token"]
    assert slug("The Skills page in AWS") == "the-skills-page-in-aws"
    assert slug("Adding a skill, a route, a table") == "adding-a-skill-a-route-a-table"
    flagged = [what for text in ("see ../shared/API.md section 3", "DESIGN.md flow 3", "the seeds", "(seed 004)")
               for pattern, what in OUTSIDE if pattern.search(text)]
    assert len(flagged) == 5, flagged  # the first names both the shared folder and API.md
    assert not any(p.search("a fixed seed, seed 20261203") for p, _ in OUTSIDE)
