"""The canonical digest of a package, what a signature signs: independent of the zip's order, times, modes and
compression, so only the files' paths and bytes count. SHA-256 over

    skillcore-package/1\n  then, for every file sorted by its path inside the folder:  <path>\n<size>\n<sha256 hex>\n

(`path` is UTF-8 with forward slashes; a path holds no newline: packages/archive.py allows none)."""

from __future__ import annotations

import hashlib

DOMAIN = b"skillcore-package/1\n"


def package_digest(files: dict[str, bytes]) -> str:
    h = hashlib.sha256(DOMAIN)
    for path in sorted(files):
        body = files[path]
        h.update(f"{path}\n{len(body)}\n{hashlib.sha256(body).hexdigest()}\n".encode())
    return h.hexdigest()


def checksum(data: bytes) -> str:
    """The SHA-256 of the package's bytes as stored (the catalog checks it on every read)."""
    return hashlib.sha256(data).hexdigest()
