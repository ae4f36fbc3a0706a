"""Egress settings, read once at the edge (the function that calls hosted endpoints) and passed down.

- `SKILLS_HOSTED_ALLOWED_DOMAINS`: the operator's allow-list (comma-separated domains), in AWS and locally.
- Local-only (docs/contract.md "The local stack"), honoured only when `local` is true, i.e. `SKILLS_LOCAL=1`, which only the
  local stack (skillcore_local/invoke.py) and the tests set and the template never does; outside that they are
  ignored, whatever their value (tests/harness/unit/test_template.py checks the template sets none of them):
  - `SKILLS_LOCAL_HOSTED_RESOLVE`: `name=address,...` answered instead of DNS (a name may repeat for several
    addresses); the answers are still checked;
  - `SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES`: `address,...` permitted although internal (for a test server on
    `127.0.0.2`). `127.0.0.1`, `::1`, the unspecified and the metadata addresses, in any IPv6 wrapping, are
    refused here: a cold start with one of them fails, naming the variable (and the address check would
    refuse them anyway);
  - `SKILLS_LOCAL_HOSTED_CA_BUNDLE`: a PEM file trusted in addition to the system's certificates;
  - `SKILLS_LOCAL_HOSTED_CONNECT_PORT`: the port connected to, instead of 443, on the addresses of
    `SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES` only (a test server run by a normal user cannot bind 443). The URL
    policy is unchanged (a URL still says port 443), and every other address is still connected to on 443;
  - `SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS`: the deadline of a proxied call (default and maximum 30), so a test
    of a slow endpoint does not wait 30 s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from msgspec import Struct

from skillcore.egress import addresses
from skillcore.egress.addresses import IPAddress
from skillcore.egress.url_policy import parse_allowed_domains

LOCAL_VARIABLES = ("SKILLS_LOCAL_HOSTED_RESOLVE", "SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES", "SKILLS_LOCAL_HOSTED_CA_BUNDLE",
                   "SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS", "SKILLS_LOCAL_HOSTED_CONNECT_PORT")
DEADLINE_SECONDS = 30.0  # egress/transport.py's, repeated here so that reading the settings imports no httpx2


class EgressSettings(Struct, frozen=True, kw_only=True):
    allowed_domains: tuple[str, ...] = ()
    local_resolve: dict[str, tuple[str, ...]] = {}
    local_allow_addresses: frozenset[IPAddress] = frozenset()
    local_ca_bundle: str | None = None
    deadline_seconds: float = DEADLINE_SECONDS  # of a proxied call; lowered only under SKILLS_LOCAL=1
    local_connect_port: int | None = None  # for the local_allow_addresses only; None = 443

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> EgressSettings:
        env = os.environ if env is None else env
        allowed = parse_allowed_domains(env.get("SKILLS_HOSTED_ALLOWED_DOMAINS", ""))
        if env.get("SKILLS_LOCAL", "") != "1":
            return cls(allowed_domains=allowed)
        ca_bundle = env.get("SKILLS_LOCAL_HOSTED_CA_BUNDLE") or None
        if ca_bundle is not None and not os.path.isfile(ca_bundle):
            raise ValueError(f"SKILLS_LOCAL_HOSTED_CA_BUNDLE: {ca_bundle!r} is not a file")
        return cls(
            allowed_domains=allowed,
            local_resolve=_resolve_table(env.get("SKILLS_LOCAL_HOSTED_RESOLVE", "")),
            local_allow_addresses=_allow_addresses(env.get("SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES", "")),
            local_ca_bundle=ca_bundle,
            deadline_seconds=_deadline(env.get("SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS", "")),
            local_connect_port=_connect_port(env.get("SKILLS_LOCAL_HOSTED_CONNECT_PORT", "")),
        )

    def connect_ports(self) -> dict[IPAddress, int]:
        """Address -> the port connected to instead of the URL's 443 (the local allow-list's, when set)."""
        if self.local_connect_port is None:
            return {}
        return dict.fromkeys(self.local_allow_addresses, self.local_connect_port)


def _resolve_table(raw: str) -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        name, sep, address = item.partition("=")
        name = name.strip().lower().rstrip(".")
        if not sep or not name:
            raise ValueError(f"SKILLS_LOCAL_HOSTED_RESOLVE: {item!r} is not name=address")
        try:
            parsed = addresses.parse(address.strip())
        except ValueError:
            raise ValueError(f"SKILLS_LOCAL_HOSTED_RESOLVE: {address.strip()!r} is not an IP address") from None
        table.setdefault(name, []).append(str(parsed))
    return {name: tuple(values) for name, values in table.items()}


def _allow_addresses(raw: str) -> frozenset[IPAddress]:
    allowed = set()
    for item in filter(None, (part.strip() for part in raw.split(","))):
        try:
            address = addresses.parse(item)
        except ValueError:
            raise ValueError(f"SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES: {item!r} is not an IP address") from None
        if addresses.never_allowed(address):
            raise ValueError(f"SKILLS_LOCAL_HOSTED_ALLOW_ADDRESSES: {item} is never allowed")
        allowed.add(address)
    return frozenset(allowed)


def _deadline(raw: str) -> float:
    if not raw.strip():
        return DEADLINE_SECONDS
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS: {raw!r} is not a number") from None
    if not 0 < value <= DEADLINE_SECONDS:
        raise ValueError(f"SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS: {raw!r} is not in (0, {DEADLINE_SECONDS:g}]")
    return value


def _connect_port(raw: str) -> int | None:
    if not raw.strip():
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"SKILLS_LOCAL_HOSTED_CONNECT_PORT: {raw!r} is not a port number") from None
    if not 0 < value < 65536:
        raise ValueError(f"SKILLS_LOCAL_HOSTED_CONNECT_PORT: {raw!r} is not in 1..65535")
    return value
