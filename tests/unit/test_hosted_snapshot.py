"""The snapshot rules (hosted/snapshot.py) and the sealed secrets (hosted/secrets.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from skillcore.errors import RuleViolation
from skillcore.hosted import secrets, snapshot
from skillcore.hosted.models import EndpointSecret

NOW = datetime(2026, 12, 3, tzinfo=UTC)


def tool(name: str = "echo", schema: Any = None, description: str = "Echo") -> dict[str, Any]:
    return {"name": name, "description": description,
            "inputSchema": schema if schema is not None else {"type": "object", "properties": {"text": {"type": "string"}}}}


def rule(raw: list[dict[str, Any]]) -> str:
    with pytest.raises(RuleViolation) as refused:
        snapshot.take(raw, NOW)
    assert refused.value.code == "snapshot_invalid"
    return str(refused.value.details["rule"])


def test_a_valid_list_is_pinned_in_name_order_with_a_stable_fingerprint() -> None:
    first = snapshot.take([tool("b"), tool("a")], NOW)
    second = snapshot.take([tool("a"), tool("b")], NOW)
    assert [t.name for t in first.tools] == ["a", "b"]
    assert first.fingerprint == second.fingerprint and len(first.fingerprint) == 64
    assert all(t.enabled and t.requires_approval for t in first.tools)
    assert snapshot.take([tool("a", description="changed"), tool("b")], NOW).fingerprint != first.fingerprint


@pytest.mark.parametrize(("raw", "expected"), [
    ([tool(f"t{i}") for i in range(65)], "too_many_tools"),
    ([tool("a"), tool("a")], "duplicate_tool"),
    ([tool("bad name")], "tool_name"),
    ([tool(description="x" * 5000)], "description"),
    ([tool(schema={"type": "string"})], "input_schema_not_object"),
    ([tool(schema={"type": "object", "properties": {"x": {"$ref": "https://evil.test/s.json"}}})], "remote_ref"),
    ([tool(schema={"type": "object", "$id": "https://evil.test/root"})], "remote_ref"),
    ([tool(schema={"type": "object", "properties": {"x": {"type": "string", "pattern": "(a+)+$"}}})], "regex_keyword"),
    ([tool(schema={"type": "object", "patternProperties": {"^a": {}}})], "regex_keyword"),
    ([tool(schema={"type": "object", "anyOf": [{"properties": {"x": {"pattern": "a"}}}]})], "regex_keyword"),
    ([tool(schema={"type": "object", "properties": {"x": {"type": 5}}})], "schema_invalid"),
    ([tool(f"t{i}", description="d" * 4096) for i in range(64)], "too_large"),
])
def test_refusals_name_their_rule(raw: list[dict[str, Any]], expected: str) -> None:
    assert rule(raw) == expected


def test_a_property_named_pattern_and_a_local_ref_are_fine() -> None:
    schema = {"type": "object", "properties": {"pattern": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"type": "string"}}}
    assert snapshot.take([tool(schema=schema)], NOW).tools[0].input_schema == schema


def test_sealed_secrets_open_only_in_their_own_context(tmp_path: Path) -> None:
    keys = secrets.LocalKeyFile(tmp_path / "k" / secrets.LOCAL_KEY_FILE)
    context = secrets.context_of("alice", "ep1")
    sealed = secrets.seal(keys, EndpointSecret(url="https://api.mcp.test/app-KEY123/mcp", token="tok"), context)
    assert "KEY123" not in sealed and "tok" not in sealed and sealed.startswith("v1.")
    opened = secrets.open_sealed(keys, sealed, context)
    assert (opened.url, opened.token) == ("https://api.mcp.test/app-KEY123/mcp", "tok")
    assert "KEY123" not in repr(opened)
    with pytest.raises(Exception):  # noqa: B017  (cryptography's InvalidTag)
        secrets.open_sealed(keys, sealed, secrets.context_of("mallory", "ep1"))
    assert (tmp_path / "k" / secrets.LOCAL_KEY_FILE).stat().st_mode & 0o077 == 0
    # a second seal of the same secret differs (fresh data key and nonces)
    assert secrets.seal(keys, EndpointSecret(url="https://x.test/", token=None), context) != \
        secrets.seal(keys, EndpointSecret(url="https://x.test/", token=None), context)


def test_the_kms_port_binds_the_context(tmp_path: Path) -> None:
    from skillcore.hosted.aws_kms import KmsKeys

    calls: list[tuple[str, dict[str, Any]]] = []

    class FakeKms:
        def generate_data_key(self, **kwargs: Any) -> dict[str, Any]:
            calls.append(("generate", kwargs))
            return {"Plaintext": b"k" * 32, "CiphertextBlob": b"wrapped"}

        def decrypt(self, **kwargs: Any) -> dict[str, Any]:
            calls.append(("decrypt", kwargs))
            return {"Plaintext": b"k" * 32}

    keys = KmsKeys("key-1", "us-east-1", client=FakeKms())
    context = secrets.context_of("alice", "ep1")
    sealed = secrets.seal(keys, EndpointSecret(url="https://a.test/x", token=None), context)
    assert secrets.open_sealed(keys, sealed, context).url == "https://a.test/x"
    assert [(kind, kw["KeyId"], kw["EncryptionContext"]) for kind, kw in calls] == [
        ("generate", "key-1", context), ("decrypt", "key-1", context)]
    assert json.dumps(calls[0][1]["KeySpec"]) == '"AES_256"'


def test_outside_the_local_stack_a_key_id_is_required() -> None:
    with pytest.raises(ValueError, match="SKILLS_HOSTED_KEY_ID"):
        secrets.keys_from_env({}, local=False, region="us-east-1")
    assert isinstance(secrets.keys_from_env({"SKILLS_LOCAL_DATA_DIR": "/tmp/x"}, local=True, region="r"),
                      secrets.LocalKeyFile)


def test_unwrapped_data_keys_are_cached_bounded_in_count_and_age(tmp_path: Path) -> None:
    inner = secrets.LocalKeyFile(tmp_path / secrets.LOCAL_KEY_FILE)
    opened: list[bytes] = []

    class Counting:
        def generate_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
            return inner.generate_data_key(context)

        def decrypt_data_key(self, wrapped: bytes, context: dict[str, str]) -> bytes:
            opened.append(wrapped)
            return inner.decrypt_data_key(wrapped, context)

    now = [0.0]
    keys = secrets.CachedKeys(Counting(), max_entries=2, max_age_s=300, clock=lambda: now[0])
    alice, bob = secrets.context_of("alice", "ep1"), secrets.context_of("bob", "ep1")
    sealed = {name: secrets.seal(keys, EndpointSecret(url=f"https://{name}.test/", token=None), ctx)
              for name, ctx in (("alice", alice), ("bob", bob))}
    for _ in range(3):
        assert secrets.open_sealed(keys, sealed["alice"], alice).url == "https://alice.test/"
    assert len(opened) == 1  # one unwrap for three opens
    # the cache keys on the context too: another context never gets alice's data key from it
    with pytest.raises(Exception):  # noqa: B017  (cryptography's InvalidTag, from the inner unwrap)
        secrets.open_sealed(keys, sealed["alice"], bob)
    assert len(opened) == 2
    now[0] = 299.0
    secrets.open_sealed(keys, sealed["alice"], alice)
    assert len(opened) == 2
    now[0] = 301.0  # older than max_age_s: unwrapped again
    secrets.open_sealed(keys, sealed["alice"], alice)
    assert len(opened) == 3
    # at most max_entries: bob's and a third one push alice's out
    secrets.open_sealed(keys, sealed["bob"], bob)
    carol = secrets.context_of("carol", "ep1")
    secrets.open_sealed(keys, secrets.seal(keys, EndpointSecret(url="https://c.test/", token=None), carol), carol)
    secrets.open_sealed(keys, sealed["alice"], alice)
    assert len(opened) == 6


def test_in_aws_the_kms_keys_are_behind_the_cache() -> None:
    keys = secrets.keys_from_env({"SKILLS_HOSTED_KEY_ID": "key-1"}, local=False, region="us-east-1")
    assert isinstance(keys, secrets.CachedKeys)
