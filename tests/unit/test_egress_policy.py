"""The egress URL policy and address check as one table: each row is a URL and what the fake DNS answers for
its host, and either the addresses that would be connected to or the refusal's `reason` (docs/contract.md: 422
`url_not_allowed` with `details.reason`)."""

from __future__ import annotations

import asyncio
import ipaddress

import pytest

from skillcore.egress import addresses
from skillcore.egress.client import check_destination
from skillcore.egress.errors import REASONS, Refused, UpstreamTimeout
from skillcore.egress.settings import EgressSettings
from skillcore.egress.url_policy import check_url, parse_allowed_domains

ALLOWED = ("example.com", "dify.example.org", "mcp.test")
SETTINGS = EgressSettings(allowed_domains=ALLOWED)
PUBLIC = "93.184.216.34"
PUBLIC6 = "2606:2800:220:1:248:1893:25c8:1946"


class FakeResolver:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.asked.append(host)
        if host not in self.table:
            raise Refused("unresolvable")
        return self.table[host]


def dns(*answers: str) -> dict[str, list[str]]:
    return {"api.example.com": list(answers)}


def run(url: object, table: dict[str, list[str]], settings: EgressSettings = SETTINGS) -> list[str]:
    target = asyncio.run(check_destination(url, settings, resolver=FakeResolver(table)))
    assert target.destination.port == 443
    return [str(a) for a in target.addresses]


OK = dns(PUBLIC)
ACCEPTED = [
    ("https://api.example.com/mcp", OK, [PUBLIC]),
    ("https://example.com/", {"example.com": [PUBLIC]}, [PUBLIC]),
    ("https://api.example.com:443/mcp", OK, [PUBLIC]),
    ("HTTPS://API.Example.COM/mcp", OK, [PUBLIC]),
    ("https://api.example.com", OK, [PUBLIC]),
    ("https://a.b.c.dify.example.org/mcp/server/AbC123/mcp", {"a.b.c.dify.example.org": [PUBLIC]}, [PUBLIC]),
    ("https://api.example.com/p%2Fq/@me", OK, [PUBLIC]),
    ("https://api.example.com/mcp", dns(PUBLIC, PUBLIC6), [PUBLIC, PUBLIC6]),
    ("https://api.example.com/mcp", dns(PUBLIC, PUBLIC), [PUBLIC]),
    ("https://api.example.com/mcp", dns("::ffff:8.8.8.8"), ["::ffff:808:808"]),
    ("https://api.example.com/mcp", dns("64:ff9b::808:808"), ["64:ff9b::808:808"]),
    ("https://api.example.com/mcp", dns("2002:808:808::1"), ["2002:808:808::1"]),
    ("https://api.example.com/mcp", dns("1.1.1.1"), ["1.1.1.1"]),
    ("https://x-1.mcp.test/mcp", {"x-1.mcp.test": [PUBLIC]}, [PUBLIC]),
]

REFUSED = [
    # The URL itself (nothing is resolved).
    (None, OK, "not_a_string"),
    ("https://api.example.com/" + "a" * 2030, OK, "too_long"),
    ("https://api.exämple.com/", OK, "not_ascii"),
    ("https://bücher.example.com/", OK, "not_ascii"),
    ("https://api.example.com/a b", OK, "invalid_characters"),
    (" https://api.example.com/", OK, "invalid_characters"),
    ("https://api.example.com/\t", OK, "invalid_characters"),
    ("https://api.example.com\\@evil.com/", OK, "invalid_characters"),
    ("https:\\\\api.example.com/", OK, "invalid_characters"),
    ("http://api.example.com/mcp", OK, "scheme_not_https"),
    ("ftp://api.example.com/", OK, "scheme_not_https"),
    ("wss://api.example.com/", OK, "scheme_not_https"),
    ("//api.example.com/mcp", OK, "malformed"),
    ("https:api.example.com", OK, "malformed"),
    ("https:/api.example.com", OK, "malformed"),
    ("https://user:pass@api.example.com/", OK, "userinfo"),
    ("https://@api.example.com/", OK, "userinfo"),
    ("https://api.example.com:443@evil.com/", OK, "userinfo"),
    ("https://api.example.com/mcp?key=1", OK, "query"),
    ("https://api.example.com/mcp?", OK, "query"),
    ("https://api.example.com/mcp#frag", OK, "fragment"),
    ("https://api.example.com/mcp#", OK, "fragment"),
    ("https://api.example.com:8443/mcp", OK, "port_not_443"),
    ("https://api.example.com:80/mcp", OK, "port_not_443"),
    ("https:///mcp", OK, "no_host"),
    ("https://xn--bcher-kva.example.com/", OK, "idn_host"),
    ("https://93.184.216.34/mcp", OK, "ip_literal"),
    ("https://[2606:2800:220:1:248:1893:25c8:1946]/", OK, "ip_literal"),
    ("https://[::1]/", OK, "ip_literal"),
    ("https://127.1/", OK, "ip_literal"),
    ("https://2130706433/", OK, "ip_literal"),
    ("https://0x7f.1/", OK, "ip_literal"),
    ("https://api.example.com./mcp", OK, "host_syntax"),
    ("https://a_b.example.com/", OK, "host_syntax"),
    ("https://-a.example.com/", OK, "host_syntax"),
    ("https://%61pi.example.com/", OK, "host_syntax"),
    ("https://" + "a" * 64 + ".example.com/", OK, "host_syntax"),
    ("https://badexample.com/", OK, "domain_not_allowed"),
    ("https://example.com.evil.net/", OK, "domain_not_allowed"),
    ("https://evil.net/example.com", OK, "domain_not_allowed"),
    ("https://example.org/", OK, "domain_not_allowed"),
    ("https://com/", OK, "domain_not_allowed"),
    # The addresses (every one of them).
    ("https://unknown.example.com/", OK, "unresolvable"),
    ("https://api.example.com/", dns(), "unresolvable"),
    ("https://api.example.com/", dns("not-an-address"), "unresolvable"),
    ("https://api.example.com/", dns("127.0.0.1"), "address_loopback"),
    ("https://api.example.com/", dns("127.0.0.2"), "address_loopback"),
    ("https://api.example.com/", dns(PUBLIC, "10.0.0.5"), "address_private"),
    ("https://api.example.com/", dns("172.16.0.1"), "address_private"),
    ("https://api.example.com/", dns("192.168.1.1"), "address_private"),
    ("https://api.example.com/", dns("169.254.169.254"), "address_metadata"),
    ("https://api.example.com/", dns("169.254.170.2"), "address_metadata"),
    ("https://api.example.com/", dns("fd00:ec2::254"), "address_metadata"),
    ("https://api.example.com/", dns("100.100.100.200"), "address_metadata"),
    ("https://api.example.com/", dns("169.254.1.1"), "address_link_local"),
    ("https://api.example.com/", dns("fe80::1%eth0"), "address_link_local"),
    ("https://api.example.com/", dns("100.64.0.1"), "address_shared"),
    ("https://api.example.com/", dns("224.0.0.251"), "address_multicast"),
    ("https://api.example.com/", dns("ff02::1"), "address_multicast"),
    ("https://api.example.com/", dns("240.0.0.1"), "address_reserved"),
    ("https://api.example.com/", dns("255.255.255.255"), "address_reserved"),
    ("https://api.example.com/", dns("0.0.0.0"), "address_unspecified"),
    ("https://api.example.com/", dns("::"), "address_unspecified"),
    ("https://api.example.com/", dns("0.1.2.3"), "address_reserved"),
    ("https://api.example.com/", dns("198.18.0.1"), "address_benchmarking"),
    ("https://api.example.com/", dns("2001:2::1"), "address_benchmarking"),
    ("https://api.example.com/", dns("192.0.2.1"), "address_documentation"),
    ("https://api.example.com/", dns("2001:db8::1"), "address_documentation"),
    ("https://api.example.com/", dns("::1"), "address_loopback"),
    ("https://api.example.com/", dns(PUBLIC6, "fc00::1"), "address_private"),
    ("https://api.example.com/", dns("fec0::1"), "address_private"),
    ("https://api.example.com/", dns("::ffff:127.0.0.1"), "address_loopback"),
    ("https://api.example.com/", dns("::ffff:169.254.169.254"), "address_metadata"),
    ("https://api.example.com/", dns("::127.0.0.1"), "address_loopback"),
    ("https://api.example.com/", dns("::10.0.0.1"), "address_private"),
    ("https://api.example.com/", dns("64:ff9b::7f00:1"), "address_loopback"),
    ("https://api.example.com/", dns("64:ff9b::a9fe:a9fe"), "address_metadata"),
    ("https://api.example.com/", dns("64:ff9b:1::808:808"), "address_private"),
    ("https://api.example.com/", dns("2002:a9fe:a9fe::1"), "address_metadata"),
    ("https://api.example.com/", dns("2002:c0a8:101::1"), "address_private"),
    ("https://api.example.com/", dns("2001:0:4136:e378:8000:63bf:3fff:fdd2"), "address_reserved"),
    ("https://api.example.com/", dns("100::1"), "address_reserved"),
    ("https://api.example.com/", dns("5f00::1"), "address_reserved"),
    ("https://api.example.com/", dns("4000::1"), "address_reserved"),
]


@pytest.mark.parametrize(("url", "table", "expected"), ACCEPTED)
def test_accepted(url: str, table: dict[str, list[str]], expected: list[str]) -> None:
    assert run(url, table) == expected


@pytest.mark.parametrize(("url", "table", "reason"), REFUSED)
def test_refused(url: object, table: dict[str, list[str]], reason: str) -> None:
    with pytest.raises(Refused) as refused:
        run(url, table)
    assert refused.value.reason == reason
    assert "example.com" not in str(refused.value)  # the message never repeats the URL (a secret)


def test_the_table_is_large_and_covers_every_policy_and_address_reason() -> None:
    assert len(ACCEPTED) + len(REFUSED) >= 40
    covered = {reason for _, _, reason in REFUSED}
    assert covered >= set(REASONS) - {"address_not_global", "other_destination"}
    assert covered <= set(REASONS)


def test_the_url_is_refused_before_anything_is_resolved() -> None:
    resolver = FakeResolver(OK)
    with pytest.raises(Refused):
        asyncio.run(check_destination("https://api.example.com/?x", SETTINGS, resolver=resolver))
    assert resolver.asked == []
    asyncio.run(check_destination("https://api.example.com/", SETTINGS, resolver=resolver))
    assert resolver.asked == ["api.example.com"]  # once


def test_an_empty_allow_list_allows_nothing() -> None:
    with pytest.raises(Refused) as refused:
        run("https://api.example.com/", OK, EgressSettings())
    assert refused.value.reason == "domain_not_allowed"


def test_a_slow_resolver_counts_against_the_deadline() -> None:
    from skillcore.egress.transport import Deadline

    async def slow(host: str) -> list[str]:
        await asyncio.sleep(5)
        return [PUBLIC]

    with pytest.raises(UpstreamTimeout):
        asyncio.run(check_destination("https://api.example.com/", SETTINGS, resolver=slow, deadline=Deadline(0.05)))


def test_the_destination_is_the_parsers_normal_form() -> None:
    destination = check_url("HTTPS://API.example.com:443/mcp/", ALLOWED)
    assert (destination.host, destination.port, destination.url) == ("api.example.com", 443, "https://api.example.com/mcp/")


def test_the_local_allow_list_permits_exactly_its_addresses_and_never_127_0_0_1() -> None:
    allowed = frozenset({ipaddress.ip_address("127.0.0.2"), ipaddress.ip_address("127.0.0.1")})
    settings = EgressSettings(allowed_domains=ALLOWED, local_allow_addresses=allowed)
    assert run("https://api.example.com/", dns("127.0.0.2"), settings) == ["127.0.0.2"]
    for refused_address, reason in (("127.0.0.3", "address_loopback"), ("127.0.0.1", "address_loopback"),
                                    ("::ffff:127.0.0.1", "address_loopback"), ("10.0.0.1", "address_private")):
        with pytest.raises(Refused) as refused:
            run("https://api.example.com/", dns("127.0.0.2", refused_address), settings)
        assert refused.value.reason == reason, refused_address


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "0.0.0.0", "169.254.169.254", "::ffff:127.0.0.1", "fd00:ec2::254"])
def test_never_allowed(address: str) -> None:
    assert addresses.never_allowed(addresses.parse(address))


def test_is_global_alone_would_have_let_these_through() -> None:
    # Why the table exists: on this Python some wrapped or special forms count as global.
    # Why the table exists: on Python 3.12 (the Lambda runtime) these wrap loopback or metadata addresses, or
    # are IETF protocol assignments, and still count as global.
    forms = ("64:ff9b::7f00:1", "2002:7f00:1::1", "64:ff9b::a9fe:a9fe", "192.0.0.9")
    leaky = [a for a in forms if ipaddress.ip_address(a).is_global]
    assert leaky, "this Python's is_global already refuses these forms: the comment above is out of date"
    assert all(addresses.refusal_reason(addresses.parse(a)) for a in forms)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("", ()), ("example.com", ("example.com",)), (" Example.com , dify.ai,example.com,", ("example.com", "dify.ai"))],
)
def test_allowed_domains_parse(raw: str, expected: tuple[str, ...]) -> None:
    assert parse_allowed_domains(raw) == expected


@pytest.mark.parametrize("raw", ["*.example.com", "1.2.3.4", "bücher.de", "xn--bcher-kva.de", "a_b.com", ".example.com"])
def test_allowed_domains_refuse_what_no_host_could_match(raw: str) -> None:
    with pytest.raises(ValueError, match="SKILLS_HOSTED_ALLOWED_DOMAINS"):
        parse_allowed_domains(raw)
