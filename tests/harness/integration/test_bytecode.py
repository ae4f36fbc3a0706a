"""scripts.bytecode: the built tree gets unchecked-hash pycs, and a tree without them is reported. compile_tree
compiles with a process per core (compileall's workers), so this file is not in the pure lane."""

from __future__ import annotations

import py_compile
import sys
from pathlib import Path

from scripts import bytecode


def tree(root: Path) -> list[Path]:
    (root / "pkg").mkdir()
    files = [root / "app.py", root / "pkg" / "__init__.py", root / "pkg" / "mod.py"]
    for f in files:
        f.write_text("VALUE = 1\n", encoding="utf-8")
    return files


def test_compiling_leaves_no_module_without_bytecode(tmp_path: Path) -> None:
    files = tree(tmp_path)
    assert sorted(bytecode.missing_bytecode(tmp_path)) == sorted(files)
    assert bytecode.compile_tree(tmp_path)
    assert bytecode.missing_bytecode(tmp_path) == []


def test_timestamp_pycs_do_not_count(tmp_path: Path) -> None:
    app, *_ = tree(tmp_path)
    py_compile.compile(str(app), invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    assert app in bytecode.missing_bytecode(tmp_path)


def test_main_refuses_another_python_or_a_missing_build(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(bytecode, "RUNTIME", sys.version_info[:2])
    assert bytecode.main(["bytecode", str(tmp_path / "nowhere")]) == 2
    assert "does not exist; run sam build first" in capsys.readouterr().out
    monkeypatch.setattr(bytecode, "RUNTIME", (2, 7))
    assert bytecode.main(["bytecode", str(tmp_path)]) == 2
    assert "needs Python 2.7" in capsys.readouterr().out
