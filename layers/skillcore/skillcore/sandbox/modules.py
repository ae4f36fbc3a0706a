"""Compiled modules: compiled once per process, keyed by the digest of the module's bytes, and precompiled
(serialized) for a published package so that a cold start does not compile.

    digest = module_digest(wasm)                 # sha256 hex of the .wasm bytes
    artifact = precompile(wasm)                  # at publish time (the package catalog stores it beside the .wasm)
    module = load(wasm, precompiled=artifact)    # at call time: the cache, else the artifact, else a compile

A precompiled artifact is native code: `Module.deserialize` trusts it as it trusts the process's own code. Only
artifacts this project produced (`precompile`, at publish time, from the reviewed module) and kept in storage
that only the service writes (the catalog) may be loaded; never bytes a package author supplied. The artifact
carries a header with the module's digest and the engine configuration's fingerprint; `load` uses it only when
both match, and otherwise compiles the module itself (wasmtime refuses an artifact made by another wasmtime
version or configuration as well, and then the module is compiled too). A module that does not validate is `SandboxTrap` with reason `invalid_module`.
"""

from __future__ import annotations

import atexit
import hashlib
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from skillcore.errors import SandboxDetails, SandboxTrap
from skillcore.sandbox.engine import WASM_STACK_BYTES, engine

if TYPE_CHECKING:
    from wasmtime import Module

CACHE_SIZE: Final = 64  # compiled modules kept per process (least recently used dropped first)
MAX_MODULE_BYTES: Final = 4 << 20
MAGIC: Final = b"SKCWASM1"

_cache: OrderedDict[str, Module] = OrderedDict()
_lock = threading.Lock()


def module_digest(wasm: bytes) -> str:
    return hashlib.sha256(wasm).hexdigest()


def engine_fingerprint() -> bytes:
    """This engine's configuration, as an artifact's header records it. The wasmtime version is checked by
    `Module.deserialize` itself (an artifact of another version fails, and the module is compiled instead);
    reading the version from the package metadata would cost a cold start ~80 ms."""
    return hashlib.sha256(f"stack={WASM_STACK_BYTES};fuel;epoch;no-threads".encode()).digest()[:16]


def _compile(wasm: bytes) -> Module:
    from wasmtime import Module, WasmtimeError

    if len(wasm) > MAX_MODULE_BYTES:
        raise SandboxTrap("the module is too large", SandboxDetails(reason="module_too_large", limit=MAX_MODULE_BYTES))
    if not wasm.startswith(b"\0asm"):  # wasmtime would also take the text format: a module is binary only
        raise SandboxTrap("not a WebAssembly module", SandboxDetails(reason="invalid_module"))
    try:
        return Module(engine(), wasm)
    except WasmtimeError:
        raise SandboxTrap("the module does not validate", SandboxDetails(reason="invalid_module")) from None


def precompile(wasm: bytes) -> bytes:
    """The artifact a published package carries for its module (the publish step's hook): header + wasmtime's
    serialized module. Raises SandboxTrap for a module that does not validate."""
    module = _compile(wasm)
    return MAGIC + bytes.fromhex(module_digest(wasm)) + engine_fingerprint() + bytes(module.serialize())


def _deserialize(digest: str, artifact: bytes) -> Module | None:
    from wasmtime import Module, WasmtimeError

    header = len(MAGIC) + 32 + 16
    if (len(artifact) <= header or artifact[: len(MAGIC)] != MAGIC
            or artifact[len(MAGIC): len(MAGIC) + 32] != bytes.fromhex(digest)
            or artifact[len(MAGIC) + 32: header] != engine_fingerprint()):
        return None
    try:
        return Module.deserialize(engine(), artifact[header:])
    except WasmtimeError:
        return None


def load(wasm: bytes, *, precompiled: bytes | None = None, digest: str | None = None) -> Module:
    """The compiled module for these bytes: from the process's cache, else from its artifact, else compiled."""
    key = digest or module_digest(wasm)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    module = _deserialize(key, precompiled) if precompiled else None
    if module is None:
        module = _compile(wasm)
    with _lock:
        _cache[key] = module
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return module


def cached(digest: str) -> bool:
    with _lock:
        return digest in _cache


def clear_cache() -> None:
    with _lock:
        _cache.clear()


atexit.register(clear_cache)  # modules dropped before wasmtime's library is unloaded at exit
