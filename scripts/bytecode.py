"""`python -m scripts.bytecode [BUILD_DIR]` (run by `make build` after `sam build`): compile the built
functions and layer to bytecode, then check that every module has it.

Lambda cannot write `__pycache__` under /var/task or /opt, so without shipped .pyc files every cold start
compiles every module it imports from source. The files are unchecked-hash pycs: the interpreter uses them
without comparing them to the source's timestamp (which a deployment package need not preserve). They must
come from the runtime's Python version (3.12); the bytecode itself does not depend on the architecture.
"""

from __future__ import annotations

import compileall
import importlib.util
import py_compile
import sys
from pathlib import Path

RUNTIME = (3, 12)
UNCHECKED_HASH = 0b01  # pyc flags (PEP 552): hash-based, do not check the source


def compile_tree(build_dir: Path) -> bool:
    return compileall.compile_dir(
        build_dir, quiet=1, workers=0, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )


def missing_bytecode(build_dir: Path) -> list[Path]:
    """Sources without an unchecked-hash pyc of this interpreter next to them."""
    missing = []
    for source in build_dir.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        header = cached.read_bytes()[:8] if cached.exists() else b""
        if header[:4] != importlib.util.MAGIC_NUMBER or int.from_bytes(header[4:8], "little") != UNCHECKED_HASH:
            missing.append(source)
    return missing


def main(argv: list[str]) -> int:
    build_dir = Path(argv[1] if len(argv) > 1 else ".aws-sam/build")
    if sys.version_info[:2] != RUNTIME:
        print(f"bytecode: needs Python {RUNTIME[0]}.{RUNTIME[1]} (the Lambda runtime), not {sys.version.split()[0]}")
        return 2
    if not build_dir.is_dir():
        print(f"bytecode: {build_dir} does not exist; run sam build first")
        return 2
    compiled = compile_tree(build_dir)
    missing = missing_bytecode(build_dir)
    sources = sum(1 for _ in build_dir.rglob("*.py"))
    print(f"bytecode: {sources - len(missing)} of {sources} modules under {build_dir} have unchecked-hash pycs")
    for source in missing[:20]:
        print(f"  missing: {source}")
    return 0 if compiled and not missing else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
