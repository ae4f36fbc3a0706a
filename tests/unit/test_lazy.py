"""skillcore/lazy.py: a module imported by its first attribute read, and a value built by its first attribute read,
once, even when two threads read it first at the same moment (the local stack serves requests from threads)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillcore import lazy


@pytest.fixture
def module_on_path(tmp_path: Path) -> Iterator[str]:
    name = "lazy_probe_module"
    (tmp_path / f"{name}.py").write_text("import time\nLOADED_AT = time.monotonic()\nVALUE = 42\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        yield name
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def test_a_lazy_module_is_imported_by_its_first_attribute_read(module_on_path: str) -> None:
    stand_in = lazy.module(module_on_path)
    assert module_on_path not in sys.modules
    assert "not imported yet" in repr(stand_in)
    assert stand_in.VALUE == 42
    assert module_on_path in sys.modules
    assert stand_in.LOADED_AT == sys.modules[module_on_path].LOADED_AT
    assert "imported" in repr(stand_in) and "not" not in repr(stand_in)


def test_a_misspelt_name_fails_as_on_the_module_itself(module_on_path: str) -> None:
    with pytest.raises(AttributeError):
        lazy.module(module_on_path).VALEU  # noqa: B018


def test_a_module_that_does_not_exist_fails_on_first_use_not_before() -> None:
    stand_in = lazy.module("skillcore.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        stand_in.anything  # noqa: B018


def test_a_lazy_value_is_built_once_by_the_first_read_even_when_two_threads_read_first() -> None:
    built: list[int] = []
    start = threading.Barrier(8)

    class Deps:
        db = "the client"

    def build() -> Deps:
        built.append(threading.get_ident())
        time.sleep(0.05)  # a slow build: every other thread arrives while it runs
        return Deps()

    value = lazy.value(build)
    assert built == []
    seen: list[str] = []

    def read() -> None:
        start.wait()
        seen.append(value.db)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1
    assert seen == ["the client"] * 8


def test_a_lazy_value_whose_build_fails_fails_each_read_until_one_succeeds() -> None:
    attempts: list[int] = []

    class Deps:
        ready = True

    def build() -> Deps:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("the first build failed")
        return Deps()

    value = lazy.value(build)
    with pytest.raises(RuntimeError):
        value.ready  # noqa: B018
    assert value.ready is True
    assert value.ready is True
    assert len(attempts) == 2
