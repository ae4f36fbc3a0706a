"""scripts/prereqs.py's decisions, with the machine's lookups injected: what counts as missing, one line each
with its install command, and the exit status."""

from __future__ import annotations

from collections.abc import Mapping

from scripts.prereqs import Lookups, java_major, main, missing

JAVA_17 = 'openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6)\n'
JAVA_8 = 'openjdk version "1.8.0_392"\nOpenJDK Runtime Environment (build 1.8.0_392-b08)\n'
FONTS = "Noto Sans CJK SC,Noto Sans CJK SC Regular\nNoto Serif CJK SC\n"


def machine(
    on_path: set[str] | None = None,
    java: str = JAVA_17,
    fonts: str | None = FONTS,
    env: Mapping[str, str] | None = None,
) -> Lookups:
    present = {"java", "node", "npm", "chromium", "fc-list"} if on_path is None else on_path

    def run(command: list[str]) -> str | None:
        if command[0].endswith("java"):
            return java
        if command[0] == "fc-list":
            return fonts
        raise AssertionError(f"unexpected command {command}")

    return Lookups(which=lambda name: f"/usr/bin/{name}" if name in present else None, run=run, env=env or {})


def test_a_complete_machine_prints_nothing_and_passes() -> None:
    printed: list[str] = []
    assert missing(machine()) == []
    assert main(machine(), out=printed.append) == 0 and printed == []


def test_each_missing_prerequisite_is_one_line_with_its_install_command() -> None:
    printed: list[str] = []
    assert main(machine(on_path=set(), fonts=None), out=printed.append) == 1
    assert len(printed) == 4, printed
    java, node, chromium, fonts = printed
    assert "java" in java and "apt-get install" in java and "openjdk-17-jre-headless" in java
    assert "npm" in node and "apt-get install" in node and "nodejs npm" in node
    assert "chromium" in chromium and "apt-get install" in chromium and chromium.endswith(" chromium")
    assert "CJK" in fonts and fonts.endswith("fonts-noto-cjk")
    assert all("\n" not in line for line in printed)


def test_only_what_is_missing_is_named() -> None:
    assert [line.split(":")[1] for line in missing(machine(on_path={"java", "node", "npm", "fc-list"}))] == [
        " chromium (the browser tests drive it; or set SKILLS_CHROMIUM to a Chromium binary)"
    ]
    (fonts,) = missing(machine(fonts="DejaVu Sans\nNoto Serif CJK SC\n"))
    assert "fonts-noto-cjk" in fonts
    (node,) = missing(machine(on_path={"java", "node", "chromium", "fc-list"}))
    assert "npm" in node


def test_chromium_may_be_named_by_its_other_name_or_the_setting() -> None:
    assert missing(machine(on_path={"java", "node", "npm", "chromium-browser", "fc-list"})) == []
    assert missing(machine(on_path={"java", "node", "npm", "fc-list"}, env={"SKILLS_CHROMIUM": "/opt/c/chrome"})) == []


def test_an_old_java_is_named_with_its_version() -> None:
    (line,) = missing(machine(java=JAVA_8))
    assert "java 8" in line and "17" in line and "openjdk-17-jre-headless" in line
    # An unreadable version is not a reason to stop: DynamoDB Local says so itself if it cannot run.
    assert missing(machine(java="")) == []


def test_java_major_reads_both_version_schemes() -> None:
    assert java_major(JAVA_17) == 17
    assert java_major(JAVA_8) == 8
    assert java_major('java version "21" 2023-09-19 LTS') == 21
    assert java_major("no java here") is None
