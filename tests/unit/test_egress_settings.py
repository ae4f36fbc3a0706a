"""EgressSettings.from_env: the allow-list everywhere, the local-only settings only with SKILLS_LOCAL=1."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from skillcore.egress.client import default_resolver
from skillcore.egress.resolver import FixedNames, system_resolver
from skillcore.egress.settings import EgressSettings

LOCAL = {
    "SKILLS_HOSTED_ALLOWED_DOMAINS": "mcp.test",
    "SKILLS_LOCAL_HOSTED_RESOLVE": "api.mcp.test=127.0.0.2, API.mcp.test=::ffff:127.0.0.2,other.mcp.test=8.8.8.8",
    "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES": "127.0.0.2",
}


def test_outside_the_local_stack_the_local_settings_are_ignored(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("x")
    settings = EgressSettings.from_env({**LOCAL, "SKILLS_LOCAL_HOSTED_CA_BUNDLE": str(bundle),
                                        "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES": "127.0.0.1"})
    assert settings == EgressSettings(allowed_domains=("mcp.test",))
    assert default_resolver(settings) is system_resolver


def test_in_the_local_stack_they_are_read(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("x")
    settings = EgressSettings.from_env({**LOCAL, "SKILLS_LOCAL": "1", "SKILLS_LOCAL_HOSTED_CA_BUNDLE": str(bundle)})
    assert settings.allowed_domains == ("mcp.test",)
    assert settings.local_resolve == {"api.mcp.test": ("127.0.0.2", "::ffff:7f00:2"), "other.mcp.test": ("8.8.8.8",)}
    assert settings.local_allow_addresses == frozenset({ipaddress.ip_address("127.0.0.2")})
    assert settings.local_ca_bundle == str(bundle)
    resolver = default_resolver(settings)
    assert isinstance(resolver, FixedNames) and resolver.fallback is system_resolver


def test_nothing_set_is_nothing_allowed() -> None:
    assert EgressSettings.from_env({}) == EgressSettings()
    assert EgressSettings.from_env({"SKILLS_LOCAL": "1"}) == EgressSettings()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES", "127.0.0.2,127.0.0.1", "127.0.0.1 is never allowed"),
        ("SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES", "::ffff:127.0.0.1", "is never allowed"),
        ("SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES", "169.254.169.254", "is never allowed"),
        ("SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES", "0.0.0.0", "is never allowed"),
        ("SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES", "localhost", "'localhost' is not an IP address"),
        ("SKILLS_LOCAL_HOSTED_RESOLVE", "api.mcp.test", "is not name=address"),
        ("SKILLS_LOCAL_HOSTED_RESOLVE", "api.mcp.test=here", "'here' is not an IP address"),
        ("SKILLS_LOCAL_HOSTED_CA_BUNDLE", "/nonexistent/ca.pem", "is not a file"),
        ("SKILLS_HOSTED_ALLOWED_DOMAINS", "*.mcp.test", "is not an ASCII domain name"),
    ],
)
def test_a_bad_value_fails_naming_the_variable(variable: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=variable) as error:
        EgressSettings.from_env({**LOCAL, "SKILLS_LOCAL": "1", variable: value})
    assert message in str(error.value)


def test_the_call_deadline_is_lowered_only_in_the_local_stack() -> None:
    assert EgressSettings.from_env({"SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS": "2"}).deadline_seconds == 30.0
    assert EgressSettings.from_env({"SKILLS_LOCAL": "1"}).deadline_seconds == 30.0
    local = EgressSettings.from_env({"SKILLS_LOCAL": "1", "SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS": "2.5"})
    assert local.deadline_seconds == 2.5
    for bad in ("0", "-1", "31", "soon"):
        with pytest.raises(ValueError, match="SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS"):
            EgressSettings.from_env({"SKILLS_LOCAL": "1", "SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS": bad})
