"""Where package bytes live: the port, and the local adapter (a directory). In AWS the bytes are in S3
(packages/s3_blobs.py, the S3 adapter: boto3's world stays there). Every read is checked against the checksum the
catalog holds, so a changed object is never served."""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from pathlib import Path
from typing import Protocol

from skillcore.errors import PackageInvalid

BLOB_KEY = re.compile(r"^packages/[a-z0-9-]{1,64}/[0-9A-Za-z.+-]{1,64}/[0-9a-f]{64}(\.zip|\.[a-z0-9-]{3,40}\.cwasm)$")


class PackageBlobs(Protocol):
    def put(self, blob_key: str, data: bytes, checksum: str) -> None: ...

    def get(self, blob_key: str) -> bytes | None: ...


def blob_key(skill_id: str, version: str, checksum: str) -> str:
    found = f"packages/{skill_id}/{version}/{checksum}.zip"
    if not BLOB_KEY.match(found):
        raise ValueError("not a package blob key")
    return found


def artifact_key(package_key: str, tool: str) -> str:
    """Where a code tool's precompiled module lives: beside its package's bytes (written by the service only)."""
    found = package_key.removesuffix(".zip") + f".{tool}.cwasm"
    if not BLOB_KEY.match(found) or not package_key.endswith(".zip"):
        raise ValueError("not a package blob key")
    return found


def read_checked(blobs: PackageBlobs, key: str, checksum: str) -> bytes:
    """The stored bytes, if they are still what was published (else PackageInvalid, rule `checksum`)."""
    data = blobs.get(key)
    if data is None or hashlib.sha256(data).hexdigest() != checksum:
        raise PackageInvalid("the stored package does not match its checksum", path="", rule="checksum")
    return data


class DirectoryBlobs:
    """The local adapter: one file a package under `root` (`SKILLS_LOCAL_PACKAGE_DIR`), written atomically."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, blob_key: str) -> Path:
        if not BLOB_KEY.match(blob_key):
            raise ValueError("not a package blob key")
        return self.root / blob_key

    def put(self, blob_key: str, data: bytes, checksum: str) -> None:
        if hashlib.sha256(data).hexdigest() != checksum:
            raise ValueError("checksum mismatch")
        path = self._path(blob_key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # A name of this write's own: two requests storing the same package at once never share a partial file.
        partial = path.with_suffix(f".{uuid.uuid4().hex}.partial")
        partial.write_bytes(data)
        os.replace(partial, path)

    def get(self, blob_key: str) -> bytes | None:
        path = self._path(blob_key)
        return path.read_bytes() if path.is_file() else None
