"""Every address a name resolves to must be public.

`ipaddress.is_global` alone is not the check: on Python 3.12 it says nothing about the IPv4 address inside an
IPv6 form (`::ffff:127.0.0.1`, `64:ff9b::a9fe:a9fe`, `2002:7f00:1::`), and the named networks below give each
refusal a reason. So: unwrap first, then look the address up in the table (first match wins, metadata before
the network that contains it), and finally require `is_global` as well.

Unwrapped forms: IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96` (deprecated, but a stack may still route
it), NAT64 well-known prefix `64:ff9b::/96`, 6to4 `2002::/16` (the IPv4 address in bits 16-48) and Teredo
`2001::/32` (server and client address). Teredo itself lies in `2001::/23` and is refused as a whole (no MCP
server is reachable only through a Teredo tunnel); 6to4 is accepted when the address it carries is. The local-use NAT64 prefix `64:ff9b:1::/48` puts the
IPv4 address wherever its operator chose, so it is refused as a whole (private use). Outside `2000::/3`, no
IPv6 address is global unicast: all of it is refused.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from skillcore.egress.errors import Refused

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance metadata and other per-host service addresses (AWS IMDS, ECS task metadata, Route 53 resolver
# and time sync, IPv6 IMDS; Alibaba Cloud; Oracle Cloud's older one).
METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "169.254.170.23", "169.254.169.253", "169.254.169.123",
    "100.100.100.200", "192.0.0.192",
    "fd00:ec2::254", "fd00:ec2::253", "fd00:ec2::123", "fd00:ec2::23",
))

_V4 = [
    ("0.0.0.0/32", "address_unspecified"),
    ("0.0.0.0/8", "address_reserved"),  # "this network"
    ("10.0.0.0/8", "address_private"),
    ("100.64.0.0/10", "address_shared"),  # carrier-grade NAT
    ("127.0.0.0/8", "address_loopback"),
    ("169.254.0.0/16", "address_link_local"),
    ("172.16.0.0/12", "address_private"),
    ("192.0.0.0/24", "address_reserved"),  # IETF protocol assignments
    ("192.0.2.0/24", "address_documentation"),
    ("192.88.99.0/24", "address_reserved"),  # 6to4 relay anycast (deprecated)
    ("192.168.0.0/16", "address_private"),
    ("198.18.0.0/15", "address_benchmarking"),
    ("198.51.100.0/24", "address_documentation"),
    ("203.0.113.0/24", "address_documentation"),
    ("224.0.0.0/4", "address_multicast"),
    ("240.0.0.0/4", "address_reserved"),  # includes 255.255.255.255
]
_V6 = [
    ("::/128", "address_unspecified"),
    ("::1/128", "address_loopback"),
    ("64:ff9b:1::/48", "address_private"),  # local-use NAT64
    ("100::/64", "address_reserved"),  # discard-only
    ("2001:2::/48", "address_benchmarking"),
    ("2001::/23", "address_reserved"),  # IETF protocol assignments (Teredo is unwrapped before)
    ("2001:db8::/32", "address_documentation"),
    ("3fff::/20", "address_documentation"),
    ("5f00::/16", "address_reserved"),  # SRv6 SIDs
    ("fc00::/7", "address_private"),  # unique local
    ("fe80::/10", "address_link_local"),
    ("fec0::/10", "address_private"),  # site-local (deprecated)
    ("ff00::/8", "address_multicast"),
]
V4_NETWORKS = [(ipaddress.IPv4Network(n), reason) for n, reason in _V4]
V6_NETWORKS = [(ipaddress.IPv6Network(n), reason) for n, reason in _V6]
GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
TEREDO = ipaddress.IPv6Network("2001::/32")

# Never accepted, not even through the local-only allow list: the host's own loopback address (the local stack
# and whatever else runs there), "any", and the metadata services.
NEVER_ALLOWED = frozenset({ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"),
                           ipaddress.ip_address("0.0.0.0"), ipaddress.ip_address("::")}) | METADATA


def parse(text: str) -> IPAddress:
    """An address as getaddrinfo gives it (an IPv6 scope `%eth0` is dropped: the address decides)."""
    return ipaddress.ip_address(text.split("%", 1)[0])


def unwrap(address: IPAddress) -> list[IPAddress]:
    """The addresses a packet to `address` may really reach: itself, and the IPv4 address(es) it carries."""
    if isinstance(address, ipaddress.IPv4Address):
        return [address]
    found: list[IPAddress] = [address]
    value = int(address)
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    elif address in NAT64 or (address in IPV4_COMPATIBLE and value > 1):
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    elif address.sixtofour is not None:
        found.append(address.sixtofour)
    elif address in TEREDO and address.teredo is not None:
        found.extend(address.teredo)
    return found


def _reason_one(address: IPAddress) -> str | None:
    """Why this single (already unwrapped) address is refused, or None when it is public."""
    if address in METADATA:
        return "address_metadata"
    if isinstance(address, ipaddress.IPv4Address):
        for network4, reason in V4_NETWORKS:
            if address in network4:
                return reason
    else:
        for network6, reason in V6_NETWORKS:
            if address in network6:
                return reason
        if address in NAT64 or address in IPV4_COMPATIBLE or address.ipv4_mapped is not None:
            return None  # only a carrier: its IPv4 address decides (unwrap() gave it to the caller)
        if address not in GLOBAL_UNICAST:
            return "address_reserved"
        if address.sixtofour is not None:
            return None  # a carrier too
    if not address.is_global:
        return "address_not_global"
    return None


def refusal_reason(address: IPAddress) -> str | None:
    """Why `address` (or an address it wraps) is not public; None when it may be connected to."""
    forms = unwrap(address)
    for form in forms:
        reason = _reason_one(form)
        if reason is not None:
            return reason
    return None


def check(addresses: Iterable[str], allowed: frozenset[IPAddress] = frozenset()) -> tuple[IPAddress, ...]:
    """Every address must pass (one bad answer refuses the name: which one a connection would pick is not
    ours to guess). `allowed` is the local-only exception list (settings); NEVER_ALLOWED stays refused."""
    checked: list[IPAddress] = []
    for text in addresses:
        try:
            address = parse(text)
        except ValueError:
            raise Refused("unresolvable", "the name resolved to something that is not an address") from None
        if address in checked:
            continue
        reason = refusal_reason(address)
        if reason is not None and not (address in allowed and not never_allowed(address)):
            raise Refused(reason)
        checked.append(address)
    if not checked:
        raise Refused("unresolvable")
    return tuple(checked)


def never_allowed(address: IPAddress) -> bool:
    return any(form in NEVER_ALLOWED for form in unwrap(address))
