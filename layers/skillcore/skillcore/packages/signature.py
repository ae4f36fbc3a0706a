"""Ed25519 detached signatures over a package's canonical digest (packages/digest.py).

The signature file (`FILE.zip.sig`, what `skillcore_pack sign` writes and a submission carries) is JSON:

    {"format": "skillcore-signature/1", "keyId": "<32 hex>", "digest": "<64 hex>", "signature": "<base64, 64 bytes>"}

The signed message is `skillcore-signature/1\n` followed by the digest's hex, so a signature over a package can
never pass for one over anything else. `keyId` is the first 32 hex digits of the SHA-256 of the raw 32-byte
public key. Public keys travel as PEM (SubjectPublicKeyInfo, `-----BEGIN PUBLIC KEY-----`): read here without a
crypto library (an Ed25519 SPKI is a fixed 12-byte prefix and the key). The `cryptography` library is imported
only inside `verify`, never by a function's cold start.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any

from msgspec import Struct

from skillcore.errors import SignatureInvalid
from skillcore.packages import limits

FORMAT = "skillcore-signature/1"
MESSAGE_PREFIX = b"skillcore-signature/1\n"
SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
PEM = re.compile(r"^-----BEGIN PUBLIC KEY-----\s+([A-Za-z0-9+/=\s]+?)\s*-----END PUBLIC KEY-----\s*$")
KEY_ID = re.compile(r"^[0-9a-f]{32}$")
PEM_MAX = 400


class Signature(Struct, frozen=True):
    key_id: str
    digest: str
    signature: bytes


def message(digest: str) -> bytes:
    return MESSAGE_PREFIX + digest.encode("ascii")


def raw_public_key(pem: str) -> bytes:
    """The 32 bytes of an Ed25519 public key in PEM, or ValueError."""
    found = PEM.match(pem.strip()) if len(pem) <= PEM_MAX else None
    if found is None:
        raise ValueError("not a PEM public key")
    try:
        der = base64.b64decode("".join(found.group(1).split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not a PEM public key") from None
    if len(der) != len(SPKI_PREFIX) + 32 or not der.startswith(SPKI_PREFIX):
        raise ValueError("not an Ed25519 public key")
    return der[len(SPKI_PREFIX):]


def pem_of(raw: bytes) -> str:
    body = base64.b64encode(SPKI_PREFIX + raw).decode("ascii")
    return f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n"


def key_id(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:32]


def encode(signature: Signature) -> str:
    return json.dumps({"format": FORMAT, "keyId": signature.key_id, "digest": signature.digest,
                       "signature": base64.b64encode(signature.signature).decode("ascii")}, indent=2) + "\n"


def decode(text: str | bytes | None) -> Signature:
    """A signature file's content, or SignatureInvalid (`missing`, `malformed`)."""
    if text is None or (isinstance(text, str | bytes) and not text.strip()):
        raise SignatureInvalid("the package is not signed", reason="missing")
    if len(text) > limits.MAX_SIGNATURE_BYTES:
        raise SignatureInvalid("the signature file is too large", reason="malformed")
    try:
        raw: Any = json.loads(text)
        if not isinstance(raw, dict) or set(raw) != {"format", "keyId", "digest", "signature"}:
            raise ValueError("fields")
        if raw["format"] != FORMAT or not isinstance(raw["keyId"], str) or not KEY_ID.match(raw["keyId"]):
            raise ValueError("format")
        if not isinstance(raw["digest"], str) or not re.match(r"^[0-9a-f]{64}$", raw["digest"]):
            raise ValueError("digest")
        signed = base64.b64decode(raw["signature"], validate=True) if isinstance(raw["signature"], str) else b""
        if len(signed) != 64:
            raise ValueError("length")
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError):
        raise SignatureInvalid("the signature file is not a skillcore signature", reason="malformed") from None
    return Signature(key_id=raw["keyId"], digest=raw["digest"], signature=signed)


def verify(signature: Signature, digest: str, public_key: bytes) -> None:
    """SignatureInvalid unless `signature` is `public_key`'s over this package's `digest`."""
    if signature.digest != digest:
        raise SignatureInvalid("the signature was made over another package (it was changed after signing)",
                               reason="digest_mismatch")
    if key_id(public_key) != signature.key_id:
        raise SignatureInvalid("the package was signed with another key", reason="other_key")
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature.signature, message(digest))
    except InvalidSignature:
        raise SignatureInvalid("the signature does not verify with the publisher's key",
                               reason="bad_signature") from None
