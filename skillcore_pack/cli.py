"""The publisher's tool (docs/packages.md "The publisher's tool"):

    keygen --out DIR               DIR/publisher.key (private, PKCS#8 PEM, mode 600) and DIR/publisher.pub (PEM)
    init DIR --name NAME           a package folder at DIR: SKILL.md, skillcore.json, evals/basic.json to fill in
    (the zip's one folder is named after SKILL.md's `name`, whatever DIR is called)
    build DIR --out FILE.zip       the package zip of a folder (checked as the server checks it)
    sign FILE.zip --key KEY        FILE.zip.sig: an Ed25519 signature over the package's canonical digest
    verify FILE.zip --pub PUB      exit 0 only for a valid package with a valid signature by that key

Every failure exits non-zero with one line on stderr naming what is wrong (the error code, the path and the
rule of a package that does not fit the format).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from skillcore.errors import DomainError, PackageInvalid, SignatureInvalid
from skillcore.packages import archive, limits, signature
from skillcore.packages.convert import compatible_range
from skillcore.packages.package import Package, from_files, open_package
from skillcore.packages.skill_md import NAME, SkillMd, render

EXIT_INVALID = 1  # the package, or its signature, is not valid
EXIT_USAGE = 2  # what was asked cannot be done (a missing file, a folder that exists)


class Failure(Exception):
    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


def _describe(error: DomainError) -> str:
    details = dict(error.details)
    where = f" at {details['path']!r} ({details['rule']})" if "path" in details else ""
    reason = f" ({details['reason']})" if "reason" in details else ""
    return f"{error.code}{where}{reason}: {error.message}"


def keygen(out: Path) -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    out.mkdir(parents=True, exist_ok=True)
    private, public = out / "publisher.key", out / "publisher.pub"
    if private.exists() or public.exists():
        raise Failure(f"{out} already holds a key pair: refusing to overwrite it")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    public.write_text(signature.pem_of(raw), encoding="ascii")
    return f"wrote {private} and {public} (key id {signature.key_id(raw)})"


def init(folder: Path, name: str) -> str:
    if not NAME.match(name) or len(name) > 64:
        raise Failure("NAME is 1..64 lowercase letters, digits and single hyphens (the Agent Skills name)")
    if folder.exists() and any(folder.iterdir()):
        raise Failure(f"{folder} exists and is not empty")
    capability = name.replace("-", "_")
    if not capability[:1].isalpha() or len(capability) < 3:
        capability = f"skill_{capability}"[:40]
    skill = SkillMd(name=name, description=f"What {name} does and when to use it (fill in).",
                    license="Proprietary", metadata={"author": "fill in"},
                    body=f"\n# {name}\n\nThe protocol of this skill is skillcore.json's `protocol`: the server renders it.\n")
    manifest = {
        "schemaVersion": 1, "skillId": name, "version": "0.1.0", "publisher": "your-publisher-id",
        "compatibility": {"skillcore": compatible_range()},
        "permissions": [],
        "protocol": {
            "name": capability[:40], "displayName": name, "whenToUse": [name],
            "workflow": {"objective": "What the user wants done (fill in).",
                         "steps": [{"kind": "platformCapability", "capabilityId": "daily-plan",
                                    "instruction": "Plan the day with the user (fill in)."}],
                         "completionCriteria": "When it is done (fill in)."},
            "platformCapabilityIds": ["daily-plan"], "toolBindings": [],
        },
        "remotes": [], "tools": [],
    }
    evals = {"cases": [{"id": "first-trigger", "input": name, "replyContains": [f"[skills: {name}]"]}]}
    (folder / "evals").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(render(skill), encoding="utf-8")
    (folder / "skillcore.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (folder / "evals" / "basic.json").write_text(json.dumps(evals, ensure_ascii=False, indent=2) + "\n",
                                                 encoding="utf-8")
    return f"wrote {folder}: fill in SKILL.md and skillcore.json (set \"publisher\" to your publisher id)"


def read_folder(folder: Path) -> dict[str, bytes]:
    """The files of a package folder, refusing what a package may not hold (links, hidden files, too much)."""
    if not folder.is_dir():
        raise Failure(f"{folder} is not a folder")
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            raise PackageInvalid("a package holds no links", path=rel, rule="symlink")
        if path.is_dir():
            continue
        if len(files) >= limits.MAX_FILES:
            raise PackageInvalid(f"a package holds at most {limits.MAX_FILES} files", path="", rule="too_many_files")
        size = path.stat().st_size
        if size > limits.MAX_FILE_BYTES:
            raise PackageInvalid(f"a file is at most {limits.MAX_FILE_BYTES} bytes", path=rel, rule="file_too_large")
        total += size
        if total > limits.MAX_TOTAL_BYTES:
            raise PackageInvalid("the files are too large in all", path=rel, rule="total_too_large")
        files[rel] = path.read_bytes()
    return files


def _declared_name(files: dict[str, bytes], fallback: str) -> str:
    """SKILL.md's `name` (the zip's folder is named after it, whatever the folder on disk is called)."""
    text = files.get("SKILL.md", b"").decode("utf-8", errors="replace")
    found = re.search(r"^name:[ ]*['\"]?([a-z0-9-]{1,64})['\"]?[ ]*$", text, re.MULTILINE)
    return found.group(1) if found else fallback


def build(folder: Path, out: Path) -> str:
    folder = folder.resolve()
    files = read_folder(folder)
    package = from_files(_declared_name(files, folder.name), files)
    data = archive.write_zip(package.folder, files)
    open_package(data)  # what the server will read: the zip's own limits (size, ratio) too
    out.write_bytes(data)
    return f"wrote {out} ({len(data)} bytes, digest {package.digest})"


def _load_zip(path: Path) -> tuple[bytes, Package]:
    if not path.is_file():
        raise Failure(f"{path} is not a file")
    data = path.read_bytes()
    return data, open_package(data)


def sign(zip_path: Path, key_path: Path) -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    _, package = _load_zip(zip_path)
    if not key_path.is_file():
        raise Failure(f"{key_path} is not a file")
    try:
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (ValueError, TypeError) as error:
        raise Failure(f"{key_path} is not an unencrypted PEM private key") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise Failure(f"{key_path} is not an Ed25519 key")
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    signed = signature.Signature(key_id=signature.key_id(raw), digest=package.digest,
                                 signature=key.sign(signature.message(package.digest)))
    out = zip_path.with_name(zip_path.name + ".sig")
    out.write_text(signature.encode(signed), encoding="ascii")
    return f"wrote {out} (key id {signed.key_id})"


def verify(zip_path: Path, pub_path: Path) -> str:
    _, package = _load_zip(zip_path)
    if not pub_path.is_file():
        raise Failure(f"{pub_path} is not a file")
    try:
        raw = signature.raw_public_key(pub_path.read_text(encoding="ascii", errors="replace"))
    except ValueError as error:
        raise Failure(f"{pub_path} is not an Ed25519 public key in PEM") from error
    sig_path = zip_path.with_name(zip_path.name + ".sig")
    text = sig_path.read_text(encoding="utf-8", errors="replace") if sig_path.is_file() else None
    signed = signature.decode(text)
    signature.verify(signed, package.digest, raw)
    if package.manifest.publisher is None:
        raise PackageInvalid("a release names its publisher", path="skillcore.json#/publisher", rule="required")
    return f"ok: {package.manifest.skill_id} {package.manifest.version} by {package.manifest.publisher}, key {signed.key_id}"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m skillcore_pack", description="skillcore's publisher's tool")
    commands = top.add_subparsers(dest="command", required=True)
    p = commands.add_parser("keygen", help="make a publisher key pair")
    p.add_argument("--out", required=True, type=Path)
    p = commands.add_parser("init", help="make a package folder to fill in")
    p.add_argument("dir", type=Path)
    p.add_argument("--name", required=True)
    p = commands.add_parser("build", help="zip a package folder")
    p.add_argument("dir", type=Path)
    p.add_argument("--out", required=True, type=Path)
    p = commands.add_parser("sign", help="sign a package zip (writes FILE.zip.sig)")
    p.add_argument("zip", type=Path)
    p.add_argument("--key", required=True, type=Path)
    p = commands.add_parser("verify", help="check a signed package zip")
    p.add_argument("zip", type=Path)
    p.add_argument("--pub", required=True, type=Path)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "keygen":
            message = keygen(args.out)
        elif args.command == "init":
            message = init(args.dir, args.name)
        elif args.command == "build":
            message = build(args.dir, args.out)
        elif args.command == "sign":
            message = sign(args.zip, args.key)
        else:
            message = verify(args.zip, args.pub)
    except (PackageInvalid, SignatureInvalid, DomainError) as error:
        print(f"error: {_describe(error)}", file=sys.stderr)
        return EXIT_INVALID
    except Failure as failure:
        print(f"error: {failure}", file=sys.stderr)
        return failure.status
    except OSError as error:
        print(f"error: {error.strerror or 'cannot read or write'}: {error.filename}", file=sys.stderr)
        return EXIT_USAGE
    print(message)
    return 0
