"""The package archive: a zip of one skill folder, read defensively and written deterministically.

Reading never trusts the zip's own claims beyond what it must: every entry's name, type, sizes, method and
flags are checked against the limits (packages/limits.py) before a byte is inflated, inflating reads at most
the declared size plus one byte (a lying header cannot inflate more), and the CRC is checked. Anything wrong is
422 `package_invalid` with the path of the entry and the rule it broke:

- `not_a_zip`, `too_large`, `too_many_entries`, `too_many_files`, `file_too_large`, `total_too_large`,
  `ratio_too_high` (a zip bomb), `encrypted`, `compression` (only stored and deflated), `corrupt` (CRC, or a
  size that lies);
- `path_traversal` (`..`, an absolute path, a drive letter, a backslash), `path_invalid` (not UTF-8 printable
  characters of the allowed set, too long, too deep), `symlink` (or any entry that is not a file or a
  folder), `duplicate_name` (also when two names differ only in case or Unicode form), `one_folder` (every
  entry must sit in one top folder, the skill's).
"""

from __future__ import annotations

import io
import re
import stat
import struct
import unicodedata
import zipfile
import zlib

from skillcore.errors import PackageInvalid
from skillcore.packages import limits

# A path segment: letters, digits and . _ - (no leading dot: no hidden files, no `..`).
SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")
FIXED_TIME = (2026, 1, 1, 0, 0, 0)  # every entry's time when written: the same folder gives the same bytes


def _refuse(path: str, rule: str, message: str) -> PackageInvalid:
    return PackageInvalid(message, path=path, rule=rule)


def _check_name(raw: str, *, utf8: bool) -> list[str]:
    if not utf8 and any(ord(c) > 127 for c in raw):
        raise _refuse(_printable(raw), "path_invalid", "a file name must be UTF-8 (the zip's UTF-8 flag)")
    shown = _printable(raw)
    if "\\" in raw or raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
        raise _refuse(shown, "path_traversal", "a file name must be relative, with forward slashes")
    parts = raw.rstrip("/").split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise _refuse(shown, "path_traversal", "a file name must not contain empty, '.' or '..' segments")
    if len(raw) > limits.MAX_PATH_CHARS or len(parts) > limits.MAX_DEPTH + 2:
        raise _refuse(shown, "path_invalid", "a file name is too long or too deep")
    if not all(SEGMENT.match(p) for p in parts):
        raise _refuse(shown, "path_invalid", "a file name may hold only letters, digits and . _ - (no leading dot)")
    return parts


def _printable(raw: str) -> str:
    """A name as it may be quoted back in an error: ASCII letters, digits and / . _ - only, others as '?'."""
    return "".join(c if (c.isascii() and (c.isalnum() or c in "/._-")) else "?" for c in raw)[:limits.MAX_PATH_CHARS]


def _kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_IFMT(mode):  # unix, with a file type: the type bits are meaningful
        if stat.S_ISLNK(mode):
            return "symlink"
        if stat.S_ISDIR(mode):
            return "dir"
        if not stat.S_ISREG(mode):
            return "special"
    return "dir" if info.filename.endswith("/") else "file"


def read_zip(data: bytes) -> tuple[str, dict[str, bytes]]:
    """(the top folder's name, {path inside the folder: bytes}) of a package zip, or PackageInvalid."""
    if len(data) > limits.MAX_PACKAGE_BYTES:
        raise _refuse("", "too_large", f"a package is at most {limits.MAX_PACKAGE_BYTES} bytes")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, struct.error, ValueError, EOFError, OSError,
            NotImplementedError) as error:
        raise _refuse("", "not_a_zip", "the package is not a readable zip archive") from error
    if len(infos) > limits.MAX_ENTRIES:
        raise _refuse("", "too_many_entries", f"a package holds at most {limits.MAX_ENTRIES} entries")
    seen: set[str] = set()
    top: str | None = None
    files: list[tuple[zipfile.ZipInfo, str]] = []
    total = 0
    for info in infos:
        parts = _check_name(info.filename, utf8=bool(info.flag_bits & 0x800))
        shown = info.filename.rstrip("/")
        folded = unicodedata.normalize("NFKC", shown).casefold()
        if folded in seen:
            raise _refuse(_printable(shown), "duplicate_name", "two entries have the same name")
        seen.add(folded)
        kind = _kind(info)
        if kind in ("symlink", "special"):
            raise _refuse(_printable(shown), "symlink", "a package holds only files and folders (no links)")
        if top is None:
            top = parts[0]
        if parts[0] != top or (kind == "file" and len(parts) < 2):
            raise _refuse(_printable(shown), "one_folder", "every entry must be inside the skill's one folder")
        if kind == "dir":
            continue
        if info.flag_bits & 0x1:
            raise _refuse(_printable(shown), "encrypted", "encrypted entries are not accepted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _refuse(_printable(shown), "compression", "only stored and deflated entries are accepted")
        if info.file_size > limits.MAX_FILE_BYTES:
            raise _refuse(_printable(shown), "file_too_large", f"a file is at most {limits.MAX_FILE_BYTES} bytes")
        if info.file_size >= limits.RATIO_FLOOR_BYTES and info.file_size > limits.MAX_RATIO * max(info.compress_size, 1):
            raise _refuse(_printable(shown), "ratio_too_high", "a file compresses more than a package file may")
        total += info.file_size
        if total > limits.MAX_TOTAL_BYTES:
            raise _refuse(_printable(shown), "total_too_large",
                          f"the files of a package are at most {limits.MAX_TOTAL_BYTES} bytes in all")
        files.append((info, "/".join(parts[1:])))
    if top is None or not files:
        raise _refuse("", "empty", "the package holds no file")
    if len(files) > limits.MAX_FILES:
        raise _refuse("", "too_many_files", f"a package holds at most {limits.MAX_FILES} files")
    if total > limits.MAX_RATIO * max(len(data), 1) and total >= limits.RATIO_FLOOR_BYTES:
        raise _refuse("", "ratio_too_high", "the package compresses more than a package may")
    out: dict[str, bytes] = {}
    for info, path in files:
        out[path] = _inflate(archive, info, path)
    return top, out


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> bytes:
    try:
        with archive.open(info) as stream:
            body = stream.read(info.file_size + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, struct.error, zlib.error, ValueError, EOFError, OSError,
            NotImplementedError, RuntimeError) as error:
        raise _refuse(path, "corrupt", "a file of the package cannot be read (its checksum or size is wrong)") from error
    if len(body) != info.file_size:
        raise _refuse(path, "corrupt", "a file's size is not what the archive says")
    return body


def write_zip(folder: str, files: dict[str, bytes]) -> bytes:
    """The package zip of `files` ({path inside the folder: bytes}) under `folder`: sorted, deflated, every entry
    with the same time and mode, so the same folder always gives the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(f"{folder}/{path}", date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.flag_bits |= 0x800
            archive.writestr(info, files[path])
    return buffer.getvalue()
