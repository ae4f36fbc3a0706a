"""SKILLS_LOCAL_HOSTED_CONNECT_PORT (local only, `make demo`): the port the egress connects to on the locally
allowed addresses instead of 443, so a test server needs no root. The URL policy is unchanged (a URL with another
port is still refused), other addresses are still connected to on 443, and outside the local stack it is ignored."""

from __future__ import annotations

import ipaddress
from typing import Any

import anyio
import pytest

from skillcore.egress.errors import Refused
from skillcore.egress.settings import EgressSettings
from skillcore.egress.transport import PinnedBackend
from skillcore.egress.url_policy import check_url

LOCAL = {
    "SKILLS_LOCAL": "1",
    "SKILLS_HOSTED_ALLOWED_DOMAINS": "mcp.test",
    "SKILLS_LOCAL_HOSTED_RESOLVE": "api.mcp.test=127.0.0.2",
    "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES": "127.0.0.2",
    "SKILLS_LOCAL_HOSTED_CONNECT_PORT": "8443",
}
ALLOWED = ipaddress.ip_address("127.0.0.2")
PUBLIC = ipaddress.ip_address("203.0.113.7")


def test_it_maps_the_allowed_addresses_only() -> None:
    settings = EgressSettings.from_env(LOCAL)
    assert settings.local_connect_port == 8443
    assert settings.connect_ports() == {ALLOWED: 8443}
    assert EgressSettings.from_env({**LOCAL, "SKILLS_LOCAL_HOSTED_CONNECT_PORT": ""}).connect_ports() == {}


def test_outside_the_local_stack_it_is_ignored() -> None:
    settings = EgressSettings.from_env({**LOCAL, "SKILLS_LOCAL": ""})
    assert settings.local_connect_port is None and settings.connect_ports() == {}


@pytest.mark.parametrize("raw", ["http", "0", "65536", "-1", "44 3"])
def test_a_bad_value_fails_naming_the_variable(raw: str) -> None:
    with pytest.raises(ValueError, match="SKILLS_LOCAL_HOSTED_CONNECT_PORT"):
        EgressSettings.from_env({**LOCAL, "SKILLS_LOCAL_HOSTED_CONNECT_PORT": raw})


def test_the_url_must_still_say_443() -> None:
    with pytest.raises(Refused) as refused:
        check_url("https://api.mcp.test:8443/mcp", ("mcp.test",))
    assert refused.value.reason == "port_not_443"
    assert check_url("https://api.mcp.test/mcp", ("mcp.test",)).port == 443


class Recording:
    """Stands in for the network backend: records where it was asked to connect."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, **_: Any) -> object:
        self.asked.append((host, port))
        return object()


def _connect(backend: PinnedBackend) -> list[tuple[str, int]]:
    recording = Recording()
    backend._inner = recording  # type: ignore[assignment]
    anyio.run(backend.connect_tcp, "api.mcp.test", 443)
    return recording.asked


def test_the_backend_connects_the_allowed_address_to_its_port_and_others_to_443() -> None:
    ports = EgressSettings.from_env(LOCAL).connect_ports()
    assert _connect(PinnedBackend("api.mcp.test", 443, [ALLOWED], ports)) == [("127.0.0.2", 8443)]
    assert _connect(PinnedBackend("api.mcp.test", 443, [PUBLIC], ports)) == [("203.0.113.7", 443)]
    assert _connect(PinnedBackend("api.mcp.test", 443, [ALLOWED])) == [("127.0.0.2", 443)]


def test_the_backend_still_refuses_another_port_or_host() -> None:
    backend = PinnedBackend("api.mcp.test", 443, [ALLOWED], {ALLOWED: 8443})
    for host, port in (("api.mcp.test", 8443), ("other.mcp.test", 443)):
        with pytest.raises(Refused):
            anyio.run(backend.connect_tcp, host, port)
