"""Envelope encryption of an endpoint's URL and token.

A fresh 256-bit data key per seal encrypts the secret with AES-GCM (`cryptography`); the data key itself is
wrapped by a `KeyPort` and stored beside the ciphertext. Both layers are bound to the owner and the endpoint
(AES-GCM associated data here, the KMS encryption context there), so a sealed value copied to another item
does not open.

- `KmsKeys` (hosted/aws_kms.py, boto3 stays in db/): GenerateDataKey / Decrypt with the template's key; only
  HostedFunction's role may use it.
- `CachedKeys`: in AWS, around `KmsKeys`, keeps unwrapped data keys for 5 minutes (at most 256), so a warm
  function opens an endpoint's secret without a KMS request on every call.
- `LocalKeyFile`: the local stack's master key, 32 random bytes in a file under `SKILLS_LOCAL_DATA_DIR`
  (created 0600 on first use), wrapping data keys with AES-GCM.

Sealed form (a string): `v1.<wrapped key>.<nonce>.<ciphertext>`, each part URL-safe base64.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from skillcore.hosted.models import EndpointSecret

VERSION = "v1"


class KeyPort(Protocol):
    def generate_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        """(plaintext 32-byte data key, its wrapped form)."""
        ...

    def decrypt_data_key(self, wrapped: bytes, context: dict[str, str]) -> bytes: ...


def _aad(context: dict[str, str]) -> bytes:
    return json.dumps(context, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class LocalKeyFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: bytes | None = None

    def _master(self) -> bytes:
        if self._key is None:
            if not self.path.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as out:
                    out.write(os.urandom(32))
            key = self.path.read_bytes()
            if len(key) != 32:
                raise ValueError(f"{self.path} is not a 32-byte key")
            self._key = key
        return self._key

    def generate_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        data_key = AESGCM.generate_key(bit_length=256)
        nonce = os.urandom(12)
        return data_key, nonce + AESGCM(self._master()).encrypt(nonce, data_key, _aad(context))

    def decrypt_data_key(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        return AESGCM(self._master()).decrypt(wrapped[:12], wrapped[12:], _aad(context))


class CachedKeys:
    """A KeyPort whose unwrapped data keys are kept in memory for a while, as the AWS Encryption SDK's
    caching materials manager does: in AWS every call of a hosted tool opens its endpoint's sealed secret,
    and without this each one would be a KMS Decrypt (a network round trip and a billed request).

    An entry is the plaintext data key under its wrapped form and its encryption context, so it opens only
    what KMS itself would open with that pair. Bounded: at most `max_entries` (least recently used out
    first) and `max_age_s` seconds; a key is wrapped anew for every seal, never cached."""

    def __init__(self, inner: KeyPort, *, max_entries: int = 256, max_age_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._inner = inner
        self._max_entries = max_entries
        self._max_age_s = max_age_s
        self._clock = clock
        self._entries: OrderedDict[tuple[bytes, bytes], tuple[float, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def generate_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        return self._inner.generate_data_key(context)

    def decrypt_data_key(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        key = (wrapped, _aad(context))
        now = self._clock()
        with self._lock:
            found = self._entries.get(key)
            if found is not None and now - found[0] < self._max_age_s:
                self._entries.move_to_end(key)
                return found[1]
        data_key = self._inner.decrypt_data_key(wrapped, context)
        with self._lock:
            self._entries[key] = (now, data_key)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return data_key


def context_of(user_id: str, endpoint_id: str) -> dict[str, str]:
    return {"userId": user_id, "endpointId": endpoint_id}


def seal(keys: KeyPort, secret: EndpointSecret, context: dict[str, str]) -> str:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    data_key, wrapped = keys.generate_data_key(context)
    nonce = os.urandom(12)
    plaintext = json.dumps({"url": secret.url, "token": secret.token}).encode("utf-8")
    ciphertext = AESGCM(data_key).encrypt(nonce, plaintext, _aad(context))
    return ".".join((VERSION, _b64(wrapped), _b64(nonce), _b64(ciphertext)))


def open_sealed(keys: KeyPort, sealed: str, context: dict[str, str]) -> EndpointSecret:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    version, wrapped, nonce, ciphertext = sealed.split(".")
    if version != VERSION:
        raise ValueError("unknown sealed secret version")
    data_key = keys.decrypt_data_key(_unb64(wrapped), context)
    data = json.loads(AESGCM(data_key).decrypt(_unb64(nonce), _unb64(ciphertext), _aad(context)))
    return EndpointSecret(url=data["url"], token=data["token"])


LOCAL_KEY_FILE = "hosted-secrets.key"


def keys_from_env(env: dict[str, str] | os._Environ[str], *, local: bool, region: str) -> KeyPort:
    """`SKILLS_HOSTED_KEY_ID` (the template's key) in AWS; under SKILLS_LOCAL=1 without it, the local key file
    under `SKILLS_LOCAL_DATA_DIR` (default `.local`). Anything else fails the cold start."""
    key_id = env.get("SKILLS_HOSTED_KEY_ID") or ""
    if key_id:
        from skillcore.hosted.aws_kms import KmsKeys

        return CachedKeys(KmsKeys(key_id, region))
    if local:
        return LocalKeyFile(Path(env.get("SKILLS_LOCAL_DATA_DIR") or ".local") / LOCAL_KEY_FILE)
    raise ValueError("SKILLS_HOSTED_KEY_ID must name the KMS key of hosted endpoint secrets")
